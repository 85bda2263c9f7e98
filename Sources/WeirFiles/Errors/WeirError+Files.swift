import WeirSystem

/// The codes of the files a run reads and writes: the output's name and
/// whether it may be written, the terminal, file lists.
extension WeirError.Kind {
    /// The output file exists and `force` was not given.
    public static let outputExists = Self("outputExists")
    /// The output path names the input file.
    public static let sameFile = Self("sameFile")
    /// Decompression cannot derive an output name from this suffix.
    public static let unknownSuffix = Self("unknownSuffix")
    /// Refused to read or write compressed data on a terminal.
    public static let terminal = Self("terminal")
    /// No output name can be derived from this input's path (a `..` part
    /// under `--output-dir-mirror`), or a file list cannot be used.
    public static let unusablePath = Self("unusablePath")
    /// Not a failure: the output exists and is already the finished
    /// compression of this input, so it is skipped.
    public static let alreadyCompressed = Self("alreadyCompressed")
}

/// The factories of the files' codes, worded as ``WeirError``'s others.
extension WeirError {
    // MARK: outputExists

    /// An output file that exists, without `-f`.
    package static func outputExists(path: String) -> WeirError {
        WeirError(.outputExists, path: path, operation: .create, lead: nil,
                  detail: "already exists", hint: .forceOverwrite)
    }

    // MARK: alreadyCompressed

    /// An input whose existing `output` is already its finished compression
    /// (``FinishedOutput``): skipped, and, when `keepsInput` (it was to be
    /// removed), kept, since those checks do not decode the whole output.
    package static func alreadyCompressed(path: String, output: String, keepsInput: Bool) -> WeirError {
        WeirError(.alreadyCompressed, path: path, operation: .create, lead: nil,
                  detail: "already compressed to \(FileName.displayed(output)), skipped"
                      + (keepsInput ? " (and kept)" : ""))
    }

    // MARK: sameFile

    /// An output that is the input `path`; `output` names it when the
    /// message is about the input.
    package static func sameFile(path: String, output: String? = nil) -> WeirError {
        WeirError(
            .sameFile, path: path, operation: .create, lead: nil,
            detail: output.map { "output \(FileName.displayed($0)) is the input file" } ?? "output is the input file")
    }

    /// An input that is also the dictionary (`-D`), which zstd refuses too.
    package static func inputIsDictionary(path: String) -> WeirError {
        WeirError(.sameFile, path: path, operation: .open, lead: nil,
                  detail: "cannot use it as an input file and dictionary")
    }

    // MARK: unknownSuffix

    /// An input to decompress whose suffix gives no output name.
    package static func unknownSuffix(path: String) -> WeirError {
        WeirError(
            .unknownSuffix, path: path, operation: .nameOutput, lead: nil,
            detail: "unknown suffix (expected .zst, .zstd, .tzst, .gz, .tgz, .xz, .txz, .lzma, .lz4 or .tlz4)",
            hint: .nameOutput)
    }

    // MARK: terminal

    /// Standard input on a terminal, without `-f`.
    package static func terminalInput(path: String, compressing: Bool) -> WeirError {
        WeirError(
            .terminal, path: path, operation: .read, lead: nil,
            detail: compressing ? "stdin is a terminal, aborting" : "will not read compressed data from a terminal",
            hint: .forceRead)
    }

    /// Compressed output to a terminal, without `-c` or `-f`.
    package static func terminalOutput() -> WeirError {
        WeirError(.terminal, path: "(stdout)", operation: .write, lead: nil,
                  detail: "stdout is a terminal, aborting: will not write compressed data to it",
                  hint: .forceTerminalOutput)
    }

    // MARK: unusablePath

    /// An input whose path, under `--output-dir-mirror ROOT`, has a `..` part.
    package static func outsideMirror(path: String, root: String) -> WeirError {
        WeirError(.unusablePath, path: path, operation: .nameOutput, lead: nil,
                  detail: "cannot be mirrored into \(FileName.displayed(root)) (a part of its path is ..)")
    }

    /// A file list (`--filelist`) that cannot be used: the detail says why.
    package static func unusableFileList(path: String, _ detail: String) -> WeirError {
        WeirError(.unusablePath, path: path, operation: .readFileList, lead: nil, detail: detail)
    }
}
