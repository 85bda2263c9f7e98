import Glibc

/// The factories: the one place where errors are made and their texts
/// written, grouped by ``WeirError/Kind``. A call site gives the facts (the
/// file, the operation, numbers, a detail that only it knows) and the
/// factory puts the words around them: the lead (`corrupt data: `), the
/// frame and offset (from the fields, where the kind's messages put them),
/// the fixed texts. Internal, except those the command line also needs.
extension WeirError {
    // MARK: system

    /// An error for a failed system call, with the reason taken from `strerror`:
    /// `OPERATION failed: TEXT`.
    package static func system(_ code: Int32, path: String, operation: Operation) -> WeirError {
        WeirError(.system(errno: code), path: path, operation: operation, lead: .failed(operation),
                  detail: String(cString: strerror(code)))
    }

    /// An output that has its name, whose folder's `fsync` then failed
    /// (`code`): whether the name survives a power cut is not known, so its
    /// input was kept (`--rm`). Names the output, not the folder.
    package static func folderSyncFailed(_ code: Int32, output: String, folder: String) -> WeirError {
        WeirError(.system(errno: code), path: output, operation: .sync, lead: nil,
                  detail: "written, but syncing its folder \(folder) failed: \(String(cString: strerror(code))); "
                      + "it may not survive a power cut, so the input was kept")
    }

    /// A resumable output whose record has its name, and whose folder's
    /// `fsync` then failed (`code`): the run stops before writing anything,
    /// and its input is kept. Names the output, not the folder.
    package static func recordFolderSyncFailed(_ code: Int32, output: String, folder: String) -> WeirError {
        WeirError(.system(errno: code), path: output, operation: .sync, lead: nil,
                  detail: "not written: syncing its folder \(folder) for its resume record failed: "
                      + "\(String(cString: strerror(code))); the input was kept")
    }

    /// A partial output (`NAME.part`) another weir is writing.
    package static func partialInUse(path: String) -> WeirError {
        WeirError(.system(errno: EBUSY), path: path, operation: .open, lead: nil,
                  detail: "is being written by another weir (it holds the file's lock)")
    }

    // MARK: notZstd

    /// `not in zstd format`, with `note` in parentheses after it.
    package static func notZstd(path: String, operation: Operation, _ note: String? = nil) -> WeirError {
        WeirError(.notZstd, path: path, operation: operation, lead: nil,
                  detail: "not in zstd format" + (note.map { " (\($0))" } ?? ""))
    }

    // MARK: truncated

    /// `truncated input: DETAIL`, where the detail says where the input ends.
    package static func truncated(path: String, operation: Operation, _ detail: String) -> WeirError {
        WeirError(.truncated, path: path, operation: operation, lead: .truncatedInput, detail: detail)
    }

    /// A file that changed while weir read it: `shrank`, or only known to
    /// have another size than at the start.
    package static func changedWhileRead(path: String, operation: Operation, shrank: Bool) -> WeirError {
        WeirError(.truncated, path: path, operation: operation, lead: nil,
                  detail: shrank ? "the file was truncated while it was being read"
                                 : "the file changed size while it was being read")
    }

    /// An input of `--rm` whose size is no longer the bytes read: kept.
    package static func changedBeforeRemoval(path: String) -> WeirError {
        WeirError(.truncated, path: path, operation: .remove, lead: nil,
                  detail: "the file changed size after it was read; not removed")
    }

    // MARK: corrupt

    /// `corrupt data: DETAIL`, or `corrupt data: frame N at offset O DETAIL`
    /// when the frame is known.
    package static func corrupt(path: String, operation: Operation, _ detail: String,
                        frame: Int? = nil, offset: Int? = nil) -> WeirError {
        WeirError(.corrupt, path: path, operation: operation, lead: .corruptData, detail: detail,
                  placement: .leading, frame: frame, offset: offset)
    }

