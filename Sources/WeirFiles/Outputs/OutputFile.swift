import Dispatch
import FoundationEssentials
import Glibc
import Synchronization
import WeirFormats
import WeirSystem

/// An output file that appears under its name only once it is complete, or,
/// when the name is a device, FIFO or socket, that very node written in place.
///
/// A regular output goes to a hidden temporary file in the destination folder
/// (`.weir-XXXXXX`: short, so any valid output name works; created by
/// `mkstemp` with mode 0600, so no other user can read a partial file; held
/// with an exclusive `flock` until it is named or removed, so that the
/// first output a later weir creates in the folder removes those a weir cut
/// short left, and only those: ``StaleTemporaries``).
/// Committing it takes three steps, which ``commit(copying:sync:)`` runs in a
/// row and `CommitQueue` runs for many files at once: ``stamp(copying:)``
/// gives it the input's owner (when permitted), mode and modification time;
/// ``syncData()`` puts its data on disk; ``publish(synced:)`` closes it and moves it
/// to `path` — without `force` by `renameat2(RENAME_NOREPLACE)`, so a file
/// that appeared meanwhile is never replaced; with `force` by one `rename`
/// over the old file, so the name holds the old file or the new one, never
/// neither (with `--no-sync`, the old file is removed just before).
/// ``discard()`` removes the temporary file. A failure, a signal, a
/// crash or (data synced before the rename) a power cut never leaves a
/// partial file under the real name.
///
/// A target that exists and is not a regular file (`/dev/null`, a FIFO) is
/// opened for writing and written directly, as zstd does: no `-f` needed, and
/// it is never removed, renamed over, or given other permissions.
package final class OutputFile: Sendable {
    /// The name the file gets when committed.
    package let path: String
    /// The temporary file being written; nil when writing a device in place.
    package let temporaryPath: String?
    /// The descriptor open for writing.
    package let descriptor: Descriptor
    /// The file system the output is on (`st_dev`), for syncing each one
    /// once; 0 for a device written in place.
    package let device: UInt64
    private let force: Bool
    /// What the file is when resumable: its `.part` is the temporary file,
    /// which ``keep()`` leaves for the next run.
    package let partial: PartialOutput?
    /// Until committed or discarded; each happens once.
    private let open = Atomic<Bool>(true)

    /// Whether the output is a device, FIFO or socket written in place.
    package var isInPlace: Bool { temporaryPath == nil }

    /// Opens `path` for writing: a temporary file for a regular (or new)
    /// output, the node itself for a device, FIFO or socket.
    ///
    /// - Parameters:
    ///   - path: the file to create once the output is complete.
    ///   - force: when false, an existing regular `path` is an error, checked
    ///     now and again, atomically, at commit.
    /// - Throws: ``WeirError`` `.outputExists`, `.notRegularFile` for a
    ///   directory, or the `open`/`mkstemp` failure.
    package init(path: String, force: Bool) throws(WeirError) {
        self.path = path
        self.force = force
        partial = nil
        let existing = FileStatus.of(path: path)
        if let existing, !existing.isRegularFile {
            if existing.isDirectory {
                throw WeirError.notRegularFile(path: path, operation: .create, .directory)
            }
            let fd = FileName.withCString(path) { Glibc.open($0, O_WRONLY | O_CLOEXEC | O_NOCTTY) }
            guard fd >= 0 else { throw WeirError.system(errno, path: path, operation: .open) }
            descriptor = Descriptor(fd, path: path)
            device = 0
            temporaryPath = nil
            return
        }
        if !force, FileStatus.exists(path) {
            throw WeirError.outputExists(path: path)
        }
        if force, let existing {  // a regular file: the others returned above
            PageCache.drop(of: path, modified: existing.modificationTime)
        }
        // The folder's bytes as given, up to the last slash: the temporary
        // file is a sibling of `path`, whatever bytes its name holds.
        let name = FileName.bytes(of: path)
        let folder = name.lastIndex(of: UInt8(ascii: "/")).map { Array(name[...$0]) } ?? []
        StaleTemporaries.sweepOnce(folder: Self.folder(of: path))
        let (fd, temporary) = try Self.createTemporary(in: folder, for: path)
        descriptor = Descriptor(fd, path: path)
        var info = stat()
        device = fstat(fd, &info) == 0 ? UInt64(info.st_dev) : 0
        temporaryPath = temporary
        PendingTemporaries.insert(temporary)
    }

    private init(partial: PartialOutput, path: String, force: Bool) {
        self.path = path
        self.force = force
        self.partial = partial
        descriptor = partial.descriptor
        var info = stat()
        device = fstat(descriptor.fd, &info) == 0 ? UInt64(info.st_dev) : 0
        // Not a pending temporary: a signal keeps it for the next run.
        temporaryPath = partial.partPath
    }

    /// A resumable output of `path` (``PartialOutput``), with the checks of
    /// ``init(path:force:)``; nil when `path` is a device, FIFO or socket
    /// (written in place), or when a `.part` weir has no record of is in
    /// the way: the caller then makes a plain one.
    package static func resumable(path: String, force: Bool, identity: String, options: String,
                                  holds: PartialOutput.Holds = .frames, dictionary: ZstdDictionary?,
                                  input: Descriptor? = nil, verifies: Bool = false,
                                  checkpointInterval: Double = PartialOutput.interval)
        throws(WeirError) -> OutputFile? {
        let existing = FileStatus.of(path: path)
        if let existing, !existing.isRegularFile { return nil }
        if !force, existing != nil { throw WeirError.outputExists(path: path) }
        if let existing { PageCache.drop(of: path, modified: existing.modificationTime) }
        StaleTemporaries.sweepOnce(folder: folder(of: path))
        guard let partial = try PartialOutput.open(for: path, identity: identity, options: options, holds: holds,
                                                   dictionary: dictionary, input: input, verifies: verifies,
                                                   checkpointInterval: checkpointInterval)
        else { return nil }
        return OutputFile(partial: partial, path: path, force: force)
    }

    /// Creates a temporary file in `folder` (its bytes up to the last slash,
    /// empty for the current folder), mode 0600, and locks it for as long
    /// as it is open (``StaleTemporaries``): again under another name when a
    /// sweep took the file before the lock was had.
    ///
    /// - Throws: ``WeirError`` `.create` naming `path`: the `mkstemp` failure.
    static func createTemporary(in folder: [UInt8], for path: String) throws(WeirError) -> (Int32, String) {
        while true {
            var template = (folder + Array(".weir-XXXXXX".utf8)).map { CChar(bitPattern: $0) } + [0]
            let fd = mkstemp(&template)
            guard fd >= 0 else {
                throw WeirError.system(errno, path: path, operation: .create)
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            if StaleTemporaries.lockCreated(fd) {
                return (fd, FileName.string(fromBytes: template.dropLast().map { UInt8(bitPattern: $0) }))
            }
            Glibc.close(fd)
        }
    }

    /// Commits the output alone: ``stamp(copying:)``, ``syncData()`` when
    /// `sync`, then ``publish(synced:)``.
    ///
    /// - Throws: ``WeirError`` when the output appeared meanwhile (without
    ///   force), or `fdatasync`/`close`/`rename` fail (a delayed write error
    ///   such as a full disk shows up there); the temporary file is then removed.
    package func commit(copying source: FileStatus?, sync: Bool = true) throws(WeirError) {
        stamp(copying: source)
        do throws(WeirError) {
            if sync { try syncData() }
        } catch {
            discard()
            throw error
        }
        try publish(synced: sync)
    }

    /// Gives a regular output `source`'s owner and group (when permitted),
    /// permission bits and modification time, or, without a source, mode
    /// 0666 less the umask. Set-user-ID, set-group-ID and sticky bits are
    /// never carried over, as zstd clears them (issue 49): a compressed
    /// copy of a set-user-ID program is not a program, and the same bytes
    /// decompressed elsewhere should not become one by the way. Nothing for
    /// a device written in place.
    package func stamp(copying source: FileStatus?) {
        guard temporaryPath != nil, open.load(ordering: .acquiring) else { return }
        if let source {
            _ = fchown(descriptor.fd, source.owner, source.group)  // EPERM unless root: kept as ours
            _ = fchmod(descriptor.fd, source.mode & 0o777)
            var times = [timespec(tv_sec: source.accessTime.tv_sec, tv_nsec: source.accessTime.tv_nsec),
                         timespec(tv_sec: source.modificationTime.tv_sec, tv_nsec: source.modificationTime.tv_nsec)]
            _ = futimens(descriptor.fd, &times)
        } else {
            let mask = umask(0)
            umask(mask)
            _ = fchmod(descriptor.fd, 0o666 & ~mask)
        }
    }

    /// Puts the temporary file's data (and the size and blocks that reach
    /// it) on disk: `fdatasync`. Nothing for a device written in place.
    ///
    /// - Throws: ``WeirError`` `.sync` naming `path` (EIO, ENOSPC: the data
    ///   is not on disk, now or at a checkpoint: ``checkpointSyncError``);
    ///   the caller discards the output.
    package func syncData() throws(WeirError) {
        guard temporaryPath != nil else { return }
        if let error = checkpointSyncError { throw error }
        if Descriptor.retrying({ Int(fdatasync(descriptor.fd)) }) != 0 {
            throw WeirError.system(errno, path: path, operation: .sync)
        }
    }

    /// The failure of a resumable output's checkpoint to sync its `.part`
    /// (``PartialOutput/syncError``), as a `.sync` error naming `path`: a
    /// sync that fails is final, the output fails however the next goes.
    package var checkpointSyncError: WeirError? {
        partial?.syncError.map { WeirError.system($0, path: path, operation: .sync) }
    }

    /// Closes the output and, for a regular one, moves the temporary file to
    /// `path`. With `force`, a synced output replaces an old file by one
    /// `rename`; an output not synced (`--no-sync`) removes the old file
    /// first, as weir did before syncing: a rename that replaces a file makes
    /// ext4 write the new file's data at once (`auto_da_alloc`), which made
    /// `-d -f` of a large file slower (bench/results/2026-11-27-comment-
    /// numbers.md, "Overwriting").
    ///
    /// - Throws: ``WeirError`` when the output appeared meanwhile (without
    ///   force), or `close`/`rename` fail; the temporary file is then removed.
    package func publish(synced: Bool = true) throws(WeirError) {
        precondition(open.exchange(false, ordering: .acquiringAndReleasing), "OutputFile committed twice")
        guard let temporaryPath else {
            if Glibc.close(descriptor.fd) != 0 {
                let code = errno
                if code != EINTR { throw WeirError.system(code, path: path, operation: .write) }
            }
            return
        }
        // The temporary's lock belongs to the open file, not the descriptor:
        // a duplicate keeps it held from the close (whose error is checked)
        // through the rename, so that no sweep takes the file in between.
        // Without a descriptor to spare, the window is two system calls.
        partial?.finish()
        let keeper = fcntl(descriptor.fd, F_DUPFD_CLOEXEC, 0)
        defer { if keeper >= 0 { Glibc.close(keeper) } }
        if Glibc.close(descriptor.fd) != 0 {
            let code = errno
            removeTemporary(temporaryPath)
            throw WeirError.system(code, path: path, operation: .write)
        }
        if force {
            if !synced, let existing = FileStatus.of(path: path), existing.isRegularFile {
                FileName.withCString(path, unlink)
            }
            let renamed = FileName.withCString(temporaryPath) { from in FileName.withCString(path) { rename(from, $0) }
            }
            if renamed != 0 {
                let code = errno
                removeTemporary(temporaryPath)
                throw WeirError.system(code, path: path, operation: .rename)
            }
        } else {
            let code = NoReplaceRename.move(temporaryPath, to: path)
            if code == EEXIST {
                removeTemporary(temporaryPath)
                throw WeirError.outputExists(path: path)
            }
            if code != 0 {
                removeTemporary(temporaryPath)
                throw WeirError.system(code, path: path, operation: .rename)
            }
        }
        PendingTemporaries.remove(temporaryPath)
        partial?.removeRecord()
        // A run that did not resume leaves no earlier run's `.part` of this output.
        if partial == nil { _ = PartialOutput.removeSuperseded(for: path) }
    }

    /// The folder that holds `path`, as given (`.` for a bare name): the
    /// one whose entry ``publish(synced:)`` writes.
    package var folder: String { Self.folder(of: path) }

    /// The folder part of `path`, as given: up to its last slash (`/` for a
    /// name at the root), or `.` for a bare name.
    static func folder(of path: String) -> String {
        let name = FileName.bytes(of: path)
        guard let slash = name.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return slash == name.startIndex ? "/" : FileName.string(fromBytes: name[..<slash])
    }

    private func removeTemporary(_ temporary: String) {
        partial?.finish()
        FileName.withCString(temporary, unlink)
        PendingTemporaries.remove(temporary)
        partial?.removeRecord()
    }

    /// Writes `bytes`, whole, at the start of the file with `pwrite` (again
    /// after a short write or EINTR): a small file's output in one piece.
    package func write(_ bytes: UnsafeRawBufferPointer) throws(WeirError) {
        try descriptor.write(bytes, at: 0)
    }

    /// Closes the output; a temporary file is removed, `path` is left as it was.
    package func discard() {
        guard open.exchange(false, ordering: .acquiringAndReleasing) else { return }
        // Removed while still locked (open), so that no sweep can find it unheld.
        if let temporaryPath { removeTemporary(temporaryPath) }
        Glibc.close(descriptor.fd)
    }

    /// Closes a resumable output that a stopped run leaves for the next:
    /// its `.part` and record stay (``PartialOutput``). Discards any other.
    package func keep() {
        guard let partial, partial.hasCheckpoint else { return discard() }
        guard open.exchange(false, ordering: .acquiringAndReleasing) else { return }
        partial.finish()
        Glibc.close(descriptor.fd)
        partial.keepRecord()
    }

    deinit { discard() }
}
