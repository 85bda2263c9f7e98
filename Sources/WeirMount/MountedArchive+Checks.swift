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
        do throws(WeirError) {
            let problem = try MemberRecordCheck.problem(
                blocks: range, through: nil, contentEnd: cache.reader.count, path: path, type: type, link: link,
                dataLength: dataLength, size: size, read: { blocks throws(WeirError) in try bytes(blocks) },
                passed: body)
            return problem.map { "member index disagrees with the archive: \($0)" }
        } catch {
            failed(error, node: node)
            return ""
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
        let read: Result<(map: TarSparseMap, mapLength: Int)?, TarSparseMap.Problem>
        do throws(WeirError) {
            read = try TarSparseMap.read(found, size: entry.size,
                                         dataLength: entry.dataLength) { count throws(WeirError) in
                try bytes(entry.dataOffset ..< entry.dataOffset + count)
            }
        } catch {
            failed(error, node: node)
            return ""
        }
        let map: TarSparseMap, length: Int
        switch read {
        case .success(nil): return nil
        case let .success(found?): (map, length) = found
        case let .failure(.damaged(why)), let .failure(.dataMapDamaged(why)): return "a sparse member: \(why)"
        case .failure(.dataMapPastData): return "a sparse member: its map runs past its data"
        case let .failure(.sizeDiffers(mapSize)):
            return "member index disagrees with the archive: its sparse map gives \(mapSize) bytes, "
                + "the index \(entry.size)"
        case let .failure(.segmentsPastData(stored, mapLength)):
            return "a sparse member: its map holds \(stored) bytes, its data \(entry.dataLength - mapLength)"
        }
        sparseMaps.withLock { $0[node] = (map, entry.dataOffset + length) }
        return nil
    }

    /// The content's bytes `range`, read through the cache.
    private func bytes(_ range: Range<Int>) throws(WeirError) -> [UInt8] {
        var failure: WeirError?
        let bytes = [UInt8](unsafeUninitializedCapacity: range.count) { buffer, filled in
            filled = 0
            do throws(WeirError) {
                try cache.read(range, into: UnsafeMutableRawBufferPointer(buffer))
                filled = range.count
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return bytes
    }
}
