/// Rewrites zstd's command-line spellings, which swift-argument-parser
/// cannot parse, into ones it can, before parsing.
///
/// A short-option cluster is read as zstd reads it, left to right: a letter
/// is a flag, a run of digits is a level, and `-T`, `-M`, `-o`, `-D` and `-B` take the
/// rest of the cluster as their value, or the next argument when the cluster
/// ends with them (`-o=FILE` also works, as in zstd):
///
/// - `-19T2` → `--level 19 -T 2`; `-dc19` → `-d -c --level 19`; `-7f` → `--level 7 -f`
/// - `-oFILE`, `-M64MiB` → `-o FILE`, `-M 64MiB`
///
/// Other spellings:
///
/// - `--fast` alone → `--fast=1`, `--long` alone → `--long=27` (optional values);
/// - `-c`/`--stdout` and `-o` both given: the last one wins, as in zstd,
///   signalled with the hidden flag `--stdout-wins`;
/// - `--rm` and `-k`/`--keep` both given: the last one wins, as in zstd:
///   every `--rm` is taken out, and one is put first when it wins;
/// - `--single-thread` and `-T`/`--threads` both given: the last one wins,
///   the same way.
///
/// Everything after `--` is left alone (file names), and so is `-`.
package enum ArgumentNormalizer {
    /// The short options that take a value, and their long names.
    static let valueOptions: [Character: String] = ["T": "--threads", "M": "--memory", "o": "--output", "D": "--dictionary",
                                                    "B": "--chunk-size"]

    /// The arguments for the parser, from the command line's (program name left out).
    package static func normalize(_ arguments: [String]) -> [String] {
        var result: [String] = []
        // Where the flags that override each other were last seen, counted
        // in options (a cluster is one).
        var seen = 0
        var lastStdout: Int?, lastOutput: Int?, lastKeep: Int?, lastRemove: Int?, lastThreads: Int?, lastSingle: Int?
        var index = 0
        var literal = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if literal || argument == "-" || !argument.hasPrefix("-") {
                result.append(argument)
                continue
            }
            seen += 1
            if argument.hasPrefix("--") {
                switch argument.prefix(while: { $0 != "=" }) {
                case "--": literal = true
                case "--fast" where argument == "--fast":
                    result.append("--fast=1")
                    continue
                case "--long" where argument == "--long":
                    result.append("--long=27")
                    continue
                case "--stdout": lastStdout = seen
                case "--output": lastOutput = seen
                case "--keep": lastKeep = seen
                case "--rm" where argument == "--rm":
                    lastRemove = seen
                    continue
                case "--threads": lastThreads = seen
                case "--single-thread" where argument == "--single-thread":
                    lastSingle = seen
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
                switch letter {
                case "c": lastStdout = seen
                case "o": lastOutput = seen
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
                result += value.hasPrefix("-") && value != "-" ? ["\(long)=\(value)"] : ["-\(letter)", String(value)]
                break
            }
        }
        if let lastSingle, lastSingle > lastThreads ?? 0 {
            result.insert("--single-thread", at: 0)
        }
        if let lastRemove, lastRemove > lastKeep ?? 0 {
            result.insert("--rm", at: 0)
        }
        if let lastStdout, let lastOutput, lastStdout > lastOutput {
            result.insert("--stdout-wins", at: 0)
        }
        return result
    }
}
