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
        let given = ProgramAlias.flags(forProgram: program) + commandLine.dropFirst()
        let (normalized, facts) = ArgumentNormalizer.normalize(given)
        let defaults = EnvironmentDefaults(environment: environment, zstdNames: ProgramAlias.isZstdName(program))
        self.environment = defaults
        self.facts = facts
        arguments = defaults.arguments(before: normalized) + normalized
    }

    /// Prints the warnings about invalid environment variables (hidden by -qq).
    func reportWarnings(quietness: Int) {
        let console = Console(quietness: quietness, verbosity: 0)
        for warning in environment.warnings { console.warning(warning) }
    }
}
