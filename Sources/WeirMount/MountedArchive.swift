import Glibc
import Weir
import WeirFiles
import WeirFormats
import WeirRemote
import WeirSeekable
import WeirSystem

/// An archive as `weir mount` shows it (docs/mount.md): its tree, and
/// reads of its files' bytes through a ``FrameCache``, each an errno value
/// for the file system to answer with rather than an error to report.
///
/// What is mounted:
/// - a `.tar.zst` with a member index: its tree, from the index alone;
/// - a `.tar.zst` without one: its tree from an index made in memory by
///   one decode (``notes`` says so, and that `weir --index` keeps one);
/// - a zstd file that is not a tar: one file, named as `weir -d` names
///   its output.
///
/// Safe to share across threads: the file system's threads read at once.
package final class MountedArchive: Sendable {
    /// The archive, as the user named it (messages name it so).
    package let name: String
    package let tree: MountTree
    package let cache: FrameCache
    /// What the user should know once mounted (an index made in memory, a
    /// seek table that did not match the frames).
    package let notes: [String]
    /// Whether the archive is a tar (not a single file).
    package let isTar: Bool
    /// Whether the archive is still the file mounted: checked at each open
    /// (or each file's first read, when the kernel opens without asking)
    /// and after each frame decoded.
    let watch: ArchiveWatch
    /// The archive whose descriptor the reader reads through, when it is
    /// not the watched one (a tar without an index): kept open while mounted.
    private let archive: TarArchive?
    /// Where messages go: standard error, or the system log once in the background.
    let log: @Sendable (String) -> Void
    /// Nodes whose first read (or open) passed ``open(_:)``'s
    /// checks, one bit each; a failed check is not kept (it fails again,
    /// with its message).
    let checked: Locked<[UInt64]>
    /// Where the last few reads ended in the content, the oldest replaced
    /// first: a read that starts at one of them or just past it (a file
    /// read on, or the next member after its header blocks) is sequential.
    private let recentEnds = Locked((ends: [Int](repeating: -1, count: 4), next: 0))
    /// The maps of the sparse members opened so far, by node, and where
    /// their stored segments begin in the content (past a pax 1.0 map):
    /// made at a member's check, kept while mounted.
    let sparseMaps = Locked([Int: (map: TarSparseMap, stored: Int)]())
    /// The nodes checked at lookup with header blocks of their own (folders,
    /// links, devices, FIFOs, empty files), by where their header blocks
    /// begin: checked by the frame (``checkNear(_:)``), as a walk looks
    /// them up in the tree's order, not the archive's (2,000 empty files in
    /// 28 frames, each checked alone: `ls -lR` 11–20 s, not 0.2).
    let others: [UInt32]
    /// Set when the kernel opens files without asking (FUSE's no-open):
    /// the checks of ``open(_:)`` are made at a file's first read.
    package let opensUnasked = Locked(false)
    /// Names the kernel looked up so far, for the tests and `-v`: a listing
    /// with attributes (READDIRPLUS) spares a lookup of each name listed.
    package let namesLookedUp = Locked(0)
    /// Whether listings give each name's attributes (READDIRPLUS): from a
    /// lookup of a file (not a folder: the reader, `tar c`, `ls -l`,
    /// `cp -r`, wants the files' attributes) until 16 listings in a row
    /// were given them with no file looked up or read in between. A walk
    /// that only lists (`find -type f`) gets listings without, as the
    /// kernel would make an inode of every name given with its attributes.
    private let attributesWanted = Locked((wanted: false, idleListings: 0))

    /// A file was looked up (`lookedUp`), or read or opened the first time.
    package func fileTouched(lookedUp: Bool) {
        attributesWanted.withLock { state in
            if lookedUp { state.wanted = true }
            state.idleListings = 0
        }
    }

    /// Whether the listing asked now gives each name's attributes.
    package func listingGivesAttributes() -> Bool {
        attributesWanted.withLock { state in
            guard state.wanted else { return false }
            state.idleListings += 1
            if state.idleListings >= 16 { state.wanted = false }
            return true
        }
    }

    /// Opens the archive at `path` (absolute), named `name` in messages.
    ///
    /// - Throws: `WeirError` for a file that is not zstd, or cannot be read,
    ///   or whose index or seek table is damaged.
    package init(path: String, name: String, options: MountOptions,
                 log: @escaping @Sendable (String) -> Void) throws(WeirError) {
        self.name = name
        self.log = log
        let file = try Descriptor.openForReading(path)
        let status: FileStatus
        do throws(WeirError) { status = try file.status() } catch {
            file.close()
            throw error
        }
        // From here the watch owns the descriptor, and closes it.
        let watch = ArchiveWatch(name: name, path: path, file: file, identity: ArchiveIdentity(status), log: log)
        self.watch = watch
        guard status.mode & S_IFMT == S_IFREG else {
            throw WeirError.notRegularFile(path: name, operation: .open)
        }
        // A remote archive has no owner nor time of its own: the folders it implies are the mount's user's, now.
        let implied = file.source == nil
            ? MountTree.Implied(uid: Int(status.owner), gid: Int(status.group),
                                mtime: Int64(status.modificationTime.tv_sec))
            : MountTree.Implied(uid: Int(getuid()), gid: Int(getgid()), mtime: Int64(time(nil)))
        var notes: [String] = []
        let reader: SeekableReader
        var records: MemberIndex.Records?
        var archive: TarArchive?
        var checkpoints: FrameCheckpoints?
        if let table = try SeekTable.atEnd(of: file, fileSize: status.size),
           let found = try MemberIndex.records(in: file, table: table, checking: false) {
            // weir's archives: the table and the index read once, through the watched descriptor, the table
            // checked against the frames' headers (a file's: any frame's bytes are served without the frames
            // before it decoded); the records are checked by the tree's walk of them, and not kept after it.
            reader = try SeekableReader(file: file, table: table, options: options.decompression, checkingTable: true)
            records = found.records
        } else {
            do throws(WeirError) {
                // TarArchive tells a tar without an index from content that is not a tar.
                let opened = try TarArchive(path: path, options: options.decompression)
                reader = try opened.contentReader()
                records = opened.records
                archive = opened
            } catch where error.kind == .noMemberIndex {
                reader = try SeekableReader(path: path, options: options.decompression, checkingTable: true)
                let observer = options.indexing?(status.size)
                defer { if observer != nil { options.indexed?() } }
                let recorder = try Self.checkpointRecorder(reader: reader, path: path, size: status.size,
                                                           budget: options.cacheBytes)
                records = try TarContentScan.records(path: path, options: options.decompression, observer: observer,
                                                     checkpoints: recorder.map { (reader.file, $0) })
                checkpoints = recorder?.finish()
                // Made from the archive as the watch knows it, or not at all.
                if checkpoints != nil { try watch.check() }
                if records != nil {
                    notes.append("no member index: made one in memory by decoding the archive once; "
                        + "weir --index adds one to the file, and the next mount reads no content")
                }
            } catch where error.kind == .notTar {
                reader = try SeekableReader(path: path, options: options.decompression, checkingTable: true)
            }
        }
        notes += reader.warnings
        if let found = records {
            records = nil
            tree = try MountTree(records: found, implied: implied)
            isTar = true
        } else {
            let output = (try? OutputName.decompressed(for: name)) ?? name + ".out"
            let base = output.split(separator: "/").last.map(String.init) ?? output
            tree = MountTree(singleFile: Array(base.utf8), size: reader.count, mode: UInt32(status.mode) & 0o444,
                             implied: implied)
            isTar = false
        }
        let largest = (0 ..< reader.frameCount).reduce(0) { max($0, reader.contentRange(ofFrame: $1).count) }
        // One frame read through checkpoints is never kept whole: the budget is -M's, or its default.
        let budget = options.cacheFitsFrames && checkpoints == nil
            ? max(options.cacheBytes, 3 * largest) : options.cacheBytes
        cache = FrameCache(reader: reader, budget: budget, checkpoints: checkpoints) { () throws(WeirError) in
            try watch.check()
        }
        checked = Locked([UInt64](repeating: 0, count: (tree.nodes.count + 63) / 64))
        let tree = tree
        others = tree.nodes.indices.filter {
            (tree.nodes[$0].kind != .file || tree.nodes[$0].size == 0) && tree.nodes[$0].headerLength > 0
        }
            .sorted { tree.nodes[$0].dataOffset < tree.nodes[$1].dataOffset }.map { UInt32($0) }
        self.archive = archive
        self.notes = notes
    }

    /// A recorder of checkpoints for the one decode of `reader`'s content
    /// (`path`, `size` bytes, a tar with no index), when the file is one
    /// zstd frame (what `zstd` writes) that the cache could not keep:
    /// reads of it then decode from the checkpoint before them
    /// (``FrameCheckpoints``), not from the frame's start. Nil for a frame
    /// of a URL (its reads are ranges already), of several frames, or of a
    /// window that leaves no room in `budget` for two cursors: read as
    /// before. Windows past `budget` less two cursors go to a file in `TMPDIR`.
    static func checkpointRecorder(reader: SeekableReader, path: String, size: Int,
                                   budget: Int) throws(WeirError) -> FrameCheckpoints.Recorder? {
        guard reader.file.source == nil, reader.isOneFrame(fileSize: size), reader.count > budget / 2 else {
            return nil
        }
        // A frame header is 18 bytes at most (RFC 8878).
        let head = try reader.file.read(count: min(18, size), at: 0, operation: .read)
        guard let header = head.withUnsafeBytes({ FrameHeader(startOf: $0) }) else { return nil }
        let cursor = FrameCursor.footprint(windowSize: Int(min(header.windowSize, UInt64(Int.max / 4))))
        guard 2 * cursor <= budget else { return nil }
        return FrameCheckpoints.Recorder(frame: 0 ..< size, memoryLimit: budget - 2 * cursor, path: path)
    }

    /// Why reads fail now: the archive changed since it was mounted; nil
    /// while it is the same file.
    package func changed() -> String? { watch.changed() }

    /// Tells why a read of file `node` failed: a remote archive replaced is
    /// a change (told once, as a local one); a change is told once, when
    /// seen. The file's path is made here only: not at each read.
    func failed(_ error: WeirError, node: Int) {
        if error.kind == .remoteChanged {
            watch.remoteChanged(error.reason)
        } else if !watch.changeSeen {
            log("\(name): \(tree.shownPath(of: node)): \(error.reason)")
        }
    }

    /// Whether `node` passed ``check(_:)``.
    package func isChecked(_ node: Int) -> Bool {
        checked.withLock { $0[node / 64] & 1 << UInt64(node % 64) != 0 }
    }

    /// Reads up to `count` bytes of file `node` from `offset`, and hands
    /// them to `reply` (fewer at the file's end; none past it). A read
    /// within one kept frame hands the frame's own bytes, not a copy.
    ///
    /// - Returns: 0 once `reply` had the bytes, or the errno to answer
    ///   (then `reply` is not called): EIO when a frame fails its checks or
    ///   the archive changed; no byte is handed on that did not pass.
    package func read(_ node: Int, at offset: Int, count asked: Int,
                      reply: (UnsafeRawBufferPointer) -> Void) -> Int32 {
        let entry = tree.nodes[node]
        guard entry.kind == .file else { return EISDIR }
        guard offset >= 0 else { return EINVAL }
        guard offset < entry.size, asked > 0 else {
            reply(UnsafeRawBufferPointer(start: nil, count: 0))
            return 0
        }
        let count = min(asked, entry.size - offset)
        // A change seen fails every read; a frame decoded for this one is checked once decoded.
        if watch.changeSeen { return EIO }
        if !isChecked(node), opensUnasked.current {
            let refused = open(node)
            if refused != 0 { return refused }
        }
        let sparse = sparseMaps.withLock { $0.isEmpty ? nil : $0[node] }
        guard sparse != nil || offset + count <= entry.dataLength else {
            log("\(name): \(tree.shownPath(of: node)): the archive holds \(entry.dataLength) of its \(entry.size) "
                + "bytes (cut short)")
            return EIO
        }
        let start = entry.dataOffset + offset
        do throws(WeirError) {
            if sparse == nil, let handed = try cache.withBytes(start ..< start + count, { bytes -> Int32 in
                // Read ahead first: its decode then overlaps the reply.
                readAhead(ifSequential: start ..< start + count)
                reply(bytes)
                return 0
            }) {
                return handed
            }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 16)
            defer { buffer.deallocate() }
            let read = try copy(node, at: offset, into: buffer, sparse: sparse)
            if let read { readAhead(ifSequential: read) }
            reply(UnsafeRawBufferPointer(buffer))
            return 0
        } catch {
            failed(error, node: node)
            return EIO
        }
    }

    /// Copies the bytes of file `node` from `offset` into all of `buffer`
    /// (within its size, and within its stored data unless sparse).
    ///
    /// - Returns: the content's bytes read (from the first stored byte to
    ///   the last); nil when the read fell in holes only.
    private func copy(_ node: Int, at offset: Int, into buffer: UnsafeMutableRawBufferPointer,
                      sparse: (map: TarSparseMap, stored: Int)?) throws(WeirError) -> Range<Int>? {
        let count = buffer.count
        guard let sparse else {
            let start = tree.nodes[node].dataOffset + offset
            try cache.read(start ..< start + count, into: buffer)
            return start ..< start + count
        }
        // Holes are zeros; the segments' bytes are read where the member stores them.
        var (start, end) = (-1, -1)
        for piece in sparse.map.pieces(of: offset ..< offset + count) {
            let into = UnsafeMutableRawBufferPointer(
                rebasing: buffer[piece.offset - offset ..< piece.offset - offset + piece.count])
            guard let stored = piece.stored else {
                into.initializeMemory(as: UInt8.self, repeating: 0)
                continue
            }
            let at = sparse.stored + stored
            try cache.read(at ..< at + piece.count, into: into)
            if start < 0 { start = at }
            end = at + piece.count
        }
        return start < 0 ? nil : start ..< end
    }

    /// Starts the decode of the frame after `read` (content offsets) when
    /// the read goes on from where one of the last few ended, or just past
    /// it (the next member, after its header blocks).
    private func readAhead(ifSequential read: Range<Int>) {
        let sequential = recentEnds.withLock { recent in
            // Header blocks of up to 64 KiB (long names, pax records) may lie between two members.
            if let stream = recent.ends.firstIndex(where: {
                $0 >= 0 && $0 <= read.lowerBound && read.lowerBound - $0 <= 64 << 10
            }) {
                recent.ends[stream] = read.upperBound
                return true
            }
            recent.ends[recent.next] = read.upperBound
            recent.next = (recent.next + 1) % recent.ends.count
            return false
        }
        if sequential { cache.readAhead(after: read.upperBound - 1) }
    }
}
