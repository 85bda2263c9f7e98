import Testing
import WeirCLI

/// zstd's spellings rewritten into the parser's, argument list to argument list.
@Suite("argument normalizer")
struct ArgumentNormalizerTests {
    func normalize(_ line: String) -> String {
        ArgumentNormalizer.normalize(line.split(separator: " ").map(String.init)).arguments.joined(separator: " ")
    }

    func facts(_ line: String) -> CommandLineFacts {
        ArgumentNormalizer.normalize(line.split(separator: " ").map(String.init)).facts
    }

    @Test("a short cluster: letters are flags, a run of digits is a level",
          arguments: [("-19", "--level 19"), ("-c19", "-c --level 19"), ("-v6", "-v --level 6"),
                      ("-7f", "--level 7 -f"), ("-d6", "-d --level 6"), ("-dc19", "-d -c --level 19"),
                      ("-kf", "-k -f"), ("-3v2q", "--level 3 -v --level 2 -q"), ("-lv", "-l -v"), ("-qh", "-q -h")])
    func clusters(given: String, expected: String) {
        #expect(normalize(given + " in") == expected + " in")
    }

    @Test("the benchmark's -e# and -i# take the digits after them, and -d with -b decodes only, in either order",
          arguments: [("-b1e10i0 in", "-b --level 1 -e 10 -i 0 in"), ("-i0b0e3 in", "-i 0 -b --level 0 -e 3 in"),
                      ("-bi0 --fast in", "-b -i 0 --fast=1 in"), ("-rqi0b1e2 in", "-r -q -i 0 -b --level 1 -e 2 in"),
                      ("-b -d -i0 in", "-b -i 0 in"), ("-d -b in", "-d -b in"),
                      ("-bde in", "-b -e 0 in"), ("-b -z -d in", "-b -z -d in"),
                      ("-dc in", "-d -c in"), ("-b --decompress in", "-b --decompress in")])
    func benchmark(given: String, expected: String) {
        #expect(normalize(given) == expected)
        let decodes = ["-b -d -i0 in", "-d -b in", "-bde in", "-b -z -d in"].contains(given)
        #expect(facts(given).benchmarkDecodes == decodes, "\(given)")
    }

    @Test("-T, -M and -o take the rest of the cluster, or the next argument",
          arguments: [("-19T2 in", "--level 19 -T 2 in"), ("-qT2 in", "-q -T 2 in"), ("-T 4 in", "-T 4 in"),
                      ("-dM64MiB in", "-d -M 64MiB in"), ("-oout.zst in", "-o out.zst in"), ("-o=out in", "-o out in"),
                      ("-co out in", "-o out in"), ("-o -3 in", "-o -3 in"), ("-T2q in", "-T 2q in"),
                      ("-T-1 in", "--threads=-1 in"), ("-o-x in", "--output=-x in"), ("-o- in", "-o - in"),
                      ("-o - in", "-o - in"), ("-oc in", "-o c in")])
    func values(given: String, expected: String) {
        #expect(normalize(given) == expected)
    }

    @Test("--fast alone is --fast=1; long options pass; - and everything after -- are left alone")
    func literal() {
        #expect(normalize("--fast in") == "--fast=1 in")
        #expect(normalize("--fast=4 --threads 3 --output=x in") == "--fast=4 --threads 3 --output=x in")
        #expect(normalize("-d - -- -19 -kf --rm --fast") == "-d - -- -19 -kf --rm --fast")
        #expect(normalize("in --") == "in --")
    }

    @Test("--long alone is --long=27 (zstd's default window); -D takes its dictionary as -o takes its file")
    func dictionaryAndLong() {
        #expect(normalize("--long in") == "--long=27 in")
        #expect(normalize("--long=20 -d in") == "--long=20 -d in")
        #expect(normalize("-Ddict in") == "-D dict in")
        #expect(normalize("-dD dict in") == "-d -D dict in")
        #expect(normalize("-D-x in") == "--dictionary=-x in")
        #expect(normalize("-- --long") == "-- --long")
    }

