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
        #expect(Set(root.children.keys) == [Array("a".utf8), Array("x".utf8)])
        let file = try #require(tree.lookup("/a/b/file"))
        #expect(tree.lookup("/a/hard") == file && tree.nodes[file].links == 2 && tree.nodes[file].size == 2)
        let a = try #require(tree.lookup("/a"))
        #expect(tree.nodes[a].uid == 1 && tree.nodes[a].mode == 0o755 && tree.nodes[a].links == 3)
        let b = try #require(tree.lookup("/a/b"))
        #expect(tree.nodes[b].mtime == 6 && tree.nodes[b].children.count == 1)
        let link = try #require(tree.lookup("/a/link"))
        #expect(tree.nodes[link].kind == .symbolicLink && tree.nodes[link].link == Array("b/file".utf8))
        #expect(tree.lookup("/x/y/z") != nil && tree.lookup("/evil") == nil && tree.lookup("/a/gone") == nil)
        #expect(tree.lookup("/") == 0)
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
