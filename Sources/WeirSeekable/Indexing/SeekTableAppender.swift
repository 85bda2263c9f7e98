import Glibc
import SystemPackage
import WeirFormats
import WeirPipeline
import WeirSystem
import WeirTar

/// `weir --index`: makes a zstd file seekable for every reader, without
/// recompressing it, by appending one seek table that lists every frame.
///
/// Any multi-frame file gains random access this way: pzstd's output, zstd's
/// concatenations, and concatenations of weir's own outputs (whose chain of
/// per-part tables weir follows, but zstd's contrib library and indexed_zstd,
/// which read only the last table, do not). Every frame gets an entry, in
/// file order: skippable frames (pzstd's size frames, the parts' old tables)
/// as entries of no content, which readers that look frames up by content
/// offset never land on. The content sizes come from the frames' headers or
/// an existing table; frames that do not declare theirs are decoded to be
/// measured (their checksums verified on the way), those an existing table
/// sizes too: a table is only kept or extended once checked, and a table
/// that contradicts the frames is refused. The entries carry
/// checksums when every zstd frame stores one.
///
/// Safety: the file is only appended to, with one `pwrite` of the table at
/// its end, after checking that it has not grown since it was read; the new
/// size is made durable with `fdatasync` (unless the caller opts out), and
/// a duplicate of the descriptor is closed, which reports a write error
/// deferred until then (NFS), before success is reported. A write, sync or
/// close that fails is undone: `ftruncate` to the old size, synced too
/// (the append stays failed whatever that sync says: an `fdatasync`'s error
/// is final). Until then, and after a failure, the file is what it was,
/// byte for byte: stock zstd decodes it with or without the table, which is
/// a skippable frame; a read error leaves it untouched.
///
/// Two runs on one file: each holds an exclusive `flock` on it from before
/// it reads the file until its table is written, so a second run waits for
/// the first, then finds the file indexed (``Outcome/alreadyIndexed(frames:)``):
/// one table, and both succeed, as `make -j` or two shells expect. Where
/// the file system has no `flock`, a run that finds the file grown since it
/// read it fails instead of appending.
public struct SeekTableAppender: Sendable {
    /// What ``index(path:options:memberIndex:level:tarSource:synchronous:cancellation:whenBusy:)`` did.
    public enum Outcome: Equatable, Sendable {
        /// The file already ends with a table that covers all of it and
        /// matches its frames: nothing was written. `frames` counts the
        /// table's entries, as ``appended(frames:bytes:measured:)`` does:
        /// every frame, skippable ones (pzstd's, a member index) included.
        case alreadyIndexed(frames: Int)
        /// A table of `frames` entries, `bytes` long, was appended;
        /// `measured` frames were decoded to learn their size.
        case appended(frames: Int, bytes: Int, measured: Int)
        /// A tar's member index of `members` members and a table of
        /// `frames` entries (the index's frame and any earlier table
        /// included), `bytes` long together, were appended; the content was
        /// decoded once to find the members, or, given a `tarSource`, that
        /// file's header blocks read instead.
        case appendedMembers(members: Int, frames: Int, bytes: Int)
    }

