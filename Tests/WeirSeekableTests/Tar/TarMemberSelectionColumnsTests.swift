import Testing
@testable import WeirSeekable
import WeirTar
@testable import WeirTarTestSupport

/// Selecting from a version 2 index walks its columns in place, making no
/// row of them: what it selects must be what the members as values select
/// (names stored twice give their last version, links bring their targets,
/// links to later members are named), whatever the patterns.
@Suite("Member selection from version 2 columns")
struct TarMemberSelectionColumnsTests {
    /// Members over several blocks of columns (the writer's blocks are
    /// filled by long names): folders kept and left, a name stored twice,
    /// hard links to an earlier member, to a name stored twice, to a link,
    /// to a later member; a symbolic link, a device, owners that change, a
    /// name that is not UTF-8.
    static func index() -> MemberIndex {
        var members: [MemberIndex.Member] = []
        var end = 0
        func add(_ path: String, type: String = "0", size: Int = 0, link: String = "", owner: String = "u",
                 bytes: [UInt8]? = nil, device: (Int, Int) = (0, 0)) {
            let type = UInt8(ascii: Unicode.Scalar(type) ?? "0")
            let data = type == UInt8(ascii: "0") ? (size + 511) / 512 * 512 : 0
            members.append(.init(headerOffset: end, headerLength: 512, dataLength: data, size: size,
                                 mtime: Int64(1_700_000_000 + members.count % 5), mode: 0o644, uid: members.count % 3,
                                 gid: 7, type: type, path: bytes ?? Array(path.utf8), link: Array(link.utf8),
                                 uname: Array(owner.utf8), gname: Array("g".utf8), devmajor: device.0,
                                 devminor: device.1))
            end = members[members.count - 1].end
        }
        add("root/", type: "5")
        add("root/a/", type: "5")
        add("root/a/x.c", size: 10)
        add("root/a/b/deep/y.c", size: 600)
        add("root/later-link", type: "1", link: "root/z/after")
        add("root/a/x.c", size: 20, owner: "v")
        add("root/hard", type: "1", link: "root/a/x.c")
        add("root/hard2", type: "1", link: "root/hard")
        add("root/sym", type: "2", link: "a/x.c")
        add("root/dev/loop0", type: "4", device: (7, 0))
        add("", bytes: Array("root/latin-".utf8) + [0xE9, 0x2E, 0x63])
        for number in 0 ..< 1000 {
            add("root/d\(number / 50)/sub\(number % 3)/" + String(repeating: "n", count: 100 + number % 40)
                + "-\(number).c", size: number % 2000, owner: number % 100 == 0 ? "w" : "u")
        }
        add("root/z/after", size: 3)
        add("root/a/x.c", size: 30)
        return MemberIndex(members: members, endedEarly: false, endOffset: end, contentSize: end + 1024)
    }

    static let patterns: [[String]] = [
        ["root/a/x.c"], ["root/hard"], ["root/hard2"], ["root/later-link"], ["root/a"], ["root/a/"], ["*.c"],
        ["root/d1?/*"], ["root/sym", "root/dev"], ["nothing", "root/z"], [""], ["root/d3/sub1", "root/hard2", "x"],
        ["root/latin-*"], ["root/a/b/deep/y.c", "root/a/b/deep/y.c"],
    ]

    @Test("selection from the columns equals selection from every member as a value, checked or not")
    func selectionMatchesValues() throws {
        let index = Self.index()
        // Blocks of 16 KiB (the writer's are 1 MiB): the walks cross a
        // block's end several times in a thousand members.
        let blockBytes = 16 << 10
        #expect(index.members.reduce(0) { $0 + $1.path.count + 24 } > 4 * blockBytes, "the members fill blocks")
        let frame = try MemberIndex.version2(index, blockBytes: blockBytes)
        for checking in [true, false] {
            let records = try MemberIndex.records(frame: frame, path: "a.tar.zst", offset: 0, checking: checking)
            for texts in Self.patterns {
                let patterns = texts.map { TarMemberPattern($0) }
                let walked = try TarMemberSelection(records: records, patterns: patterns)
                let values = TarMemberSelection(records: index.members, patterns: patterns)
                #expect(walked == values, "\(texts)")
            }
            #expect(try records.members() == index.members)
        }
        // The cases the patterns are there for hold: a link brings the last version before it, and names the later.
        let records = try MemberIndex.records(frame: frame, path: "a.tar.zst", offset: 0)
        let hard = try TarMemberSelection(records: records, patterns: [TarMemberPattern("root/hard2")])
        #expect(hard.members.map(\.position) == [5, 6, 7])
        let later = try TarMemberSelection(records: records, patterns: [TarMemberPattern("root/later-link")])
        #expect(later.linksToLaterMembers.map(\.target) == [Array("root/z/after".utf8)])
        let twice = try TarMemberSelection(records: records, patterns: [TarMemberPattern("root/a/x.c")])
        #expect(twice.members.map(\.position) == [2, 5, index.members.count - 1])
    }
}
