import Glibc
import WeirFormats
import WeirSystem

extension PartialOutput {
    /// What reopening an earlier run's `.part` and record comes to.
    enum Reopened {
        /// Both check: the run goes on after the kept frames.
        case resumed(Kept)
        /// Something does not check: a new `.part` and record, for `reason`.
        case startOver(String)
        /// A record without its `.part`: replaced, nothing to say.
        case fresh
    }

    /// An earlier run's `.part` and record that checked, open, locked, and
    /// cut back to the record's last checkpoint.
    struct Kept {
        let part: Int32
        let record: Int32
        let hash: UInt64
        let entries: [SeekTable.Entry]
        let checkpoint: ResumeRecord.Checkpoint

        /// The resumed output.
        func partial(partPath: String, recordPath: String, holds: Holds, folder: String,
                     checkpointInterval: Double) -> PartialOutput {
            let totals = holds.totals(of: checkpoint)
            return PartialOutput(
                partPath: partPath, recordPath: recordPath, descriptor: Descriptor(part, path: partPath),
                start: .resumed(
                    frames: checkpoint.frames, inputBytes: totals.input,
                    outputBytes: totals.output),
                holds: holds, kept: entries,
                log: Log(
                    record: record, hash: hash, frames: entries.count, outputBytes: totals.output,
                    inputBytes: totals.input, folderSynced: true),
                folder: folder, checkpointInterval: checkpointInterval)
        }
    }

    /// Opens the record at `recordPath` and, when `present`, the `.part`:
    /// kept when both are weir's and every kept frame checks (``Check``).
    /// Only a regular file with one link is opened for writing, and never
    /// through a link.
    ///
    /// - Throws: ``WeirError`` when another weir holds either, the input
    ///   cannot be read to check the kept frames, or the `.part` cannot be
    ///   cut back to its checkpoint.
    static func reopen(_ partPath: String, _ recordPath: String, present: Bool,
                       check: Check) throws(WeirError) -> Reopened {
        guard let record = Self.openOwn(recordPath) else {
            return present ? .startOver("its record is not a file weir made") : .fresh
        }
        guard flock(record.fd, LOCK_EX | LOCK_NB) == 0 else {
            Glibc.close(record.fd)
            throw WeirError.partialInUse(path: partPath)
        }
        guard present else {
            Glibc.close(record.fd)
            return .fresh
        }
        guard let (parsed, hash, length) = Self.contents(of: Descriptor(record.fd, path: recordPath))
            .flatMap(ResumeRecord.parse) else {
            Glibc.close(record.fd)
            return .startOver("its record cannot be read")
        }
        var part: Int32 = -1
        let reason: String? = {
            // Before the input's identity, which a new link to it changes too.
            if check.partIsInput(partPath) { return "it is a hard link to the input" }
            if let reason = check.mismatchOfRecord(parsed) { return reason }
            guard let opened = Self.openOwn(partPath) else { return "it is not a regular file" }
            part = opened.fd
            guard opened.status.st_nlink == 1 else { return "it has other links (it may be another file)" }
            guard ResumeRecord.part(opened.status) == parsed.part else { return "it is not the file its record names" }
            return nil
        }()
        if let reason {
            if part >= 0 { Glibc.close(part) }
            Glibc.close(record.fd)
            return .startOver(reason)
        }
        guard flock(part, LOCK_EX | LOCK_NB) == 0 else {
            Glibc.close(part)
            Glibc.close(record.fd)
            throw WeirError.partialInUse(path: partPath)
        }
        let outcome: String?
        do throws(WeirError) {
            outcome = try check.mismatchOfFrames(parsed, part: Descriptor(part, path: partPath))
        } catch {
            Glibc.close(part)
            Glibc.close(record.fd)
            throw error
        }
        guard outcome == nil, let checkpoint = parsed.checkpoint,
              ftruncate(record.fd, off_t(length)) == 0, lseek(record.fd, off_t(length), SEEK_SET) == length else {
            Glibc.close(part)
            Glibc.close(record.fd)
            return .startOver(outcome ?? "its record cannot be written")
        }
        // Cut back to the checkpoint, and write after it.
        let output = check.holds.totals(of: checkpoint).output
        guard ftruncate(part, off_t(output)) == 0, lseek(part, off_t(output), SEEK_SET) == output else {
            let error = WeirError.system(errno, path: partPath, operation: .truncate)
            Glibc.close(part)
            Glibc.close(record.fd)
            throw error
        }
        return .resumed(
            Kept(part: part, record: record.fd, hash: hash, entries: parsed.entries, checkpoint: checkpoint))
    }

    /// `path` opened for reading and writing when it is a regular file
    /// (not followed if a link; a FIFO or device is never opened), with
    /// its status; nil otherwise.
    private static func openOwn(_ path: String) -> (fd: Int32, status: stat)? {
        var info = stat()
        guard FileName.withCString(path, { lstat($0, &info) }) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            return nil
        }
        let fd = FileName.withCString(path) { Glibc.open($0, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY) }
        guard fd >= 0 else { return nil }
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            Glibc.close(fd)
            return nil
        }
        return (fd, info)
    }

    /// The bytes of the file open as `file`, or nil when it cannot be read.
    private static func contents(of file: Descriptor) -> [UInt8]? {
        guard let size = try? file.status().size, size < 1 << 30 else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        let got = bytes.withUnsafeMutableBytes { try? file.read(into: $0, at: 0, operation: .read) }
        return got == size ? bytes : nil
    }
}
