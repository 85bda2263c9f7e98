import Testing
import WeirTar

@Suite("Tar member patterns")
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
}