    /// Appends a seek table to the file at `path` if it needs one.
    ///
    /// - Parameters:
    ///   - path: a regular file of zstd frames (and skippable frames).
    ///   - options: how frames without a declared size are decoded to be
    ///     measured (the checksum check, the window limit, the dictionary).
    ///   - memberIndex: a tar's content gets a member index (false: a seek
    ///     table only, as `--no-member-index` asks).
    ///   - level: the compression level of the run the index stands for
    ///     (3, libzstd's default, unless given): the index is compressed as
    ///     that run's compressor compresses its own (at 3 up to level 3, at
    ///     the level up to 9), so that the file ends as `weir -LEVEL` of its
    ///     content ends.
    ///   - tarSource: a regular file that holds the content of the file's
    ///     frames (the tar they were compressed from): the member index is
    ///     made from its header blocks instead of decoding the file, once
    ///     its size and every frame's content checksum (XXH64 of the frame's
    ///     range of it) match it. Every zstd frame must store a checksum.
    ///   - synchronous: wait for the disk (`fdatasync`) before returning.
    ///   - cancellation: once cancelled, the decode of the content stops
    ///     and nothing is appended (`.cancelled`); an append under way is
    ///     finished or undone first: never half made.
    ///   - whenBusy: called once, before waiting, when another process
    ///     holds the file's lock (another `weir --index`).
    /// - Throws: `WeirError`: the file cannot be opened for writing or
    ///   read, is not a regular file, is not zstd, is truncated or corrupt
    ///   (nothing is written then); a frame is 4 GiB or larger, on either
    ///   side, which the format cannot record; the file changed while it was
    ///   read; the write or the sync failed; `.sourceMismatch` when
    ///   `tarSource` is not the frames' content or cannot be checked
    ///   against them.
    public static func index(path: String, options: DecompressionOptions = DecompressionOptions(),
                             memberIndex: Bool = true, level: Int = 3, tarSource: String? = nil,
                             synchronous: Bool = true, cancellation: Cancellation? = nil,
                             whenBusy: () -> Void = {}) throws(WeirError) -> Outcome {
        let file = try openForAppending(path)
        defer { file.close() }  // which releases the lock
        lockExclusively(file, whenBusy: whenBusy)
        // Read under the lock: a run that waited sees the table of the one before.
        let listing = try FrameListing.read(path: path)
        try checkTables(of: listing, in: file, options: options)
        let seekable = listing.seekTables == 1 && listing.scannedPrefix == 0
        // The table's entries: every frame but the table's own.
        let entries = listing.frames.count - 1
        if seekable, !memberIndex { return .alreadyIndexed(frames: entries) }
        if seekable, try hasMemberIndex(file, size: listing.fileSize) {
            return .alreadyIndexed(frames: entries)
        }
        // A tar gets a member index: the content is decoded once (a content
        // that is not a tar, after its first buffer), or, given the tar it
        // holds, that file's headers are walked once it matches the frames.
        // A seekable file's table stays, one more skippable frame the new
        // table lists.
        let indexLevel = MemberIndex.level(forRunLevel: level)
        var sizedFirst: (listing: FrameListing, measured: Int)?
        var members: TarScanner.Found?
        if memberIndex, let tarSource {
            let sized = try listing.measured(in: file, options: options)
            sizedFirst = sized
            members = try TarSourceScan.index(of: sized.listing, source: tarSource, level: indexLevel)
        } else if memberIndex {
            members = try TarContentScan.index(of: file, end: listing.fileSize, options: options,
                                               level: indexLevel, wholeFile: true, cancellation: cancellation)
        }
        // A tar in one frame gets its index as the compressor gives one to a
        // tar of one frame: listed without decoding, though a member is read
        // by decoding the frame (issue 68).
        if seekable && members == nil { return .alreadyIndexed(frames: entries) }
        let (sized, measured) = if let sizedFirst { sizedFirst } else {
            try listing.measured(in: file, options: options)
        }
        var table = SeekTable(hasChecksums: sized.frames.allSatisfy { $0.isSkippable || $0.checksum != nil })
        for frame in sized.frames {
            try table.append(compressedSize: frame.compressedSize, decompressedSize: frame.decompressedSize ?? 0,
                             checksum: frame.checksum ?? 0, path: path)
        }
        var bytes: [UInt8] = []
        if let members {
            bytes = try members.frame.bytes(path: path)
            try table.append(compressedSize: bytes.count, decompressedSize: 0, path: path)
        }
        bytes += table.encoded()
        if cancellation?.isCancelled == true { throw WeirError.cancelled(path: path, operation: .writeSeekTable) }
        try append(bytes, to: file, at: listing.fileSize, synchronous: synchronous)
        if let members {
            return .appendedMembers(members: members.members, frames: table.entries.count, bytes: bytes.count)
        }
        return .appended(frames: listing.frames.count, bytes: table.encodedSize, measured: measured)
    }

    /// Whether the seek table at the end of `file` lists a member index.
    private static func hasMemberIndex(_ file: Descriptor, size: Int) throws(WeirError) -> Bool {
        guard let table = try SeekTable.atEnd(of: file, fileSize: size) else { return false }
        return try MemberIndex.location(in: file, table: table) != nil
    }

