import Glibc
import Testing
@testable import WeirFormats
@testable import WeirMount
@testable import WeirSystem
@testable import WeirTar

/// The mount's tree from a member index: names as `tar x` leaves them.
@Suite("Mount tree")
struct MountTreeTests {
    /// The records of `members` (name, type, link), each a header block and no data.
    func records(_ members: [(String, Character, String)]) throws -> MemberIndex.Records {
        var list: [MemberIndex.Member] = []
        var end = 0
        for (position, (name, type, link)) in members.enumerated() {
            list.append(.init(headerOffset: end, headerLength: 512, dataLength: 0, size: position,
                              mtime: Int64(position), mode: 0o640, uid: 7, gid: 8,
                              type: UInt8(ascii: type.unicodeScalars.first ?? "0"),
                              path: Array(name.utf8), link: Array(link.utf8)))
            end = list[position].end
        }
        let index = MemberIndex(members: list, endedEarly: false, endOffset: end, contentSize: end + 1024)
        return try MemberIndex.records(frame: try index.encoded(path: "t.tar.zst"), path: "t.tar.zst", offset: 0)
    }

    @Test("implied folders, a name stored twice, hard links as one node, `..` left out, the root's metadata")
    func tree() throws {
        let tree = try MountTree(records: records([
            ("./", "5", ""), ("./a/b/file", "0", ""), ("a/b/file", "0", ""), ("a/hard", "1", "a/b/file"),
            ("a/link", "2", "b/file"), ("../evil", "0", ""), ("a/b", "5", ""), ("x//y/./z", "0", ""),
            ("a/gone", "1", "nothing"), ("a/b/file", "1", "a/hard"),
        ]), implied: .init(uid: 1, gid: 2, mtime: 3))
        #expect(tree.skipped == 2)
        let root = tree.nodes[0]
        #expect(root.mtime == 0 && root.uid == 7 && root.mode == 0o640)
        #expect(tree.names(in: 0) == [Array("a".utf8), Array("x".utf8)])
        let file = try #require(tree.lookup("/a/b/file"))
        #expect(tree.lookup("/a/hard") == file && tree.nodes[file].links == 2 && tree.nodes[file].size == 2)
        let a = try #require(tree.lookup("/a"))
        #expect(tree.nodes[a].uid == 1 && tree.nodes[a].mode == 0o755 && tree.nodes[a].links == 3)
        let b = try #require(tree.lookup("/a/b"))
        #expect(tree.nodes[b].mtime == 6 && tree.entries(of: b).count == 1)
        let link = try #require(tree.lookup("/a/link"))
        #expect(tree.nodes[link].kind == .symbolicLink && Array(tree.link(of: link)) == Array("b/file".utf8))
        #expect(tree.lookup("/x/y/z") != nil && tree.lookup("/evil") == nil && tree.lookup("/a/gone") == nil)
        #expect(tree.lookup("/") == 0)
    }

