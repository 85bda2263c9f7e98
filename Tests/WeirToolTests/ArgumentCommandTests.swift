import Foundation
import Testing
import Glibc

/// The command line as zstd's users and scripts write it: levels glued to
/// other short flags, the last of `--rm` and `-k` winning, `-o -`, and
/// usage errors ending with status 1.
@Suite("weir command line")
struct ArgumentCommandTests {
    /// The level and threads a run used, from its --json record.
    static func settings(_ arguments: [String], in scratch: Scratch,
                         sourceLocation: SourceLocation = #_sourceLocation) throws -> (level: Int?, threads: Int) {
        let result = try WeirProcess.run(["--json"] + arguments, in: scratch.url)
        #expect(result.status == 0, "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        let line = try #require(result.stderr.split(separator: "\n").first { $0.hasPrefix("{") },
                                "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                                  sourceLocation: sourceLocation)
        return (record["level"] as? Int, try #require(record["threads"] as? Int, sourceLocation: sourceLocation))
    }

    @Test("level digits glued to other short flags, as zstd takes them")
    func gluedLevels() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 200_000)
        let both = try Self.settings(["-19T2", "in", "-o", "a.zst"], in: scratch)
        #expect(both.level == 19 && both.threads == 2)
        #expect(try Self.settings(["-c19", "in"], in: scratch).level == 19)
        let quiet = try Self.settings(["-qT2", "-f", "in", "-o", "a.zst"], in: scratch)
        #expect(quiet.threads == 2)
        #expect(try Self.settings(["-v6", "-f", "in", "-o", "a.zst"], in: scratch).level == 6)
        // -7f: level 7, and -f overwrites the existing output.
        #expect(try Self.settings(["-7f", "in", "-o", "a.zst"], in: scratch).level == 7)
        #expect(try scratch.zstd(["-dc", "a.zst"]).stdout == original)
        // A level beside -d is accepted and has no effect.
        let decoded = try WeirProcess.run(["-d6", "a.zst", "-o", "back"], in: scratch.url)
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(scratch.data("back") == original)
        let cat = try WeirProcess.run(["-dc19", "a.zst"], in: scratch.url)
        #expect(cat.status == 0, "\(cat.stderr)")
        #expect(cat.stdout == original)
        // -v6 is verbose too: its summary has the CPU time.
        let verbose = try WeirProcess.run(["-v6", "-f", "in"], in: scratch.url)
        #expect(verbose.stderr.contains(", cpu "), "\(verbose.stderr)")
        // Values glued to -T, -M and -o, and zstd's -o=FILE.
        #expect(try Self.settings(["-T1", "-oglued.zst", "in"], in: scratch).threads == 1)
        #expect(try scratch.zstd(["-dc", "glued.zst"]).stdout == original)
        #expect(try WeirProcess.run(["-q", "-o=equals.zst", "in"], in: scratch.url).status == 0)
        #expect(scratch.exists("equals.zst"))
        #expect(try WeirProcess.run(["-qdM64MiB", "equals.zst", "-o", "m"], in: scratch.url).status == 0)
        #expect(scratch.data("m") == original)
        // After --, a name that looks like a level is a file.
        scratch.text("-5", size: 1000)
        #expect(try WeirProcess.run(["-q", "--", "-5"], in: scratch.url).status == 0)
        #expect(scratch.exists("-5.zst"))
    }

    @Test("after --, - is the file named -, as zstd 1.5.4 reads it; before it, standard input")
    func dashAfterDoubleDash() throws {
        let scratch = Scratch()
        let file = scratch.text("-", size: 5000, seed: 2)
        let piped = scratch.text("piped", size: 3000, seed: 3)
        let run = try WeirProcess.run(["-q", "--", "-"], in: scratch.url, stdin: "piped")
        #expect(run.status == 0 && run.stdout.isEmpty, "\(run.stderr)")
        #expect(try scratch.zstd(["-dc", "--", "-.zst"]).stdout == file)
        // Back by its name after --, over the file `-` (-f).
        #expect(try WeirProcess.run(["-q", "-d", "-f", "--", "-.zst"], in: scratch.url).status == 0)
        #expect(scratch.data("-") == file)
        // Before --, `-` is standard input.
        #expect(
            try WeirProcess.run(["-q", "-c", "-"], in: scratch.url, stdin: "piped", stdoutPath: "p.zst").status == 0)
        #expect(try scratch.zstd(["-dc", "p.zst"]).stdout == piped)
    }

    @Test("an unknown letter in a cluster is a usage error that names it")
    func unknownLetter() throws {
        let scratch = Scratch()
        scratch.text("in", size: 1000)
        let run = try WeirProcess.run(["-3xk", "in"], in: scratch.url)
        #expect(run.status == 1)
        #expect(run.stderr.contains("Unknown option '-x'"), "\(run.stderr)")
        #expect(!scratch.exists("in.zst"))
    }

    @Test("the last of --rm and -k/--keep wins, inside clusters too",
          arguments: [(["--rm", "-k"], false), (["-k", "--rm"], true), (["--rm", "-kf"], false),
                      (["-fk", "--rm"], true), (["--rm", "--keep"], false), (["--keep", "--rm"], true),
                      (["--rm", "-3k"], false)])
    func keepOrRemove(flags: [String], removes: Bool) throws {
        let scratch = Scratch()
        scratch.text("in", size: 20_000)
        let run = try WeirProcess.run(["-q"] + flags + ["in"], in: scratch.url)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(scratch.exists("in.zst"))
        #expect(scratch.exists("in") == !removes)
    }

    @Test("an alias's flags come first: unweir --rm -k keeps the input")
    func keepAfterAlias() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 20_000)
        #expect(try WeirProcess.run(["-q", "in"], in: scratch.url).status == 0)
        try FileManager.default.removeItem(atPath: scratch.path("in"))
        try FileManager.default.createSymbolicLink(
            atPath: scratch.path("unweir"), withDestinationPath: WeirProcess.binary)
        let kept = try WeirProcess.run(
            ["-q", "--rm", "-k", "in.zst"], in: scratch.url, executable: scratch.path("unweir"))
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(scratch.data("in") == original)
        #expect(scratch.exists("in.zst"))
    }

    @Test("-o - is standard output: no file named -, several inputs concatenate, -c and -o still take turns")
    func outputDash() throws {
        let scratch = Scratch()
        let a = scratch.text("a", size: 100_000, seed: 1)
        let b = scratch.text("b", size: 50_000, seed: 2)
        let one = try WeirProcess.run(["-o", "-", "a"], in: scratch.url, stdoutPath: "one.zst")
        #expect(one.status == 0, "\(one.stderr)")
        #expect(!scratch.exists("-"))
        #expect(try scratch.zstd(["-dc", "one.zst"]).stdout == a)
        let decoded = try WeirProcess.run(["-d", "-o", "-", "one.zst"], in: scratch.url)
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(decoded.stdout == a)
        let glued = try WeirProcess.run(["-do-", "one.zst"], in: scratch.url)
        #expect(glued.stdout == a, "\(glued.stderr)")
        let several = try WeirProcess.run(["--output=-", "a", "b", "--rm"], in: scratch.url, stdoutPath: "ab.zst")
        #expect(several.status == 0, "\(several.stderr)")
        #expect(try scratch.zstd(["-dc", "ab.zst"]).stdout == a + b)
        #expect(scratch.exists("a") && scratch.exists("b"))  // --rm does nothing on standard output
        // A later -o FILE wins over -o -.
        #expect(try WeirProcess.run(["-q", "-o", "-", "-o", "named.zst", "a"], in: scratch.url).status == 0)
        #expect(try scratch.zstd(["-dc", "named.zst"]).stdout == a)
        #expect(!scratch.exists("-"))
    }

    @Test("-o - refuses to write compressed data to a terminal, as stdin → stdout does; decompressed data is written")
    func outputDashOnTerminal() throws {
        let scratch = Scratch()
        scratch.text("a", size: 1000)
        // `script` gives weir a pseudo-terminal as stdout.
        let refused = try WeirProcess.shell("script -qec '$WEIR -o - a; echo status $?' /dev/null", in: scratch.url)
        let screen = String(decoding: refused.stdout, as: UTF8.self)
        #expect(screen.contains("stdout is a terminal"), "\(screen)")
        #expect(screen.contains("status 1"), "\(screen)")
        #expect(!scratch.exists("-"))
        let decompressing = try WeirProcess.shell(
            """
            echo 'plain text for the screen' > t && $WEIR -q t && rm t
            script -qec '$WEIR -qd -o - t.zst; echo status $?' /dev/null
            """, in: scratch.url)
        let shown = String(decoding: decompressing.stdout, as: UTF8.self)
        #expect(shown.contains("plain text for the screen\r\nstatus 0"), "\(shown.debugDescription)")
        #expect(!scratch.exists("-"))
    }

    @Test("of -z, -d, -t and -l, the last one given wins, as in zstd")
    func lastOperationWins() throws {
        let scratch = Scratch()
        let original = scratch.text("a", size: 50_000)
        let compressed = try WeirProcess.run(["-q", "-d", "-z", "a", "-o", "b.zst"], in: scratch.url)
        #expect(compressed.status == 0, "\(compressed.stderr)")
        #expect(try scratch.zstd(["-dc", "b.zst"]).stdout == original)
        let tested = try WeirProcess.run(["-q", "-d", "-t", "b.zst"], in: scratch.url)
        #expect(tested.status == 0, "\(tested.stderr)")
        #expect(!scratch.exists("b"), "-d -t tests: it writes nothing")
        let decompressed = try WeirProcess.run(["-q", "-t", "-d", "b.zst"], in: scratch.url)
        #expect(decompressed.status == 0, "\(decompressed.stderr)")
        #expect(scratch.data("b") == original)
        let listed = try WeirProcess.run(["-t", "-l", "b.zst"], in: scratch.url)
        #expect(
            listed.status == 0 && String(decoding: listed.stdout, as: UTF8.self).contains("Frames"), "\(listed.stderr)")
    }

    @Test(
        "usage errors end with status 1, as in zstd, with the message and the usage on stderr",
        arguments: [["--bogus"], ["-T", "abc"], ["--fast=0"], ["-T", "999"], ["-o"]])
    func usageErrors(arguments: [String]) throws {
        let scratch = Scratch()
        scratch.text("a", size: 1000)
        scratch.text("b", size: 1000)
        let run = try WeirProcess.run(arguments, in: scratch.url)
        #expect(run.status == 1, "\(arguments): \(run.stderr)")
        #expect(run.stderr.hasPrefix("Error: "), "\(arguments): \(run.stderr)")
        #expect(run.stderr.contains("Usage: weir"), "\(arguments): \(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    @Test("--help, -h and --version exit with 0", arguments: [["--help"], ["-h"], ["--version"], ["-V"], ["-qh"]])
    func cleanExits(arguments: [String]) throws {
        let scratch = Scratch()
        let run = try WeirProcess.run(arguments, in: scratch.url)
        #expect(run.status == 0, "\(arguments): \(run.stderr)")
        #expect(!run.stdout.isEmpty)
    }
}