    /// `corrupt seek table: DETAIL`; `cause` is the error the detail comes
    /// from, when there is one (the table's read error).
    package static func corruptSeekTable(path: String, operation: Operation = .readSeekTable, _ detail: String,
                                 cause: WeirError? = nil) -> WeirError {
        WeirError(.corrupt, path: path, operation: operation, lead: .corruptSeekTable, detail: detail, cause: cause)
    }

    /// `corrupt member index at offset N: DETAIL`, where N is the file
    /// offset of the index's skippable frame.
    package static func corruptMemberIndex(path: String, offset: Int, _ detail: String) -> WeirError {
        WeirError(.corrupt, path: path, operation: .readMemberIndex, lead: nil,
                  detail: "corrupt member index at offset \(offset): \(detail)", offset: offset)
    }

    /// A frame that decoded to `decoded` bytes of content where the index
    /// lists `listed` (`source`: "its seek table entry lists" when the size
    /// is the table's alone); `suffix` ends the detail ("; not indexed").
    package static func indexMismatch(path: String, operation: Operation, frame: Int, offset: Int, decoded: Int,
                              listed: Int, source: String = "its seek table entry lists",
                              suffix: String = "") -> WeirError {
        corruptSeekTable(path: path, operation: operation,
                         "frame \(frame) at offset \(offset) decodes to \(decoded) bytes of content, but "
                             + "\(source) \(listed)\(suffix)")
    }

    // MARK: verificationFailed

    /// `verify failed: frame N (input offset O) does not decode to its input`,
    /// then where the first byte differs, or the decoder's error as the cause.
    package static func verificationFailed(path: String, frame: Int, offset: Int, at difference: Int?,
                                   cause: WeirError? = nil) -> WeirError {
        var detail = "frame \(frame) (input offset \(offset)) does not decode to its input"
        if let difference { detail += ": the first byte that differs is at input offset \(difference)" }
        if let cause { detail += ": \(cause.reason)" }
        return WeirError(.verificationFailed, path: path, operation: .verify, lead: .failed(.verify), detail: detail,
                         frame: frame, offset: offset, cause: cause)
    }

    // MARK: checksumMismatch

    /// A frame whose content does not match its checksum.
    package static func checksumMismatch(path: String, operation: Operation) -> WeirError {
        WeirError(.checksumMismatch, path: path, operation: operation, lead: nil,
                  detail: "checksum mismatch: the decompressed data is corrupt")
    }

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

    // MARK: notRegularFile

    /// How a message says that a file is not a regular one.
    package enum NotRegularFile: Sendable {
        /// `not a regular file`.
        case plain
        /// `is a directory`.
        case directory
        /// A device or socket, which `-f` would read.
        case skipped
        /// `OPERATION failed: not a regular file`.
        case failed
    }

    /// A file that is not a regular file, worded as `wording` says.
    package static func notRegularFile(
        path: String, operation: Operation, _ wording: NotRegularFile = .plain
    ) -> WeirError {
        switch wording {
        case .plain:
            WeirError(.notRegularFile, path: path, operation: operation, lead: nil, detail: "not a regular file")
        case .directory:
            WeirError(.notRegularFile, path: path, operation: operation, lead: nil, detail: "is a directory")
        case .skipped:
            WeirError(.notRegularFile, path: path, operation: operation, lead: nil,
                      detail: "is not a regular file -- ignored", hint: .forceRead)
        case .failed:
            WeirError(.notRegularFile, path: path, operation: operation, lead: .failed(operation),
                      detail: "not a regular file")
        }
    }

    // MARK: cancelled

    /// A run stopped (by its caller, a signal or another failure).
    package static func cancelled(path: String, operation: Operation) -> WeirError {
        WeirError(.cancelled, path: path, operation: operation, lead: nil, detail: "cancelled")
    }