    @Test("-B takes the chunk size as zstd's -B# takes the job size: glued, after other letters, or apart")
    func jobSize() {
        #expect(normalize("-B32M in") == "-B 32M in")
        #expect(normalize("-qB4M in") == "-q -B 4M in")
        #expect(normalize("-B 4M in") == "-B 4M in")
    }

    @Test("--train-cover=, --train-fastcover=, --train-legacy=: the flag for the parser, its list in the facts")
    func trainingLists() {
        #expect(normalize("--train-cover=k=48,d=8 in") == "--train-cover in")
        #expect(facts("--train-cover=k=48,d=8 in") == CommandLineFacts(coverLists: ["k=48,d=8"]))
        #expect(normalize("--train-fastcover=shrink,steps=1 in") == "--train-fastcover in")
        #expect(facts("--train-fastcover=shrink,steps=1 in") == CommandLineFacts(fastCoverLists: ["shrink,steps=1"]))
        #expect(facts("--train-legacy=s=8 in") == CommandLineFacts(legacyLists: ["s=8"]))
        // Alone: cover and fastCover start from zeros, as zstd's do; legacy keeps its selectivity.
        #expect(facts("--train-cover in") == CommandLineFacts(coverLists: ["k=0"]))
        #expect(facts("--train-fastcover in") == CommandLineFacts(fastCoverLists: ["k=0"]))
        #expect(normalize("--train-legacy in") == "--train-legacy in")
        #expect(facts("--train-legacy in") == CommandLineFacts())
        // An empty list is kept, for the command to refuse, and so is a list starting with -.
        #expect(facts("--train-cover= in") == CommandLineFacts(coverLists: [""]))
        #expect(facts("--train-cover=-1 in") == CommandLineFacts(coverLists: ["-1"]))
        // Not one of them: the parser's to refuse.
        #expect(normalize("--train-coverage in") == "--train-coverage in")
        #expect(normalize("-- --train-cover=k=1") == "-- --train-cover=k=1")
    }

    @Test("--adapt=LIST: the flag for the parser, each list in the facts, in order; --adapt alone adds none")
    func adaptLists() {
        #expect(normalize("--adapt=min=1,max=5 in") == "--adapt in")
        var expected = CommandLineFacts()
        expected.adaptLists = ["min=1,max=5", "max=9"]
        #expect(facts("--adapt=min=1,max=5 --adapt=max=9 in") == expected)
        #expect(normalize("--adapt in") == "--adapt in")
        #expect(facts("--adapt in") == CommandLineFacts())
        expected.adaptLists = [""]
        #expect(facts("--adapt= in") == expected, "kept for the command to refuse, as zstd")
        #expect(normalize("--adaptive in") == "--adaptive in")
    }

    @Test("--progress=json: --progress for the parser, the form in the facts; other values left to the parser")
    func progressJSON() {
        #expect(normalize("--progress=json in") == "--progress in")
        var expected = CommandLineFacts()
        expected.progressJSON = true
        #expect(facts("--progress=json --no-progress in") == expected)
        #expect(facts("--progress in") == CommandLineFacts())
        #expect(normalize("--progress=yaml in") == "--progress=yaml in")
        #expect(normalize("-- --progress=json") == "-- --progress=json")
    }

    @Test("-sN is the legacy builder's selectivity, ordered with --train-legacy=s=N; a lone -s takes the next argument")
    func selectivity() {
        #expect(normalize("-s5 in") == "in" && facts("-s5 in") == CommandLineFacts(legacyLists: ["s=5"]))
        #expect(normalize("-qs7 in") == "-q in" && facts("-qs7 in") == CommandLineFacts(legacyLists: ["s=7"]))
        #expect(normalize("-s 9 in") == "in" && facts("-s 9 in") == CommandLineFacts(legacyLists: ["s=9"]))
        #expect(normalize("--train-legacy=s=3 -s5 in") == "--train-legacy in")
        #expect(facts("--train-legacy=s=3 -s5 in") == CommandLineFacts(legacyLists: ["s=3", "s=5"]))
    }

