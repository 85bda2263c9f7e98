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
    /// The archive's absolute path, whose identity each read checks.
    private let path: String
    package let tree: MountTree
    package let cache: FrameCache
    /// What the user should know once mounted (an index made in memory, a
    /// seek table that did not match the frames).
    package let notes: [String]
    /// Whether the archive is a tar (not a single file).
    package let isTar: Bool
    private let identity: ArchiveIdentity
    /// The archive whose descriptor the reader reads through: kept open while mounted.
    private let archive: TarArchive?
    /// Where messages go: standard error, or the system log once in the background.
    private let log: @Sendable (String) -> Void
    /// Nodes whose header blocks were checked against the index; a failed
    /// check is not kept (it fails again, with its message).
    private let checked = Locked(Set<Int>())
    /// Per node, where its last read ended: a read that starts there reads on.
    private let lastEnds = Locked([Int: Int]())
    /// Whether the change of the archive was told already (once is enough).
    private let changeTold = Locked(false)

    /// Opens the archive at `path` (absolute), named `name` in messages.
    ///
    /// - Throws: `WeirError` for a file that is not zstd, or cannot be read,
    ///   or whose index or seek table is damaged.
    package init(path: String, name: String, options: MountOptions,
                 log: @escaping @Sendable (String) -> Void) throws(WeirError) {
        self.name = name
        self.path = path
        self.log = log
        let file = try Descriptor.openForReading(path)
        let status: FileStatus
        do throws(WeirError) { status = try file.status() } catch {
            file.close()
            throw error
        }
        file.close()
        guard status.mode & S_IFMT == S_IFREG else {
            throw WeirError.notRegularFile(path: name, operation: .open)
        }
        identity = ArchiveIdentity(status)
        let implied = MountTree.Implied(uid: Int(status.owner), gid: Int(status.group),
                                        mtime: Int64(status.modificationTime.tv_sec))
        var notes: [String] = []
        let reader: SeekableReader
        var records: MemberIndex.Records?
        var archive: TarArchive?
        do throws(WeirError) {
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
        notes += reader.warnings
        if let records {
            tree = try MountTree(records: records, implied: implied)
            isTar = true
        } else {
            let output = (try? OutputName.decompressed(for: name)) ?? name + ".out"
            let base = output.split(separator: "/").last.map(String.init) ?? output
            tree = MountTree(singleFile: Array(base.utf8), size: reader.count, mode: UInt32(status.mode) & 0o444,
                             implied: implied)
            isTar = false
        }
        cache = FrameCache(reader: reader, budget: options.cacheBytes)
        self.archive = archive
        self.notes = notes
    }

    /// Why reads fail now: the archive changed since it was mounted; nil
    /// while it is the same file.
    package func changed() -> String? {
        guard let change = identity.change(to: FileStatus.of(path: path).map(ArchiveIdentity.init)) else {
            return nil
        }
        let first = changeTold.withLock { told in
            defer { told = true }
            return !told
        }
        if first { log("\(name): changed since it was mounted (\(change)): reads fail with EIO") }
        return change
    }

    /// Checks that `node` may be read: the archive is the same, and the
    /// member's header blocks are what the index says (at its first open).
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
        guard !entry.header.isEmpty, !checked.withLock({ $0.contains(node) }) else { return 0 }
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
            if let problem = TarHeaderCheck.problem(in: all, path: entry.memberPath)
                ?? MemberDataLengthCheck.problem(in: all, dataLength: entry.dataLength, type: entry.type,
                                                 link: entry.link) {
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
        checked.withLock { _ = $0.insert(node) }
        return 0
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
        if entry.sparse || changed() != nil { return -Int(EIO) }
        guard offset + count <= entry.dataLength else {
            log("\(name): \(shown): the archive holds \(entry.dataLength) of its \(entry.size) bytes (cut short)")
            return -Int(EIO)
        }
        let start = entry.dataOffset + offset
        do throws(WeirError) {
            try cache.read(start ..< start + count, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0 ..< count]))
        } catch {
            log("\(name): \(shown): \(error.reason)")
            return -Int(EIO)
        }
        // Bytes read while the archive changed are not handed on.
        if changed() != nil { return -Int(EIO) }
        let sequential = lastEnds.withLock { ends in
            defer { ends[node] = offset + count }
            return ends[node] == offset
        }
        if sequential { cache.readAhead(after: start + count - 1) }
        return count
    }
}