    /// Throws unless the file's seek tables hold what they say: a table
    /// that a frame header contradicts is refused (no second table goes
    /// after a lying one, and none is vouched for), and the sizes that no
    /// header declares, the table's alone, are checked by decoding those
    /// frames (side by side, as frames without a table are measured).
    private static func checkTables(of listing: FrameListing, in file: Descriptor,
                                    options: DecompressionOptions) throws(WeirError) {
        if let mismatch = listing.tableMismatch {
            throw WeirError.corruptSeekTable(path: file.path, operation: .writeSeekTable,
                                             "\(mismatch); not indexed")
        }
        let claimed = listing.tableOnlySizes
        let sizes = try FrameMeasure.contentSizes(of: claimed, in: file, options: options)
        for (frame, size) in zip(claimed, sizes) where frame.decompressedSize != size {
            throw WeirError.indexMismatch(path: file.path, operation: .writeSeekTable, frame: frame.index,
                                          offset: frame.offset, decoded: size, listed: frame.decompressedSize ?? 0,
                                          suffix: "; not indexed")
        }
    }

    /// Opens `path` for reading and writing (not appending: the table goes
    /// at the size that was read); refuses what is not a regular file.
    private static func openForAppending(_ path: String) throws(WeirError) -> Descriptor {
        let file = try Descriptor.open(path, .readWrite)
        guard (try? file.status())?.isRegularFile == true, !InputKind.sizeIsUntrusted(file) else {
            file.close()
            throw WeirError.notRegularFile(path: path, operation: .writeSeekTable)
        }
        return file
    }

    /// Takes an exclusive `flock` on `file`, waiting for it when another
    /// process holds it (after telling `whenBusy`). A file system without
    /// `flock` (ENOLCK, EOPNOTSUPP) leaves the file unlocked: ``append(_:to:at:synchronous:)``
    /// still refuses a file that grew since it was read.
    private static func lockExclusively(_ file: Descriptor, whenBusy: () -> Void) {
        if Descriptor.retrying({ Int(flock(file.fd, LOCK_EX | LOCK_NB)) }) == 0 || errno != EWOULDBLOCK { return }
        whenBusy()
        _ = Descriptor.retrying { Int(flock(file.fd, LOCK_EX)) }
    }

    /// Writes `bytes` at `offset`, the end of the file as it was read: all of
    /// them or, on failure (of the write, its sync or its close), none (the
    /// file is cut back to `offset`).
    private static func append(_ bytes: [UInt8], to file: Descriptor, at offset: Int,
                               synchronous: Bool) throws(WeirError) {
        let now = try file.status(operation: .writeSeekTable).size
        if now != offset {
            throw WeirError.changedWhileRead(path: file.path, operation: .writeSeekTable, shrank: now < offset)
        }
        do throws(WeirError) {
            try bytes.withUnsafeBytes { table in
                Result { () throws(WeirError) in try file.write(table, at: offset, operation: .writeSeekTable) }
            }.get()
            if synchronous, Descriptor.retrying({ Int(fdatasync(file.fd)) }) != 0 {
                throw WeirError.system(errno, path: file.path, operation: .sync)
            }
            try closeDuplicate(of: file)
        } catch {
            _ = Descriptor.retrying { Int(ftruncate(file.fd, off_t(offset))) }
            // The old size on disk as far as the disk allows; the append
            // has failed whatever this sync says.
            if synchronous { _ = Descriptor.retrying { Int(fdatasync(file.fd)) } }
            throw error
        }
    }

    /// Closes a duplicate of `file`: `close` is where some file systems
    /// (NFS, FUSE's flush) report a write error they deferred, heard this
    /// way while the table can still be taken back. The lock stays (it is
    /// the open file's, not the descriptor's).
    private static func closeDuplicate(of file: Descriptor) throws(WeirError) {
        let copy = dup(file.fd)
        guard copy >= 0 else { throw WeirError.system(errno, path: file.path, operation: .writeSeekTable) }
        // Never retried: the descriptor is gone whatever close returns; EINTR says nothing failed.
        if Glibc.close(copy) != 0 && errno != EINTR {
            throw WeirError.system(errno, path: file.path, operation: .writeSeekTable)
        }
    }
}
