import ArgumentParser
import Glibc
import WeirCLI

/// The settings of a command line that reads part of one compressed file —
/// `-d [-c] [--no-check] --range=LIST FILE` and `-d [-c] [--no-check]
/// --member=PATTERN… FILE` — made without the parser (issue 71, item 5).
///
/// Why: swift-argument-parser finds a command's flags by reflecting on its
/// option groups, and each generic flag type it meets costs the Swift
/// runtime a scan of every protocol conformance of the binary; for weir's
/// hundred flags that is more than a part read's own work. A part read is
/// the command run again and again (a mount's neighbour, a script picking
/// files), so its start counts.
///
/// The grammar is closed and small: the arguments (after ``Invocation``'s
/// aliases, environment defaults and normalisation) must be only `-d` or
/// `--decompress`, `-c` or `--stdout`, `--no-check`, `--range=LIST` (every
/// list valid), `--member=PATTERN`, and one FILE that starts with no `-`,
/// with `--range` or `--member` given but not both, and no fact the
/// normaliser kept. Anything else — a flag more, a value in the next
/// argument, a list that does not parse, an environment default — returns
/// nil, and the parser reads the command line as before, with its messages.
/// The settings are those ``WeirCommand/settings`` makes of the same
/// arguments: every other field at its flag's default, from the one value
/// that holds them (`RunSettings()`). Debug builds (and the
/// test build) parse every shortcut command line too and stop when the two
/// differ, so every command-line test of a part read checks it.
enum PartReadShortcut {
    /// The settings of `arguments` when they are a part read of the grammar
    /// above, else nil.
    static func settings(_ arguments: [String], facts: CommandLineFacts) -> RunSettings? {
        guard facts == CommandLineFacts() else { return nil }
        var decompresses = false, toStdout = false, checks = true
        var ranges: [String] = [], patterns: [String] = [], files: [String] = []
        for argument in arguments {
            switch argument {
            case "-d", "--decompress": decompresses = true
            case "-c", "--stdout": toStdout = true
            case "--no-check": checks = false
            default:
                if argument.hasPrefix("--range=") {
                    let list = String(argument.dropFirst("--range=".count))
                    guard ByteRangeList(list) != nil else { return nil }
                    ranges.append(list)
                } else if argument.hasPrefix("--member=") {
                    patterns.append(String(argument.dropFirst("--member=".count)))
                } else if !argument.isEmpty, !argument.hasPrefix("-"), argument != "help" {
                    files.append(argument)
                } else {
                    return nil
                }
            }
        }
        guard decompresses, files.count == 1, ranges.isEmpty != patterns.isEmpty else { return nil }
        return partRead(files: files, toStdout: toStdout, checks: checks, ranges: ranges, patterns: patterns)
    }

    /// The settings ``WeirCommand/settings`` makes when only these flags are
    /// given: every field at its flag's default (`RunSettings()`, where the
    /// defaults are written), but those the grammar reads.
    private static func partRead(files: [String], toStdout: Bool, checks: Bool, ranges: [String],
                                 patterns: [String]) -> RunSettings {
        var settings = RunSettings()
        settings.operation = .decompress
        settings.inputPolicy.files = files
        settings.outputPolicy.toStdout = toStdout
        settings.outputPolicy.standardOutputRequested = toStdout
        settings.resourceSettings.verifiesChecksums = checks
        settings.decompressionSettings.ranges = ranges
        settings.memberSettings.patterns = patterns
        return settings
    }

    #if WEIR_TEST_HOOKS
    /// Stops the process (status 70) when the parser makes other settings
    /// of `arguments` than the shortcut's `settings`.
    static func checkAgainstParser(_ settings: RunSettings, _ arguments: [String], facts: CommandLineFacts) {
        var parsed: String
        do {
            guard var command = try WeirCommand.parseAsRoot(arguments) as? WeirCommand else {
                parsed = "not the weir command"
                return fail(parsed)
            }
            command.facts = facts
            try command.validateFacts()
            parsed = String(reflecting: command.settings)
        } catch {
            parsed = "a parse error: \(error)"
        }
        let made = String(reflecting: settings)
        if parsed != made { fail("the parser made\n\(parsed)\nthe shortcut made\n\(made)") }
    }

    private static func fail(_ message: String) {
        StandardError.write("weir: PartReadShortcut differs from the parser: \(message)\n")
        Glibc.exit(70)
    }
    #endif
}