    @Test("--train after a --train-* flag is that flag: zstd's --train keeps the builder chosen before")
    func trainKeepsBuilder() {
        #expect(normalize("--train in") == "--train in")
        #expect(normalize("--train-cover=k=50,d=8 -d --train in") == "--train-cover -d --train-cover in")
        #expect(normalize("--train-legacy --train-fastcover=k=9,d=8 --train in")
                == "--train-legacy --train-fastcover --train-fastcover in")
        #expect(normalize("--train -z in") == "--train -z in")
    }

    @Test("a character that is not a letter leaves the argument to the parser, which refuses it")
    func notALetter() {
        #expect(normalize("-d- in") == "-d -d- in")
        #expect(normalize("-k% in") == "-k -k% in")
    }

    @Test("-c and -o: the last one wins, the other is taken out",
          arguments: [("-c -o x in", "-o x in"), ("-o x -c in", "-c in"), ("--output=x --stdout in", "--stdout in"),
                      ("--output x -c in", "-c in"), ("-c --output x in", "--output x in"),
                      ("-ox -dc in", "-d -c in"), ("-co x in", "-o x in"), ("-c in", "-c in"), ("-o x in", "-o x in"),
                      ("-o x -- -c", "-o x -- -c"), ("-o-x -c in", "-c in"), ("-c -o=y -c -o z in", "-o y -o z in"),
                      ("-c -o -3 in", "-o -3 in")])
    func stdoutOrOutput(given: String, expected: String) {
        #expect(normalize(given) == expected)
    }

    @Test("--rm and -k/--keep: the last one wins; --rm is moved first when it does",
          arguments: [("--rm in", "--rm in"), ("--rm -k in", "-k in"), ("-k --rm in", "--rm -k in"),
                      ("--rm -kf in", "-k -f in"), ("-fk --rm in", "--rm -f -k in"), ("--rm --keep in", "--keep in"),
                      ("--keep --rm in", "--rm --keep in"), ("-d --rm -3k in", "-d --level 3 -k in"),
                      ("--rm -k --rm in", "--rm -k in"), ("-k -- --rm", "-k -- --rm")])
    func keepOrRemove(given: String, expected: String) {
        #expect(normalize(given) == expected)
    }

    @Test("--single-thread and -T/--threads: the last one wins; --single-thread is moved first when it does",
          arguments: [("--single-thread in", "--single-thread in"), ("--single-thread -T2 in", "-T 2 in"),
                      ("-T2 --single-thread in", "--single-thread -T 2 in"),
                      ("--single-thread --threads=3 in", "--threads=3 in"),
                      ("-19T2 --single-thread in", "--single-thread --level 19 -T 2 in"),
                      ("--single-thread -qT0 --single-thread in", "--single-thread -q -T 0 in"),
                      ("-T2 -- --single-thread", "-T 2 -- --single-thread")])
    func singleThread(given: String, expected: String) {
        #expect(normalize(given) == expected)
    }

    @Test("gzip's -n is accepted and does nothing, as zstd")
    func noName() {
        #expect(normalize("-n in") == "in")
        #expect(normalize("-kn9 in") == "-k --level 9 in")
        #expect(normalize("-- -n") == "-- -n")
    }

    @Test("- is standard input, but after -- the file named -, as zstd reads it")
    func dashAfterDoubleDash() {
        #expect(normalize("-q - in") == "-q - in")
        #expect(normalize("-o - in") == "-o - in")
        #expect(normalize("-q -- -") == "-q -- ./-")
        #expect(normalize("-d -- - -o -") == "-d -- ./- -o ./-")
    }

    @Test("-C is a flag like the others in a cluster")
    func checkInCluster() {
        #expect(normalize("-qC in") == "-q -C in")
        #expect(normalize("-C19 in") == "-C --level 19 in")
    }

    @Test("both at once")
    func both() {
        #expect(normalize("-o x -k --rm -c in") == "--rm -k -c in")
    }
}
