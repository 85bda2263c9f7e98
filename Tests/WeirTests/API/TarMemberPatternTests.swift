import Testing
@testable import Weir

@Suite("Tar member patterns and selection")
struct TarMemberPatternTests {
    @Test("as tar x --wildcards: * and ? cross '/', a folder's name takes what is under it, trailing slashes dropped")
    func matchesAsTar() {
        let cases: [(pattern: String, path: String, matches: Bool)] = [
            ("a/b.txt", "a/b.txt", true), ("a/b.txt", "a/b.txt.orig", false), ("a", "a/b.txt", true),
            ("a", "a/", true), ("a/", "a/b/c", true), ("a", "ab/c", false), ("*.txt", "a/b/c.txt", true),
            ("a/*", "a/b/c", true), ("a?b", "a/b", true), ("[ab]/x", "b/x", true), ("b", "a/b", false),
            ("*", "anything/at/all", true), ("a/b", "a", false),
        ]
        for item in cases {
            #expect(TarMemberPattern(item.pattern).matches(Array(item.path.utf8)) == item.matches,
                    "\(item.pattern) \(item.path)")
        }
        // Bytes that are not UTF-8 match as bytes.
        #expect(TarMemberPattern([0xFF, UInt8(ascii: "*")]).matches([0xFF, 0x41, 0x42]))
    }

    static func member(_ position: Int, _ path: String, type: Character = "0", link: String = "") -> TarMember {
        TarMember(MemberIndex.Member(headerOffset: position * 1024, headerLength: 512, dataLength: 512, size: 10,
                                     type: type.asciiValue!, path: Array(path.utf8), link: Array(link.utf8)),
                  position: position)
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
