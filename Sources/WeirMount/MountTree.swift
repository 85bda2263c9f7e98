import Glibc
import Weir
import WeirFormats
import WeirSystem

/// The tree a mounted archive shows, built from its member index alone
/// (nothing decoded): each name as `tar x` would leave it.
///
/// - A name stored twice shows its last version (a folder stored again
///   keeps what is in it, as `tar x` keeps a folder's files).
/// - Folders a member's name implies but the tar does not list are made
///   with `implied`'s owner, mode 0755 and time.
/// - A hard link is its target's node under one more name (its link count
///   one more); one to a name the archive does not hold is left out, as
///   `tar x` fails to make it.
/// - Names are taken as `tar x` takes them: leading `/` and `./` parts
///   dropped, empty and `.` parts skipped; a member whose name has a `..`
///   part is left out, as GNU tar refuses it.
///
/// Three flat arrays, whatever the number of members: the nodes; the
/// entries, each folder's a contiguous run sorted by name (by bytes, so a
/// listing's order is the same at every mount), found by binary search;
/// and one byte buffer holding the members' names as the index lists them
/// (an entry's name is a part of one of them) and the link targets.
package struct MountTree: Sendable {
    /// A name in a folder, and the node it leads to.
    package struct Entry: Sendable {
        /// Where the name begins in the tree's bytes, and its length.
        var nameStart: Int
        var nameLength: UInt32
        package var node: UInt32
    }

    /// Node 0 is the root folder.
    package private(set) var nodes: [MountNode]
    /// Every folder's entries, each folder's a run sorted by name.
    package private(set) var entries: [Entry]
    /// The members' names and link targets the nodes and entries point into.
    private var bytes: MountBytes
    /// Members left out (a `..` name, a hard link to nothing).
    package private(set) var skipped = 0
    /// The hard links' own records, by the node they lead to: a name that
    /// leads to a node is served only once its record, as well as the
    /// node's, passed the check against its own header blocks (a record
    /// that calls a file a hard link would show another member's bytes).
    package private(set) var hardLinks: [HardLink] = []

    /// A hard link's record: where its header blocks lie in the content,
    /// what it lists, and its name and target, ranges of the tree's bytes.
    package struct HardLink: Sendable {
        package var node: UInt32
        package var headerStart: Int
        var headerLength: UInt32
        package var dataLength: Int
        package var size: Int
        var pathStart: Int
        var pathLength: UInt32
        var linkLength: UInt32

        /// Where its header blocks lie in the content.
        package var header: Range<Int> { headerStart ..< headerStart + Int(headerLength) }
    }

    /// The owner, group and time of folders the tar implies.
    package struct Implied: Sendable {
        package var uid: Int
        package var gid: Int
        package var mtime: Int64

        package init(uid: Int, gid: Int, mtime: Int64) {
            (self.uid, self.gid, self.mtime) = (uid, gid, mtime)
        }

        /// A folder of these.
        var folder: MountNode {
            MountNode(kind: .folder, mode: 0o755, uid: UInt32(clamping: uid), gid: UInt32(clamping: gid),
                      mtime: mtime)
        }
    }

    /// The tree of the members `records` lists.
    ///
    /// - Throws: `WeirError` `.corrupt` for a record list that does not walk.
    package init(records: MemberIndex.Records, implied: Implied) throws(WeirError) {
        var building = MountTreeBuilding(implied: implied, members: records.count)
        do throws(WeirError) {
            try records.forEachRecord { member in building.add(member) }
        } catch {
            building.discard()
            throw error
        }
        (nodes, entries, bytes, skipped, hardLinks) = building.finish()
    }

    /// A tree of one file, `name`, holding the whole content of `size`
    /// bytes (a `.zst` that is not a tar).
    package init(singleFile name: [UInt8], size: Int, mode: UInt32, implied: Implied) {
        var root = implied.folder
        root.links = 2
        root.entryCount = 1
        var file = MountNode(kind: .file, mode: mode, uid: UInt32(clamping: implied.uid),
                             gid: UInt32(clamping: implied.gid), mtime: implied.mtime)
        file.size = size
        file.dataLength = size
        nodes = [root, file]
        entries = [Entry(nameStart: 0, nameLength: UInt32(clamping: name.count), node: 1)]
        bytes = MountBytes(name)
    }

    /// The node of `path` ("/", "/a/b"), nil when there is none.
    package func lookup(_ path: UnsafeRawBufferPointer) -> Int? {
        var node = 0
        var at = 0
        while at < path.count {
            if path[at] == UInt8(ascii: "/") {
                at += 1
                continue
            }
            var end = at + 1
            while end < path.count, path[end] != UInt8(ascii: "/") { end += 1 }
            guard let child = child(of: node, named: UnsafeRawBufferPointer(rebasing: path[at ..< end])) else {
                return nil
            }
            node = child
            at = end
        }
        return node
    }

    /// The node of `path` given as a string (tests).
    package func lookup(_ path: String) -> Int? {
        let bytes = Array(path.utf8)
        return bytes.withUnsafeBytes { lookup($0) }
    }

    /// The node that `name` leads to in folder `folder`: a binary search of
    /// its entries; nil when it has none of that name (or is no folder).
    package func child(of folder: Int, named name: UnsafeRawBufferPointer) -> Int? {
        let node = nodes[folder]
        guard node.kind == .folder else { return nil }
        var low = Int(node.firstEntry), high = low + Int(node.entryCount)
        return withExtendedLifetime(bytes) {
            let all = bytes.all
            while low < high {
                let middle = (low + high) / 2
                let order = Self.compare(UnsafeRawBufferPointer(rebasing: all[entries[middle].names]), name)
                if order == 0 { return Int(entries[middle].node) }
                if order < 0 { low = middle + 1 } else { high = middle }
            }
            return nil
        }
    }

    /// The entries of folder `folder`, sorted by name (none for another node).
    package func entries(of folder: Int) -> Range<Int> {
        let node = nodes[folder]
        guard node.kind == .folder else { return 0 ..< 0 }
        return Int(node.firstEntry) ..< Int(node.firstEntry) + Int(node.entryCount)
    }

    /// Calls `body` with the name of entry `entry`, as bytes.
    package func withName<Result>(of entry: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        withExtendedLifetime(bytes) { body(UnsafeRawBufferPointer(rebasing: bytes.all[entries[entry].names])) }
    }

    /// The names in folder `folder`, in the order a listing shows them (tests).
    package func names(in folder: Int) -> [[UInt8]] {
        entries(of: folder).map { entry in withName(of: entry) { Array($0) } }
    }

    /// The member's name of `node` as the index lists it (empty for a
    /// node the tar implies).
    package func memberPath(of node: Int) -> [UInt8] {
        let start = nodes[node].pathStart
        return bytes[start ..< start + Int(nodes[node].pathLength)]
    }

    /// The path of `node` as messages show it ("/dir/file"): its member's
    /// name as `tar x` takes it, else (a plain `.zst`'s one file, a folder
    /// the tar implies) the name the root lists it by, if any.
    package func shownPath(of node: Int) -> String {
        var shown: [UInt8] = []
        for part in memberPath(of: node).split(separator: UInt8(ascii: "/")) {
            guard !(part.count == 1 && part.first == UInt8(ascii: ".")) else { continue }
            shown.append(UInt8(ascii: "/"))
            shown += part
        }
        if shown.isEmpty, let entry = entries(of: 0).first(where: { Int(entries[$0].node) == node }) {
            shown = [UInt8(ascii: "/")] + withName(of: entry) { Array($0) }
        }
        return shown.isEmpty ? "/" : String(decoding: shown, as: UTF8.self)
    }

    /// The link target of `node` (a symbolic link's; empty for others).
    package func link(of node: Int) -> [UInt8] {
        let start = nodes[node].pathStart + Int(nodes[node].pathLength)
        return bytes[start ..< start + Int(nodes[node].linkLength)]
    }

    /// The hard links' records that lead to `node`, in archive order.
    package func hardLinks(to node: Int) -> ArraySlice<HardLink> {
        var low = 0, high = hardLinks.count
        while low < high {
            let middle = (low + high) / 2
            if Int(hardLinks[middle].node) < node { low = middle + 1 } else { high = middle }
        }
        var end = low
        while end < hardLinks.count, Int(hardLinks[end].node) == node { end += 1 }
        return hardLinks[low ..< end]
    }

    /// A hard link's name as its record lists it, and its target.
    package func names(of link: HardLink) -> (path: [UInt8], target: [UInt8]) {
        let pathEnd = link.pathStart + Int(link.pathLength)
        return (bytes[link.pathStart ..< pathEnd], bytes[pathEnd ..< pathEnd + Int(link.linkLength)])
    }

    /// Bytes order, a shorter name first when one begins the other:
    /// negative, zero or positive as `memcmp`.
    static func compare(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Int {
        let common = min(left.count, right.count)
        if common > 0, let a = left.baseAddress, let b = right.baseAddress {
            let order = memcmp(a, b, common)
            if order != 0 { return Int(order) }
        }
        return left.count - right.count
    }
}

extension MountTree.Entry {
    /// Where the name lies in the tree's bytes.
    var names: Range<Int> { nameStart ..< nameStart + Int(nameLength) }
}
