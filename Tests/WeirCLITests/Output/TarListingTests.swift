import Glibc
import Testing
@testable import Weir
@testable import WeirCLI

@Suite("tar tvf's lines")
struct TarListingTests {
    @Test("mode strings as GNU tar prints them: types, set-ID and sticky bits")
    func modes() {
        let cases: [(type: Character, mode: UInt32, path: String, text: String)] = [
            ("0", 0o644, "a", "-rw-r--r--"), ("5", 0o755, "d/", "drwxr-xr-x"), ("0", 0o755, "d/", "drwxr-xr-x"),
            ("1", 0o644, "h", "hrw-r--r--"), ("2", 0o777, "l", "lrwxrwxrwx"), ("3", 0o600, "c", "crw-------"),
            ("4", 0o660, "b", "brw-rw----"), ("6", 0o644, "p", "prw-r--r--"), ("S", 0o644, "s", "-rw-r--r--"),
            ("0", 0o4755, "u", "-rwsr-xr-x"), ("0", 0o2644, "g", "-rw-r-Sr--"), ("5", 0o1777, "t/", "drwxrwxrwt"),
            ("5", 0o1776, "t/", "drwxrwxrwT"), ("0", 0o4644, "U", "-rwSr--r--"), ("x", 0o644, "?", "?rw-r--r--"),
        ]
        for item in cases {
            let text = TarListing.modeString(type: item.type.asciiValue!, mode: item.mode, path: Array(item.path.utf8))
            #expect(String(decoding: text, as: UTF8.self) == item.text, "\(item)")
        }
    }

    static func member(_ path: [UInt8], type: Character = "0", size: Int = 5, link: String = "",
                       user: String = "root", group: String = "root") -> TarMember {
        TarMember(MemberIndex.Member(headerOffset: 0, headerLength: 512, dataLength: 512, size: size,
                                     mtime: 0, mode: 0o644, uid: 1000, gid: 100, type: type.asciiValue!, path: path,
                                     link: Array(link.utf8), uname: Array(user.utf8), gname: Array(group.utf8)),
                  position: 0, previousEnd: 0)
    }

    @Test("names quoted in tar's escape style; the owner/size column widens as tar's, never narrowing")
    func lines() {
        setenv("TZ", "UTC0", 1)
        tzset()
        var listing = TarListing(verbose: true, utf8: false)
        var output: [UInt8] = []
        listing.append(Self.member(Array("a\tb\\c\n".utf8) + [0xC3, 0xA9]), to: &output)
        listing.append(Self.member(Array("l".utf8), type: "2", size: 0, link: "t", user: "", group: ""),
                       to: &output)
        listing.append(Self.member(Array("h".utf8), type: "1", size: 123_456_789_012, link: "a", user: "someone",
                                   group: "somegroup"), to: &output)
        listing.append(Self.member(Array("z".utf8)), to: &output)
        // As GNU tar 1.34 printed them (UGSWIDTH 19, then the widest line's).
        let spaces = { (count: Int) in String(repeating: " ", count: count) }
        #expect(String(decoding: output, as: UTF8.self) == [
            "-rw-r--r-- root/root\(spaces(9))5 1970-01-01 00:00 a\\tb\\\\c\\n\\303\\251\n",
            "lrw-r--r-- 1000/100\(spaces(10))0 1970-01-01 00:00 l -> t\n",
            "hrw-r--r-- someone/somegroup 123456789012 1970-01-01 00:00 h link to a\n",
            "-rw-r--r-- root/root\(spaces(20))5 1970-01-01 00:00 z\n",
        ].joined())
        var utf8 = TarListing(verbose: false, utf8: true)
        output = []
        utf8.append(Self.member([0xC3, 0xA9, 0xFF, 0xC2, 0x85]), to: &output)
        #expect(output == [0xC3, 0xA9] + Array("\\377\\302\\205\n".utf8))
    }
}
