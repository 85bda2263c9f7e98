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
package struct MountTree: Sendable {
    /// Node 0 is the root folder.
    package private(set) var nodes: [MountNode]
    /// Members left out (a `..` name, a hard link to nothing).
    package private(set) var skipped = 0

    /// The owner, group and time of folders the tar implies.
    package struct Implied: Sendable {
        package var uid: Int
        package var gid: Int
        package var mtime: Int64

        package init(uid: Int, gid: Int, mtime: Int64) {
            (self.uid, self.gid, self.mtime) = (uid, gid, mtime)
        }
    }

    private let implied: Implied

    /// An empty tree: its root folder only.
    package init(implied: Implied) {
        self.implied = implied
        nodes = [MountNode(kind: .folder, mode: 0o755, uid: implied.uid, gid: implied.gid, mtime: implied.mtime)]
    }

    /// The tree of the members `records` lists.
    ///
    /// - Throws: `WeirError` `.corrupt` for a record list that does not walk.
    package init(records: MemberIndex.Records, implied: Implied) throws(WeirError) {
        self.init(implied: implied)
        try records.forEach { member throws(WeirError) in add(member) }
        countFolderLinks()
    }

    /// A tree of one file, `name`, holding the whole content of `size`
    /// bytes (a `.zst` that is not a tar).
    package init(singleFile name: [UInt8], size: Int, mode: UInt32, implied: Implied) {
        self.init(implied: implied)
        var file = MountNode(kind: .file, mode: mode, uid: implied.uid, gid: implied.gid, mtime: implied.mtime)
        file.size = size
        file.dataLength = size
        nodes.append(file)
        nodes[0].children[name] = 1
        countFolderLinks()
    }

    /// The node of `path` ("/", "/a/b"), nil when there is none.
    package func lookup(_ path: UnsafeRawBufferPointer) -> Int? {
        var node = 0
        for part in path.split(separator: UInt8(ascii: "/")) where !part.isEmpty {
            guard nodes[node].kind == .folder, let child = nodes[node].children[Array(part)] else { return nil }
            node = child
        }
        return node
    }

    /// The node of `path` given as a string (tests).
    package func lookup(_ path: String) -> Int? {
        var bytes = Array(path.utf8)
        return bytes.withUnsafeMutableBytes { lookup(UnsafeRawBufferPointer($0)) }
    }

    /// The parts of a member's name as `tar x` takes it; nil for a name
    /// with a `..` part.
    static func parts(of name: [UInt8]) -> [[UInt8]]? {
        var parts: [[UInt8]] = []
        for part in name.split(separator: UInt8(ascii: "/")) where !part.isEmpty && !part.elementsEqual([46]) {
            if part.elementsEqual([46, 46]) { return nil }
            parts.append(Array(part))
        }
        return parts
    }

    private mutating func add(_ member: MemberIndex.Member) {
        guard let parts = Self.parts(of: member.path) else {
            skipped += 1
            return
        }
        let isFolder = member.type == UInt8(ascii: "5")
        guard let last = parts.last else {
            // The archive's own root ("./"): its metadata is the mount's root's.
            if isFolder { setMetadata(of: 0, from: member) }
            return
        }
        let parent = folder(parts.dropLast())
        let existing = nodes[parent].children[last]
        if isFolder, let existing, nodes[existing].kind == .folder {
            setMetadata(of: existing, from: member)
            return
        }
        let node: Int
        if member.type == UInt8(ascii: "1") {
            guard let target = Self.parts(of: member.link).flatMap({ find($0) }), nodes[target].kind != .folder else {
                skipped += 1
                return
            }
            node = target
            nodes[node].links += 1
        } else {
            node = nodes.count
            nodes.append(Self.node(of: member))
        }
        // The name leaves its old node (the same one, for a hard link to itself).
        if let existing { nodes[existing].links -= 1 }
        nodes[parent].children[last] = node
    }

    /// The node of the names `parts`, nil when there is none.
    private func find(_ parts: [[UInt8]]) -> Int? {
        var node = 0
        for part in parts {
            guard nodes[node].kind == .folder, let child = nodes[node].children[part] else { return nil }
            node = child
        }
        return node
    }

    /// The folder of the names `parts`, made (and its parents) when the tar
    /// did not list it; a name that is not a folder there is replaced by one.
    private mutating func folder(_ parts: ArraySlice<[UInt8]>) -> Int {
        var node = 0
        for part in parts {
            if let child = nodes[node].children[part], nodes[child].kind == .folder {
                node = child
                continue
            }
            if let child = nodes[node].children[part] { nodes[child].links -= 1 }
            let made = nodes.count
            nodes.append(MountNode(kind: .folder, mode: 0o755, uid: implied.uid, gid: implied.gid,
                                   mtime: implied.mtime))
            nodes[node].children[part] = made
            node = made
        }
        return node
    }

    private mutating func setMetadata(of index: Int, from member: MemberIndex.Member) {
        nodes[index].mode = member.mode & 0o7777
        nodes[index].uid = member.uid
        nodes[index].gid = member.gid
        nodes[index].mtime = member.mtime
    }

    /// The node of a member that is not a hard link.
    private static func node(of member: MemberIndex.Member) -> MountNode {
        let kind: MountNode.Kind = switch member.type {
        case UInt8(ascii: "2"): .symbolicLink
        case UInt8(ascii: "3"): .characterDevice
        case UInt8(ascii: "4"): .blockDevice
        case UInt8(ascii: "5"): .folder
        case UInt8(ascii: "6"): .fifo
        default: .file
        }
        var node = MountNode(kind: kind, mode: member.mode & 0o7777, uid: member.uid, gid: member.gid,
                             mtime: member.mtime)
        node.type = member.type
        node.memberPath = member.path
        node.link = member.link
        node.header = member.headerOffset ..< member.dataOffset
        node.dataOffset = member.dataOffset
        node.dataLength = member.dataLength
        node.device = (member.devmajor, member.devminor)
        node.sparse = member.type == UInt8(ascii: "S")
        switch kind {
        case .file: node.size = member.size
        case .symbolicLink: node.size = member.link.count
        default: break
        }
        return node
    }

    /// Sets each folder's link count: 2, and one per folder in it.
    private mutating func countFolderLinks() {
        for index in nodes.indices where nodes[index].kind == .folder {
            nodes[index].links = 2 + nodes[index].children.values.count { nodes[$0].kind == .folder }
        }
    }
}
