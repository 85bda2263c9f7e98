import Glibc
import WeirCLI

/// How the command reports: whether the progress line is shown, and the
/// reporter for the run (see ``RunReporter``).
extension RunSettings {
    /// `--progress` shows the line, `--no-progress` hides it; otherwise -q
    /// hides it, and it is shown when stderr is a terminal, unless data goes
    /// to standard output on that terminal too (decompressing to the screen).
    func showsProgress(_ inputs: [String]) -> Bool {
        if let progress = reporting.progress { return progress }
        if reporting.quiet > 0 || !stderrIsConsole { return false }
        return !(inputs.contains(where: writesToStandardOutput)
                 && FileStatTrace.check("UTIL_isConsole(1)") { isatty(STDOUT_FILENO) == 1 })
    }

    /// Whether stderr is taken for a terminal: it is one, or
    /// `--fake-stderr-is-console` says so (zstd's test hook, for scripts
    /// that check what a terminal would show).
    var stderrIsConsole: Bool {
        FileStatTrace.check("UTIL_isConsole(2)") { reporting.fakeStderrIsConsole || StandardError.isTerminal }
    }

    /// Whether a summary line follows each input (and a total several):
    /// not with -q; with -v; otherwise when stderr is a terminal, or when
    /// results go to files. A pipeline in a script (`tar -I weir`, stderr
    /// into a log) stays silent, as zstd does. An explicit `--progress`
    /// shows them even with -q, as zstd ends its progress with one.
    func showsSummaries(_ inputs: [String]) -> Bool {
        if reporting.quiet > 0 { return reporting.progress == true }
        return reporting.verbose > 0 || stderrIsConsole || !inputs.allSatisfy(writesToStandardOutput)
    }

    /// What is done to every input.
    var operationKind: OperationKind {
        switch operation {
        case .test: .test
        case .decompress: .decompress
        case .compress, .list, .index, .train, .trainCover, .trainFastCover, .trainLegacy, .benchmark: .compress
        }
    }

    /// The reporter of a run of `inputs` inputs, after `skipped` left out.
    func makeReporter(console: Console, inputs: Int, skipped: [String] = []) -> RunReporter {
        let compression = operationKind == .compress
            ? compressionOptions(level: resolvedLevel(console: nil))
            : nil
        return RunReporter(console: console, format: reporting.json ? .json : .human, operation: operationKind,
                           inputs: inputs, skipped: skipped, sizeHint: compressionSettings.sizeHint,
                           compression: compression)
    }
}
