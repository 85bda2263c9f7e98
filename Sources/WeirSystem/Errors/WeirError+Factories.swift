import Glibc

/// The factories of the system layer's errors: where errors are made and
/// their texts written, grouped by ``WeirError/Kind``. A call site gives the
/// facts (the file, the operation, numbers, a detail that only it knows) and
/// the factory puts the words around them: the lead (`corrupt data: `), the
/// frame and offset (from the fields, where the kind's messages put them),
/// the fixed texts. Each layer keeps the factories of the codes it declares
/// beside them, worded the same way (`WeirError+Formats.swift`,
/// `WeirError+TarMembers.swift`, `WeirError+Files.swift`, `WeirError+Engine.swift`).
/// Internal, except those the command line also needs.
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

    // MARK: truncated

    /// `truncated input: DETAIL`, where the detail says where the input ends.
    package static func truncated(path: String, operation: Operation, _ detail: String) -> WeirError {
        WeirError(.truncated, path: path, operation: operation, lead: .truncatedInput, detail: detail)
    }

    /// A file that changed while weir read it: `shrank`, or only known to
    /// have another size than at the start.
    /// `changed`: its bytes may have changed in place (a write moved its
    /// change time), whatever its size.
    package static func changedWhileRead(path: String, operation: Operation, shrank: Bool,
                                         changed: Bool = false) -> WeirError {
        WeirError(.truncated, path: path, operation: operation, lead: nil,
                  detail: shrank ? "the file was truncated while it was being read"
                      : changed ? "the file was written to while it was being read"
                      : "the file changed size while it was being read")
    }

    /// An input of `--rm` whose size is no longer the bytes read: kept.
    package static func changedBeforeRemoval(path: String) -> WeirError {
        WeirError(.truncated, path: path, operation: .remove, lead: nil,
                  detail: "the file changed size after it was read; not removed")
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
}
