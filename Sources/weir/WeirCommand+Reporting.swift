import Weir
import WeirCLI
#if canImport(Glibc)
import Glibc
#endif

/// How the command reports: whether the progress line is shown, and the
/// reporter for the run (see ``RunReporter``).
extension WeirCommand {
    /// `--progress` shows the line, `--no-progress` hides it; otherwise -q
    /// hides it, and it is shown when stderr is a terminal, unless data goes
    /// to standard output on that terminal too (decompressing to the screen).
    var showsProgress: Bool {
        if let progress { return progress }
        if quiet > 0 || !StandardError.isTerminal { return false }
        return !(inputs.contains(where: writesToStandardOutput) && isatty(STDOUT_FILENO) == 1)
    }

    /// What is done to every input.
    var operationKind: OperationKind {
        test ? .test : decompress ? .decompress : .compress
    }

    /// The reporter of a run of `inputs` inputs.
    func makeReporter(console: Console, inputs: Int) -> RunReporter {
        let compression = operationKind == .compress
            ? CompressionOptions(level: resolvedLevel(console: nil), threads: threads, chunkSize: chunkSize.bytes)
            : nil
        return RunReporter(console: console, format: json ? .json : .human, operation: operationKind,
                           inputs: inputs, sizeHint: sizeHint?.bytes, compression: compression)
    }
}
