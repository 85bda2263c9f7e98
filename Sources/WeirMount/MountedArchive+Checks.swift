import Glibc
import Weir
import WeirSystem

/// The checks a mounted archive makes before it serves a node
/// (docs/mount.md, "How a read goes"): each record it serves against the
/// member's own header blocks, once per node, and a sparse file's map.
extension MountedArchive {
    /// Checks that file `node` may be read: the archive is the same, and
    /// its records are what their header blocks say (``check(_:)``).
    ///
    /// - Returns: 0, or the errno to answer.
    package func open(_ node: Int) -> Int32 {
        guard tree.nodes[node].kind == .file else { return 0 }
        fileTouched(lookedUp: false)
        if watch.changed(unlessCheckedWithin: 1_000_000) != nil { return EIO }
        return check(node)
    }

    /// Checks, once per node, that what the mount serves of `node` is what
    /// the member's own header blocks say, as `weir -d --member` checks a
    /// member (``MemberRecordCheck``: its name, type, link target, data
    /// length and size), and so is the record of each hard link that leads
    /// to it; a sparse file's map is read then. Made before a file's first
    /// read (its open, or its first read when opens are not asked), a
    /// symbolic link's first reading, a folder's first listing, and a
    /// device's or FIFO's first lookup (the kernel opens those itself).
    ///
    /// - Returns: 0, or EIO (with a message naming the archive, the name
    ///   and what disagrees).
    package func check(_ node: Int) -> Int32 {
        guard !isChecked(node) else { return 0 }
        let entry = tree.nodes[node]
        var sparse = TarSparseMap.Found.notSparse
        if !entry.header.isEmpty {
            // What is served of the node: a symbolic link's size is its target's length, not its record's.
            let size = entry.kind == .symbolicLink ? 0 : entry.size
            let problem = recordProblem(node: node, header: entry.header, path: tree.memberPath(of: node),
                                        type: entry.type, link: tree.link(of: node), dataLength: entry.dataLength,
                                        size: size) { header in
                if entry.kind == .file { sparse = TarSparseMap.parse(header: header) }
            }
            if let problem {
                if !problem.isEmpty { log("\(name): \(tree.shownPath(of: node)): \(problem)") }
                return EIO
            }
        }
        for link in tree.hardLinks(to: node) {
            let (path, target) = tree.names(of: link)
            if let problem = recordProblem(node: node, header: link.header, path: path, type: UInt8(ascii: "1"),
                                           link: target, dataLength: link.dataLength, size: link.size) {
                if !problem.isEmpty { log("\(name): /\(String(decoding: path, as: UTF8.self)): \(problem)") }
                return EIO
            }
        }
        if let problem = sparseProblem(sparse, of: node) {
            if !problem.isEmpty { log("\(name): \(tree.shownPath(of: node)): \(problem)") }
            return EIO
        }
        checked.withLock { $0[node / 64] |= 1 << UInt64(node % 64) }
        return 0
    }

    /// Checks `node` (a folder, a link, a device or a FIFO: ``check(_:)``),
    /// with, first, every other node of those kinds whose header blocks lie
    /// in the same frame, from the frame's bytes: a walk of the tree (`find`,
    /// `ls -lR`) lists folders and reads links in the tree's order, which is
    /// not the archive's, and a frame decoded for each would be decoded again
    /// and again (a tree of 3,187 folders in 70 frames: 18 s for `find`, not
    /// 2). A node whose check fails here, or whose header blocks cross a
    /// frame, is checked alone, with its message.
    ///
    /// - Returns: 0, or EIO.
    package func checkNear(_ node: Int) -> Int32 {
        let header = tree.nodes[node].header
        let reader = cache.reader
        if !isChecked(node), !header.isEmpty, header.upperBound <= reader.count {
            let frame = reader.contentRange(ofFrame: reader.frame(containing: header.lowerBound))
            var low = 0, high = others.count
            while low < high {
                let middle = (low + high) / 2
                if tree.nodes[Int(others[middle])].header.lowerBound < frame.lowerBound {
                    low = middle + 1
                } else {
                    high = middle
                }
            }
            var passed: [Int] = []
            _ = try? cache.withBytes(frame) { all in
                for other in others[low...].lazy.map({ Int($0) }) {
                    let entry = tree.nodes[other], at = entry.header
                    guard at.upperBound <= frame.upperBound else { break }
                    guard tree.hardLinks(to: other).isEmpty else { continue }
                    let blocks = UnsafeRawBufferPointer(
                        rebasing: all[(at.lowerBound - frame.lowerBound) ..< (at.upperBound - frame.lowerBound)])
                    if MemberRecordCheck.problem(in: blocks, path: tree.memberPath(of: other), type: entry.type,
                                                 link: tree.link(of: other), dataLength: entry.dataLength,
                                                 size: 0) == nil {
                        passed.append(other)
                    }
                }
            }
            checked.withLock { bits in
                for other in passed { bits[other / 64] |= 1 << UInt64(other % 64) }
            }
        }
        return check(node)
    }