    @Test("a folder lists its names sorted by bytes, whatever the archive's order")
    func order() throws {
        let names = ["b", "a", "B", "a.c", "ab", "é", "a-", "_"]
        let tree = try MountTree(records: records(names.map { ("d/" + $0, "0", "") } + [("d", "5", "")]),
                                 implied: .init(uid: 0, gid: 0, mtime: 0))
        let d = try #require(tree.lookup("/d"))
        #expect(tree.names(in: d) == names.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(tree.names(in: 0) == [Array("d".utf8)])
        for name in names { #expect(tree.lookup("/d/" + name) != nil) }
        #expect(tree.lookup("/d/c") == nil && tree.lookup("/d/a/x") == nil && tree.lookup("/e") == nil)
    }

    @Test("many members in many folders: every name found, every folder's count and link count right")
    func many() throws {
        var members: [(String, Character, String)] = []
        for folder in (0 ..< 60).reversed() {
            for file in 0 ..< 50 { members.append(("top/f\(folder)/s\(file % 3)/file\(file)", "0", "")) }
            members.append(("top/f\(folder)/link", "1", "top/f\(folder)/s0/file0"))
        }
        members.append(("top/f7/s1/file1", "0", ""))
        let tree = try MountTree(records: records(members), implied: .init(uid: 0, gid: 0, mtime: 0))
        #expect(tree.skipped == 0)
        let top = try #require(tree.lookup("/top"))
        #expect(tree.entries(of: top).count == 60 && tree.nodes[top].links == 62)
        let sortedNames = (0 ..< 60).map { Array("f\($0)".utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(tree.names(in: top) == sortedNames)
        for folder in 0 ..< 60 {
            let f = try #require(tree.lookup("/top/f\(folder)"))
            #expect(tree.entries(of: f).count == 4 && tree.nodes[f].links == 5)
            for file in 0 ..< 50 { #expect(tree.lookup("/top/f\(folder)/s\(file % 3)/file\(file)") != nil) }
            let first = try #require(tree.lookup("/top/f\(folder)/s0/file0"))
            #expect(tree.lookup("/top/f\(folder)/link") == first && tree.nodes[first].links == 2)
        }
        // The name stored twice is its last member's.
        let again = try #require(tree.lookup("/top/f7/s1/file1"))
        #expect(Array(tree.memberPath(of: again)) == Array("top/f7/s1/file1".utf8) && again == tree.nodes.count - 1)
    }

    /// With and without a hard link, which puts every name in the builder's table.
    @Test("names stored twice, files, folders and links in any order: the tree `tar x` leaves")
    func storedTwice() throws {
        var generator = SeededGenerator(seed: 70)
        for round in 0 ..< 300 {
            var members: [(String, Character, String)] = []
            let withHardLinks = round % 2 == 1
            for _ in 0 ..< Int.random(in: 1 ... 24, using: &generator) {
                let depth = Int.random(in: 1 ... 3, using: &generator)
                let path = (0 ..< depth).map { _ in ["a", "b", "c"].randomElement(using: &generator) ?? "a" }
                    .joined(separator: "/")
                let types: [Character] = withHardLinks ? ["0", "0", "5", "2", "1"] : ["0", "0", "5", "2"]
                let type = types.randomElement(using: &generator) ?? "0"
                let target = type == "1" ? (members.randomElement(using: &generator)?.0 ?? "a") : ""
                members.append((type == "5" && Bool.random(using: &generator) ? path + "/" : path, type, target))
            }
            let tree = try MountTree(records: records(members), implied: .init(uid: 0, gid: 0, mtime: -1))
            let model = TarExtractionModel(members)
            #expect(tree.skipped == model.skipped, "\(members)")
            // Every name the model has, the tree has, with the same member (its mtime is its position) and
            // link count; and no other.
            var pending: [(path: String, node: Int)] = [("", 0)]
            while let (path, node) = pending.popLast() {
                let found = try #require(tree.lookup(path.isEmpty ? "/" : path), "\(path) in \(members)")
                #expect(tree.nodes[found].kind == model.nodes[node].kind, "\(path) in \(members)")
                #expect(tree.nodes[found].mtime == model.nodes[node].mtime, "\(path) in \(members)")
                #expect(tree.nodes[found].links == model.links(of: node), "\(path) in \(members)")
                let names = model.nodes[node].children.keys.sorted { Array($0.utf8).lexicographicallyPrecedes($1.utf8) }
                #expect(tree.names(in: found) == names.map { Array($0.utf8) }, "\(path) in \(members)")
                for name in names { pending.append((path + "/" + name, model.nodes[node].children[name] ?? 0)) }
            }
        }
    }

    @Test("a single file: the whole content under one name")
    func single() {
        let tree = MountTree(singleFile: Array("data".utf8), size: 42, mode: 0o444,
                             implied: .init(uid: 0, gid: 0, mtime: 9))
        let file = tree.lookup("/data")
        #expect(file == 1 && tree.nodes[1].size == 42 && tree.nodes[0].links == 2)
    }

    @Test("the archive's identity: what changed is said")
    func identity() {
        var status = FileStatus(Glibc.stat())
        status.size = 10
        let before = ArchiveIdentity(status)
        #expect(before.change(to: before) == nil)
        var after = before
        after.inode += 1
        #expect(before.change(to: after) == "another file took its name")
        #expect(before.change(to: nil) == "it is gone")
    }
}

/// What `tar x` leaves of members (name, type, link), one member at a time,
/// in dictionaries: the reference the tree is held to. A member's mtime is
/// its position; a folder the tar implies has -1.
private struct TarExtractionModel {
    struct Node {
        var kind: MountNode.Kind
        var mtime: Int64
        var links: Int32 = 1
        var children: [String: Int] = [:]
    }

    var nodes = [Node(kind: .folder, mtime: -1)]
    var skipped = 0

    init(_ members: [(String, Character, String)]) {
        for (position, (name, type, link)) in members.enumerated() { add(position, name, type, link) }
    }

    static func parts(_ name: String) -> [String]? {
        let parts = name.split(separator: "/", omittingEmptySubsequences: true).map(String.init).filter { $0 != "." }
        return parts.contains("..") ? nil : parts
    }

    /// The node `parts` lead to, nil when there is none.
    func find(_ parts: [String]) -> Int? {
        var node = 0
        for part in parts {
            guard nodes[node].kind == .folder, let child = nodes[node].children[part] else { return nil }
            node = child
        }
        return node
    }

    mutating func bind(_ name: String, in folder: Int, to node: Int) {
        if let old = nodes[folder].children[name] { nodes[old].links -= 1 }
        nodes[folder].children[name] = node
    }

    mutating func add(_ position: Int, _ name: String, _ type: Character, _ link: String) {
        guard let parts = Self.parts(name) else {
            skipped += 1
            return
        }
        guard let last = parts.last else { return }
        var parent = 0
        for part in parts.dropLast() {
            if let child = nodes[parent].children[part], nodes[child].kind == .folder {
                parent = child
                continue
            }
            nodes.append(Node(kind: .folder, mtime: -1))
            bind(part, in: parent, to: nodes.count - 1)
            parent = nodes.count - 1
        }
        let existing = nodes[parent].children[last]
        if type == "5", let existing, nodes[existing].kind == .folder {
            nodes[existing].mtime = Int64(position)
            return
        }
        let node: Int
        if type == "1" {
            guard let targetParts = Self.parts(link), let target = find(targetParts),
                  nodes[target].kind != .folder else {
                skipped += 1
                return
            }
            node = target
            nodes[node].links += 1
        } else {
            let kind: MountNode.Kind = type == "5" ? .folder : type == "2" ? .symbolicLink : .file
            nodes.append(Node(kind: kind, mtime: Int64(position)))
            node = nodes.count - 1
        }
        bind(last, in: parent, to: node)
    }

    /// A folder's link count (2 and one per folder in it); another node's names.
    func links(of node: Int) -> Int32 {
        guard nodes[node].kind == .folder else { return nodes[node].links }
        return 2 + Int32(nodes[node].children.values.count { nodes[$0].kind == .folder })
    }
}

/// A small deterministic generator (SplitMix64), so failures reproduce.
private struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
