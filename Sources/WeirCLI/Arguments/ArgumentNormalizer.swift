import Weir

/// Rewrites zstd's command-line spellings, which swift-argument-parser
/// cannot parse, into ones it can, before parsing.
///
/// A short-option cluster is read as zstd reads it, left to right: a letter
/// is a flag, a run of digits is a level, and `-T`, `-M`, `-o`, `-D` and `-B` take the
/// rest of the cluster as their value, or the next argument when the cluster
/// ends with them (`-o=FILE` also works, as in zstd):
///
/// - `-19T2` → `--level 19 -T 2`; `-dc19` → `-d -c --level 19`; `-7f` → `--level 7 -f`
///   (`--level` is the flag's long name, which the parser reads)
/// - `-oFILE`, `-M64MiB` → `-o FILE`, `-M 64MiB`
///
/// Other spellings:
///
/// - `--fast` alone → `--fast=1`, `--long` alone → `--long=27`, the engine's
///   `CompressionOptions.defaultLongWindowLog` (optional values);
/// - `--adapt=LIST` → `--adapt`, LIST kept in the facts (``CommandLineFacts/adaptLists``);
/// - `--progress=json` → `--progress`, the JSON form kept in the facts
///   (``CommandLineFacts/progressJSON``);
/// - `-c`/`--stdout` and `-o` both given: the last one wins, as in zstd:
///   the other is taken out;
/// - `--rm` and `-k`/`--keep` both given: the last one wins, as in zstd:
///   every `--rm` is taken out, and one is put first when it wins;
/// - `--single-thread` and `-T`/`--threads` both given: the last one wins,
///   the same way.
///
/// What the parser cannot read at all goes into ``CommandLineFacts``, which
/// the command takes beside the parsed flags. Dictionary training, whose
/// flags take optional values:
///
/// - `--train-cover=LIST` → `--train-cover`, LIST kept in the facts, and the
///   same for `--train-fastcover=` and `--train-legacy=`: the flag is the
///   operation (of `-z`, `-d`, `-t`, `-l` and the `--train` ones, the last
///   wins), and every list is kept, in order, for the command to check (as
///   zstd checks each one it reads) and take the last of;
/// - `--train-cover` and `--train-fastcover` alone set every parameter to 0,
///   as in zstd: the list `k=0` does (a list starts from zeros);
///   `--train-legacy` alone keeps the selectivity given before;
/// - `-sN` (zstd's selectivity) → the legacy list `s=N`, so that it and
///   `--train-legacy=s=N` override each other in order; a lone `-s` takes
///   the next argument;
/// - `--train` after one of them → that one (alone): zstd's `--train` keeps
///   the builder and parameters chosen before.
///
/// The benchmark (`-b`), as zstd reads its flags:
///
/// - `-e#` and `-i#` take the digits that follow in the cluster (none: 0),
///   and the cluster goes on after them: `-b1e10i0` → `-b --level 1 -e 10 -i 0`;
/// - with `-b`, a short `-d` means decoding the files only (a fact),
///   whichever came first, and after `-b` it is that alone, not the
///   decompress operation (`-b -d` benchmarks decoding; `-d -b` too).
///
/// gzip's `-n` in a cluster is taken out: zstd accepts it and stores no
/// name anyway. Everything after `--` is left alone (file names), and so
/// is `-` (standard input) before it; after it, `-` is the file named `-`,
/// as zstd reads it, and passed on as `./-`.
package enum ArgumentNormalizer {
    /// The short options that take a value, and their long names.
    static let valueOptions: [Character: String] = [
        "T": "--threads", "M": "--memory", "o": "--output", "D": "--dictionary",
        "B": "--chunk-size",
    ]
    /// The long names of the operations (of which the last one wins).
    static let operationNames: Set<Substring> = ["--compress", "--decompress", "--uncompress", "--test", "--list",
                                                 "--train", "--train-cover", "--train-fastcover", "--train-legacy",
                                                 "--bench"]
    /// The training flags that take an optional `=LIST`.
    static let trainingFlags: Set<Substring> = ["--train-cover", "--train-fastcover", "--train-legacy"]

    /// The arguments for the parser, from the command line's (program name
    /// left out), and what the parser cannot read.
    package static func normalize(_ arguments: [String]) -> (arguments: [String], facts: CommandLineFacts) {
        var result: [String] = []
        var facts = CommandLineFacts()
        // Where the flags that override each other were last seen, counted
        // in options (a cluster is one).
        var seen = 0
        var lastStdout: Int?, lastOutput: Int?, lastKeep: Int?, lastRemove: Int?, lastThreads: Int?, lastSingle: Int?
        // The parser's arguments of -c/--stdout and of -o/--output (with
        // their values), for taking out the ones that lose.
        var stdoutAt: [Int] = [], outputAt: [Int] = []
        // The next argument is the value of the -o or --output just seen.
        var outputValueNext = false
        // The last of --train-cover, --train-fastcover, --train-legacy.
        var lastBuilder: String?
        // Whether -b is the last operation seen, and whether a short -d was.
        var benchmarking = false, benchmarkSeen = false, decodeSeen = false
        var index = 0
        var literal = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if literal || argument == "-" || !argument.hasPrefix("-") || outputValueNext {
                if outputValueNext { outputAt.append(result.count) }
                outputValueNext = false
                // After `--`, `-` is the file of that name, as zstd reads it.
                result.append(literal && argument == "-" ? "./-" : argument)
                continue
            }
            seen += 1
            if argument.hasPrefix("--") {
                let name = argument.prefix(while: { $0 != "=" })
                if Self.operationNames.contains(name) {
                    benchmarking = name == "--bench"
                    benchmarkSeen = benchmarkSeen || benchmarking
                }
                switch name {
                case "--": literal = true
                case "--fast" where argument == "--fast":
                    result.append("--fast=1")
                    continue
                case "--long" where argument == "--long":
                    result.append("--long=\(CompressionOptions.defaultLongWindowLog)")
                    continue
                case "--stdout":
                    lastStdout = seen
                    stdoutAt.append(result.count)
                case "--output":
                    lastOutput = seen
                    outputAt.append(result.count)
                    outputValueNext = argument == "--output"
                case "--member" where argument == "--member=":
                    // An empty pattern (GNU tar's selects every member): the parser would
                    // take the next argument as the value of an empty one.
                    result += ["--member", ""]
                    continue
                case "--keep": lastKeep = seen
                case "--rm" where argument == "--rm":
                    lastRemove = seen
                    continue
                case "--threads": lastThreads = seen
                case "--single-thread" where argument == "--single-thread":
                    lastSingle = seen
                    continue
                case "--train" where argument == "--train":
                    result.append(lastBuilder ?? argument)
                    continue
                case "--progress" where argument == "--progress=json":
                    // The flag for the parser (on, unless a later --no-progress), the form for the command.
                    facts.progressJSON = true
                    result.append("--progress")
                    continue
                case "--adapt":
                    // zstd's optional value: the flag for the parser, the list for the command.
                    if argument != "--adapt" { facts.adaptLists.append(String(argument.dropFirst("--adapt=".count))) }
                    result.append("--adapt")
                    continue
                case let flag where trainingFlags.contains(flag):
                    lastBuilder = String(flag)
                    result.append(String(flag))
                    keepTrainingList(of: argument, flag: flag, in: &facts)
                    continue
                default: break
                }
                result.append(argument)
                continue
            }
            var rest = argument.dropFirst()
            while let letter = rest.first {
                if letter.isASCII, letter.isNumber {
                    let digits = rest.prefix(while: { $0.isASCII && $0.isNumber })
                    result += ["--level", String(digits)]
                    rest = rest.dropFirst(digits.count)
                    continue
                }
                guard letter.isASCII, letter.isLetter else {
                    // Not a flag: the whole argument goes to the parser,
                    // which refuses it (split off, a `-` here would become
                    // `--`, the end of the options).
                    result.append(argument)
                    break
                }
                rest = rest.dropFirst()
                if "zdtlb".contains(letter) {
                    if letter == "d" {
                        decodeSeen = true
                        if benchmarking { continue }
                    } else {
                        benchmarking = letter == "b"
                        benchmarkSeen = benchmarkSeen || benchmarking
                    }
                }
                if letter == "e" || letter == "i" {
                    let digits = rest.prefix(while: { $0.isASCII && $0.isNumber })
                    result += ["-\(letter)", digits.isEmpty ? "0" : String(digits)]
                    rest = rest.dropFirst(digits.count)
                    continue
                }
                if letter == "s" {
                    // The rest of the cluster, or the next argument.
                    var value = String(rest)
                    if rest.isEmpty, index < arguments.count {
                        value = arguments[index]
                        index += 1
                    }
                    facts.legacyLists.append("s=\(value)")
                    break
                }
                // gzip's `-n` (store no name): nothing to do, as in zstd.
                if letter == "n" { continue }
                switch letter {
                case "c":
                    lastStdout = seen
                    stdoutAt.append(result.count)
                case "o":
                    lastOutput = seen
                    outputAt.append(result.count)
                    outputValueNext = rest.isEmpty
                case "k": lastKeep = seen
                case "T": lastThreads = seen
                default: break
                }
                guard let long = valueOptions[letter], !rest.isEmpty else {
                    result.append("-\(letter)")
                    continue
                }
                let value = letter == "o" && rest.first == "=" ? rest.dropFirst() : rest
                // The parser takes a value that starts with `-` only when
                // attached to a long name.
                if value.hasPrefix("-") && value != "-" {
                    result.append("\(long)=\(value)")
                } else {
                    if letter == "o" { outputAt.append(result.count + 1) }
                    result += ["-\(letter)", String(value)]
                }
                break
            }
        }
        // Of -c and -o, the one given last stays.
        if let lastStdout, let lastOutput {
            for position in (lastStdout > lastOutput ? outputAt : stdoutAt).reversed() { result.remove(at: position) }
        }
        facts.benchmarkDecodes = decodeSeen && benchmarkSeen
        if let lastSingle, lastSingle > lastThreads ?? 0 {
            result.insert("--single-thread", at: 0)
        }
        if let lastRemove, lastRemove > lastKeep ?? 0 {
            result.insert("--rm", at: 0)
        }
        return (result, facts)
    }

    /// Keeps the list of `argument`, which is one of ``trainingFlags``
    /// (`flag`) alone or followed by `=LIST`: none for `--train-legacy`
    /// alone, `k=0` (every parameter 0) for the others alone. An empty list
    /// is kept, for the command to refuse.
    static func keepTrainingList(of argument: String, flag: Substring, in facts: inout CommandLineFacts) {
        let list: String
        if argument.count > flag.count {
            list = String(argument.dropFirst(flag.count + 1))
        } else if flag == "--train-legacy" {
            return
        } else {
            list = "k=0"
        }
        switch flag {
        case "--train-cover": facts.coverLists.append(list)
        case "--train-fastcover": facts.fastCoverLists.append(list)
        default: facts.legacyLists.append(list)
        }
    }
}