    /// Why the record of `path` — its `type`, `link`, `dataLength` and
    /// `size` — is not what its header blocks at `header` (content
    /// offsets) say; `body` is handed the blocks once they passed.
    ///
    /// - Returns: nil when it is; empty when the blocks could not be read
    ///   (told already, naming `node`'s file).
    private func recordProblem(node: Int, header range: Range<Int>, path: [UInt8], type: UInt8, link: [UInt8],
                               dataLength: Int, size: Int,
                               _ body: (UnsafeRawBufferPointer) -> Void = { _ in }) -> String? {
        guard range.upperBound <= cache.reader.count else {
            return "member index disagrees with the archive: its header blocks end at \(range.upperBound), "
                + "past the content's end at \(cache.reader.count)"
        }
        if let problem = MemberRecordCheck.headerBlocksProblem(range.count) {
            return "member index disagrees with the archive: \(problem)"
        }
        let header = [UInt8](unsafeUninitializedCapacity: range.count) { buffer, count in
            count = 0
            do throws(WeirError) {
                try cache.read(range, into: UnsafeMutableRawBufferPointer(buffer))
                count = range.count
            } catch {
                failed(error, node: node)
            }
        }
        guard header.count == range.count else { return "" }
        return header.withUnsafeBytes { all in
            if let problem = MemberRecordCheck.problem(in: all, path: path, type: type, link: link,
                                                       dataLength: dataLength, size: size) {
                return "member index disagrees with the archive: \(problem)"
            }
            body(all)
            return nil
        }
    }

    /// Keeps the map of sparse member `node` (`found` from its header
    /// blocks; a pax 1.0 map read from its data's start).
    ///
    /// - Returns: why its map cannot be read or does not fit its stored
    ///   data (empty when a read failed: told already); nil when kept, or
    ///   not a sparse member.
    private func sparseProblem(_ found: TarSparseMap.Found, of node: Int) -> String? {
        let entry = tree.nodes[node]
        var map: TarSparseMap
        var length = 0
        switch found {
        case .notSparse: return nil
        case let .damaged(why): return "a sparse member: \(why)"
        case let .map(whole): map = whole
        case let .mapInData(size):
            // The map's lines, read a block more at a time (a map of a few segments takes one).
            var count = min(entry.dataLength, TarHeaderCheck.block)
            while true {
                var failure: WeirError?
                let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, filled in
                    filled = 0
                    do throws(WeirError) {
                        try cache.read(entry.dataOffset ..< entry.dataOffset + count,
                                       into: UnsafeMutableRawBufferPointer(buffer))
                        filled = count
                    } catch {
                        failure = error
                    }
                }
                if let failure {
                    failed(failure, node: node)
                    return ""
                }
                switch bytes.withUnsafeBytes({ TarSparseMap.inData($0, size: size) }) {
                case let .map(found, mapLength):
                    (map, length) = (found, mapLength)
                case .needsMore where count < entry.dataLength:
                    count = min(entry.dataLength, count * 4)
                    continue
                case .needsMore: return "a sparse member: its map runs past its data"
                case let .damaged(why): return "a sparse member: \(why)"
                }
                break
            }
        }
        guard map.size == entry.size else {
            return "member index disagrees with the archive: its sparse map gives \(map.size) bytes, "
                + "the index \(entry.size)"
        }
        guard length + map.storedLength <= entry.dataLength else {
            return "a sparse member: its map holds \(map.storedLength) bytes, its data \(entry.dataLength - length)"
        }
        sparseMaps.withLock { $0[node] = (map, entry.dataOffset + length) }
        return nil
    }
}
