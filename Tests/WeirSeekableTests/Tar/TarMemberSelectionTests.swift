import Testing
@testable import WeirSeekable
import WeirTar

@Suite("Tar member selection")
struct TarMemberSelectionTests {
    static func member(_ position: Int, _ path: String, type: Character = "0", link: String = "") -> TarMember {
        TarMember(MemberIndex.Member(headerOffset: position * 1024, headerLength: 512, dataLength: 512, size: 10,
                                     type: type.asciiValue!, path: Array(path.utf8), link: Array(link.utf8)),
                  position: position, previousEnd: position * 1024)
    }

    @Test("the selection keeps archive order, names the patterns that matched nothing, brings hard links' targets")
    func selects() {
        let members = [
            Self.member(0, "d/"), Self.member(1, "d/a"), Self.member(2, "e/b"),
            Self.member(3, "d/h", type: "1", link: "e/b"), Self.member(4, "e/c", type: "1", link: "d/h"),
            Self.member(5, "f/x"),
        ]
        let patterns = [TarMemberPattern("e/c"), TarMemberPattern("nope"), TarMemberPattern("d/a")]
        let selection = TarMemberSelection(members: members, patterns: patterns)
        // e/c links to d/h, a link to e/b: both come, in archive order.
        #expect(selection.members.map(\.position) == [1, 2, 3, 4])
        #expect(selection.unmatched == [TarMemberPattern("nope")])
        #expect(TarMemberSelection(members: members, patterns: [TarMemberPattern("d")]).members.map(\.position)
                    == [0, 1, 2, 3])
    }
}