    /// A run stopped whose partial output `part` is kept, holding `percent`
    /// of the input's compression.
    package static func cancelled(path: String, keeping part: String, percent: Double) -> WeirError {
        WeirError(.cancelled, path: path, operation: .run, lead: nil,
                  detail: "cancelled; \(FileName.displayed(part)) keeps the first \(Int(percent))%", hint: .resume)
    }

    /// A run stopped by `error`, which is not a ``WeirError`` (the failure of
    /// a caller's input sequence): its description is the reason.
    package static func cancelled(path: String, operation: Operation, by error: any Error) -> WeirError {
        WeirError(.cancelled, path: path, operation: operation, lead: nil, detail: "\(error)")
    }

    // MARK: library

    /// libzstd, or a limit of weir's, refused: the detail says what and why.
    package static func library(path: String, operation: Operation, _ detail: String) -> WeirError {
        WeirError(.library, path: path, operation: operation, lead: nil, detail: detail)
    }

    /// A libzstd error without a meaning of its own: `OPERATION failed: NAME`.
    package static func library(path: String, operation: Operation, failed name: String) -> WeirError {
        WeirError(.library, path: path, operation: operation, lead: .failed(operation), detail: name)
    }

    /// Memory that could not be had: `out of memory`, or `cannot create
    /// WHAT: out of memory`.
    package static func outOfMemory(path: String, operation: Operation, creating what: String? = nil) -> WeirError {
        WeirError(.library, path: path, operation: operation, lead: nil,
                  detail: what.map { "cannot create \($0): out of memory" } ?? "out of memory")
    }

    /// Fewer samples than a dictionary can be learnt from (`count` of
    /// `minimum`), worded as zstd does ("nb of samples too low").
    package static func tooFewSamples(path: String, count: Int, minimum: Int) -> WeirError {
        WeirError(
            .library, path: path, operation: .train, lead: nil,
            detail:
                "nb of samples too low: \(count) sample\(count == 1 ? "" : "s"), training needs at least \(minimum)",
            hint: .moreSamples)
    }

    /// libzstd could not learn a dictionary: `name` is its error's
    /// (`Src size is incorrect`, `Parameter is out of bound`).
    package static func trainingFailed(path: String, _ name: String) -> WeirError {
        WeirError(.library, path: path, operation: .train, lead: nil, detail: "dictionary training failed: \(name)")
    }

    // MARK: memoryLimit

    /// Compressing needs at least `needed` bytes, more than the process's
    /// memory `limit`, with frames of `frame` bytes; `fitting`: the window
    /// log that would fit, if any (``CompressionMemory``).
    package static func compressionMemory(path: String, needed: Int, limit: Int, frame: Int, fitting: Int?) -> WeirError
    {
        WeirError(.memoryLimit, path: path, operation: .compress, lead: nil,
                  detail: "needs at least \(mebibytes(needed)) MiB to compress (frames of \(mebibytes(frame)) MiB), "
                      + "more than this process's memory limit of \(mebibytes(limit)) MiB",
                  hint: .compressionMemory(longWindowLog: fitting))
    }

    /// `bytes` in whole MiB, rounded up (at least 1).
    private static func mebibytes(_ bytes: Int) -> Int {
        max(1, (bytes + (1 << 20) - 1) >> 20)
    }

    // MARK: sizeMismatch

    /// An input of `actual` bytes where its size was declared `declared`.
    package static func sizeMismatch(path: String, operation: Operation, actual: Int, declared: Int) -> WeirError {
        WeirError(.sizeMismatch, path: path, operation: operation, lead: nil,
                  detail: "the input is \(actual) bytes, not the \(declared) declared")
    }

    // MARK: outOfRange

    /// A range of the content that ends past its `size` bytes.
    package static func outOfRange(path: String, range: Range<Int>, size: Int) -> WeirError {
        let which = range.lowerBound > size ? "starts" : "ends"
        return WeirError(
            .outOfRange, path: path, operation: .read, lead: nil,
            detail: "the range \(range.lowerBound):\(range.upperBound) \(which) past the end of the content "
                + "(\(size) bytes)")
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
