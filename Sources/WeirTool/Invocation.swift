import Glibc
import WeirCLI

/// How `weir` was called, turned into the arguments the parser sees: the
/// flags the program name stands for (``ProgramAlias``), the defaults from
/// the environment (``EnvironmentDefaults``), then the command line's own
/// arguments, normalized (``ArgumentNormalizer``), which override both.
struct Invocation {
    /// The arguments to parse.
    let arguments: [String]
    /// What the parser cannot read, for the parsed command.
    let facts: CommandLineFacts
    /// The defaults read from the environment, with their warnings.
    let environment: EnvironmentDefaults

    /// - Parameters:
    ///   - commandLine: `argv`, program name first.
    ///   - environment: the process environment.
    init(commandLine: [String], environment: [String: String]) {
        let program = commandLine.first ?? "weir"
        let given = ProgramAlias.flags(forProgram: program)
            + ProgramAlias.arguments(Array(commandLine.dropFirst()), forProgram: program)
        let (normalized, facts) = ArgumentNormalizer.normalize(given)
        let defaults = EnvironmentDefaults(environment: environment, zstdNames: ProgramAlias.isZstdName(program))
        self.environment = defaults
        self.facts = facts
        arguments = defaults.arguments(before: normalized) + normalized
    }

    /// The variables ``EnvironmentDefaults`` reads, through `getenv`:
    /// `ProcessInfo`'s whole environment would bring FoundationEssentials'
    /// start-up into every run (docs/design.md, "Start-up").
    static func environment() -> [String: String] {
        var found: [String: String] = [:]
        for name in EnvironmentDefaults.variables {
            if let value = getenv(name) { found[name] = String(cString: value) }
        }
        return found
    }

    /// Whether the command line is `-V` or `--version` alone, read from
    /// `argv` itself, with no variable set that could add a warning: then
    /// the version is printed before anything else is set up.
    static var asksVersionAlone: Bool {
        guard CommandLine.argc == 2, let argument = CommandLine.unsafeArgv[1],
              strcmp(argument, "--version") == 0 || strcmp(argument, "-V") == 0 else { return false }
        return EnvironmentDefaults.variables.allSatisfy { getenv($0) == nil }
    }

    /// Prints the warnings about invalid environment variables (hidden by -qq).
    func reportWarnings(quietness: Int) {
        let console = Console(quietness: quietness, verbosity: 0)
        for warning in environment.warnings { console.warning(warning) }
    }
}
