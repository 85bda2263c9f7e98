import Glibc
import Weir
import WeirFiles
import WeirFormats
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
    private let watch: ArchiveWatch
    /// The archive whose descriptor the reader reads through, when it is
    /// not the watched one (a tar without an index): kept open while mounted.
    private let archive: TarArchive?
    /// Where messages go: standard error, or the system log once in the background.
    private let log: @Sendable (String) -> Void
    /// Nodes whose first read (or open) passed ``open(_:shownAs:)``'s
    /// checks, one bit each; a failed check is not kept (it fails again,
    /// with its message).
    private let checked: Locked<[UInt64]>
    /// Where the last few reads ended in the content, the oldest replaced
    /// first: a read that starts at one of them or just past it (a file
    /// read on, or the next member after its header blocks) is sequential.
    private let recentEnds = Locked((ends: [Int](repeating: -1, count: 4), next: 0))
    /// Set when the kernel opens files without asking (FUSE's no-open):
    /// the checks of ``open(_:shownAs:)`` are made at a file's first read.
    package let opensUnasked = Locked(false)

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
        let implied = MountTree.Implied(uid: Int(status.owner), gid: Int(status.group),
                                        mtime: Int64(status.modificationTime.tv_sec))
        var notes: [String] = []
        let reader: SeekableReader
        var records: MemberIndex.Records?
        var archive: TarArchive?
        if let table = try SeekTable.atEnd(of: file, fileSize: status.size),
           let found = try MemberIndex.records(in: file, table: table, checking: false) {
            // weir's archives: the table and the index read once, through the watched descriptor;
            // the records are checked by the tree's walk of them, and not kept after it.
            reader = try SeekableReader(file: file, table: table, options: options.decompression)
            records = found.records
        } else {
            do throws(WeirError) {
                // TarArchive tells a tar without an index from content that is not a tar.
                let opened = try TarArchive(path: path, options: options.decompression)
                reader = try opened.contentReader()
                records = opened.records
                archive = opened
            } catch where error.kind == .noMemberIndex {
                reader = try SeekableReader(path: path, options: options.decompression)
                records = try TarContentScan.records(path: path, options: options.decompression)
                if records != nil {
                    notes.append("no member index: made one in memory by decoding the archive once; "
                        + "weir --index adds one to the file, and the next mount reads no content")
                }
            } catch where error.kind == .notTar {
                reader = try SeekableReader(path: path, options: options.decompression)
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
        cache = FrameCache(reader: reader, budget: options.cacheBytes) { () throws(WeirError) in try watch.check() }
        checked = Locked([UInt64](repeating: 0, count: (tree.nodes.count + 63) / 64))
        self.archive = archive
        self.notes = notes
    }

    /// Why reads fail now: the archive changed since it was mounted; nil
    /// while it is the same file.
    package func changed() -> String? { watch.changed() }

    /// Checks that `node` may be read: the archive is the same, and the
    /// member's header blocks are what the index says (once per node: at
    /// its first open, or its first read when opens are not asked).
    ///
    /// - Returns: 0, or the errno to answer.
    package func open(_ node: Int, shownAs shown: String) -> Int32 {
        let entry = tree.nodes[node]
        guard entry.kind == .file else { return 0 }
        if changed() != nil { return EIO }
        if entry.sparse {
            log("\(name): \(shown): a sparse member: the mount does not read it (weir -d --member does)")
            return EIO
        }
        guard !isChecked(node) else { return 0 }
        guard !entry.header.isEmpty else {
            checked.withLock { $0[node / 64] |= 1 << UInt64(node % 64) }
            return 0
        }
        let header = [UInt8](unsafeUninitializedCapacity: entry.header.count) { buffer, count in
            count = 0
            do throws(WeirError) {
                try cache.read(entry.header, into: UnsafeMutableRawBufferPointer(buffer))
                count = entry.header.count
            } catch {
                log("\(name): \(shown): \(error.reason)")
            }
        }
        guard header.count == entry.header.count else { return EIO }
        let problem: String? = header.withUnsafeBytes { all in
            if let problem = TarHeaderCheck.problem(in: all, path: tree.memberPath(of: node))
                ?? MemberDataLengthCheck.problem(in: all, dataLength: entry.dataLength, type: entry.type,
                                                 link: tree.link(of: node)) {
                return "member index disagrees with the archive: \(problem)"
            }
            // A pax sparse member is type 0 with its real size: its data leaves the holes out.
            if TarHeaderCheck.paxRecord(in: all, key: Array("GNU.sparse.size".utf8)) != nil
                || TarHeaderCheck.paxRecord(in: all, key: Array("GNU.sparse.realsize".utf8)) != nil {
                return "a sparse member: the mount does not read it (weir -d --member does)"
            }
            return nil
        }
        if let problem {
            log("\(name): \(shown): \(problem)")
            return EIO
        }
        checked.withLock { $0[node / 64] |= 1 << UInt64(node % 64) }
        return 0
    }

    private func isChecked(_ node: Int) -> Bool {
        checked.withLock { $0[node / 64] & 1 << UInt64(node % 64) != 0 }
    }

    /// Reads the bytes of file `node` from `offset` into `buffer`.
    ///
    /// - Returns: the bytes read (fewer at the file's end), or minus the
    ///   errno to answer: EIO when a frame fails its checks or the archive
    ///   changed; no byte is handed on that did not pass.
    package func read(_ node: Int, shownAs shown: String, at offset: Int,
                      into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let entry = tree.nodes[node]
        guard entry.kind == .file else { return -Int(EISDIR) }
        guard offset >= 0 else { return -Int(EINVAL) }
        guard offset < entry.size else { return 0 }
        let count = min(buffer.count, entry.size - offset)
        // A change seen fails every read; a frame decoded for this one is checked once decoded.
        if entry.sparse || watch.changeSeen { return -Int(EIO) }
        if !isChecked(node), opensUnasked.current {
            let refused = open(node, shownAs: shown)
            if refused != 0 { return -Int(refused) }
        }
        guard offset + count <= entry.dataLength else {
            log("\(name): \(shown): the archive holds \(entry.dataLength) of its \(entry.size) bytes (cut short)")
            return -Int(EIO)
        }
        let start = entry.dataOffset + offset
        do throws(WeirError) {
            try cache.read(start ..< start + count, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0 ..< count]))
        } catch {
            // The change was told once, when seen.
            if !watch.changeSeen { log("\(name): \(shown): \(error.reason)") }
            return -Int(EIO)
        }
        let sequential = recentEnds.withLock { recent in
            // Header blocks of up to 64 KiB (long names, pax records) may lie between two members.
            if let stream = recent.ends.firstIndex(where: { $0 >= 0 && $0 <= start && start - $0 <= 64 << 10 }) {
                recent.ends[stream] = start + count
                return true
            }
            recent.ends[recent.next] = start + count
            recent.next = (recent.next + 1) % recent.ends.count
            return false
        }
        if sequential { cache.readAhead(after: start + count - 1) }
        return count
    }
}
