/// Rewrites the zstd-style spellings that swift-argument-parser cannot parse
/// into ones it can, before parsing:
///
/// - `-1` … `-22` → `--level N`
/// - `--fast` alone → `--fast=1` (an optional value)
/// - `-T4`, `-M64MiB`, `-oFILE` → `-T 4`, `-M 64MiB`, `-o FILE`
/// - `-c` and `-o` both given: the last one wins, as in zstd, signalled to
///   the command with the hidden `--stdout-wins` flag.
///
/// Everything after `--` is left alone (file names).
enum ArgumentNormalizer {
    static func normalize(_ arguments: [String]) -> [String] {
        var result: [String] = []
        var lastStdout = -1
        var lastOutput = -1
        var index = 0
        var literal = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if literal || argument == "-" || !argument.hasPrefix("-") {
                result.append(argument)
                continue
            }
            if argument == "--" {
                literal = true
                result.append(argument)
                continue
            }
            if argument == "--fast" {
                result.append("--fast=1")
                continue
            }
            if argument == "--stdout" { lastStdout = index }
            if argument == "-o" || argument == "--output" || argument.hasPrefix("--output=") { lastOutput = index }
            let short = argument.dropFirst()
            if !argument.hasPrefix("--"), !short.isEmpty {
                if short.allSatisfy(\.isNumber) {
                    result.append(contentsOf: ["--level", String(short)])
                    continue
                }
                if let flag = short.first, "TMo".contains(flag), short.count > 1 {
                    if flag == "o" { lastOutput = index }
                    result.append(contentsOf: ["-\(flag)", String(short.dropFirst())])
                    continue
                }
                // A cluster such as -dc or -kf: note where -c is; a trailing
                // -o takes the next argument.
                if short.allSatisfy(\.isLetter) {
                    if short.contains("c") { lastStdout = index }
                    if short.last == "o" { lastOutput = index }
                    // Levels glued to flags (-d19 is not zstd syntax; -19 is
                    // handled above), so nothing more to do.
                }
            }
            result.append(argument)
        }
        if lastStdout > lastOutput && lastOutput >= 0 {
            result.insert("--stdout-wins", at: 0)
        }
        return result
    }
}
