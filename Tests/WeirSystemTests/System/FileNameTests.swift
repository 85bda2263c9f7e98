import Glibc
import Testing
@testable import WeirSystem

@Suite("File names as bytes")
struct FileNameTests {
    static func scalars(_ name: String) -> [UInt32] { name.unicodeScalars.map(\.value) }

    @Test("valid UTF-8 is the plain string; every other byte is U+10FF00 + byte")
    func decoding() {
        #expect(FileName.string(fromBytes: Array("dir/é €😀.txt".utf8)) == "dir/é €😀.txt")
        #expect(Self.scalars(FileName.string(fromBytes: [0x61, 0xFF, 0x62])) == [0x61, 0x10FFFF, 0x62])
        let cases: [(bytes: [UInt8], scalars: [UInt32])] = [
            ([0x80], [0x10FF80]),                                          // stray continuation byte
            ([0xC0, 0x80], [0x10FFC0, 0x10FF80]),                          // overlong NUL
            ([0xE0, 0x80, 0xAF], [0x10FFE0, 0x10FF80, 0x10FFAF]),          // overlong slash
            ([0xED, 0xA0, 0x80], [0x10FFED, 0x10FFA0, 0x10FF80]),          // a surrogate
            ([0xF4, 0x90, 0x80, 0x80], [0x10FFF4, 0x10FF90, 0x10FF80, 0x10FF80]),  // beyond U+10FFFF
            ([0xE2, 0x82, 0x41], [0x10FFE2, 0x10FF82, 0x41]),             // cut short, then ASCII
            ([0xC3], [0x10FFC3]),                                          // cut short by the end
            ([0xFF, 0xC3, 0xA9], [0x10FFFF, 0xE9]),                        // a valid é after a bad byte
            // The valid UTF-8 of U+10FF80 and U+10FFFF, escaped byte by byte.
            ([0xF4, 0x8F, 0xBE, 0x80], [0x10FFF4, 0x10FF8F, 0x10FFBE, 0x10FF80]),
            ([0xF4, 0x8F, 0xBF, 0xBF], [0x10FFF4, 0x10FF8F, 0x10FFBF, 0x10FFBF]),
            // U+10FF7F, just below the escapes, stays itself.
            ([0xF4, 0x8F, 0xBD, 0xBF], [0x10FF7F]),
        ]
        for (bytes, scalars) in cases {
            let name = FileName.string(fromBytes: bytes)
            #expect(Self.scalars(name) == scalars, "\(bytes)")
            #expect(FileName.bytes(of: name) == bytes, "\(bytes)")
        }
    }

    @Test("any bytes without NUL come back unchanged, random ones included")
    func roundTrip() {
        var generator = SystemRandomNumberGenerator()
        // Lead bytes and continuation bytes often, so that near-valid sequences occur.
        let favoured: [UInt8] = [0x80, 0xBF, 0xC2, 0xC3, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0x8F, 0xBE, 0xFF, 0x2F, 0x2E]
        for _ in 0 ..< 5000 {
            let count = Int.random(in: 0 ... 24, using: &generator)
            let bytes = (0 ..< count).map { _ -> UInt8 in
                Bool.random(using: &generator) ? favoured.randomElement(using: &generator)!
                                               : UInt8.random(in: 1 ... 255, using: &generator)
            }
            let name = FileName.string(fromBytes: bytes)
            #expect(FileName.bytes(of: name) == bytes, "\(bytes)")
            #expect(FileName.withCString(name) { Array(UnsafeBufferPointer(start: $0, count: strlen($0))) }
                .map { UInt8(bitPattern: $0) } == bytes, "\(bytes)")
            if let valid = String(validating: bytes, as: UTF8.self),
               !valid.unicodeScalars.contains(where: { FileName.escapes.contains($0.value) }) {
                #expect(name == valid)
            }
        }
        // Every byte alone and every pair.
        for first in UInt8(1) ... 255 {
            for second in UInt8(1) ... 255 where first >= 0x80 || second >= 0x80 || second == 1 {
                let bytes = second == 1 ? [first] : [first, second]
                #expect(FileName.bytes(of: FileName.string(fromBytes: bytes)) == bytes, "\(bytes)")
            }
        }
    }

    @Test("messages show escaped bytes and control characters as \\xFF, on one line")
    func display() {
        let name = FileName.string(fromBytes: Array("a".utf8) + [0xFF, 0x0A, 0x09] + Array("é\\b".utf8) + [0x7F])
        #expect(FileName.displayed(name) == "a\\xFF\\x0A\\x09é\\b\\x7F")
        #expect(FileName.displayed("plain é.zst") == "plain é.zst")
        #expect(FileName.displayingEscapes("weir: \(name)\n") == "weir: a\\xFF\n\u{9}é\\b\u{7F}\n")
    }

    @Test("a URL's password is never displayed; the rest of any name is as it was")
    func withoutPassword() {
        let cases: [(String, String)] = [
            ("http://user:S3CRET@host/a.zst", "http://user:***@host/a.zst"),
            ("HTTPS://user:S3CRET@host:8443/a.zst?x=1", "HTTPS://user:***@host:8443/a.zst?x=1"),
            ("http://:S3CRET@host/", "http://:***@host/"),
            ("http://user:p@ss@S3CRET@host/a", "http://user:***@host/a"),
            ("http://user%3AS3CRET@host/a", "http://user%3A***@host/a"),
            ("http://user@host/a@b:c", "http://user@host/a@b:c"),
            ("http://host/a.zst?u=x:y@z", "http://host/a.zst?u=x:y@z"),
            ("http://host/p#x:y@z", "http://host/p#x:y@z"),
            ("user:S3CRET@host/a.zst", "user:S3CRET@host/a.zst"),
            ("ftp://user:pw@host/a", "ftp://user:***@host/a"),
            ("svn+ssh://user:pw@host/a", "svn+ssh://user:***@host/a"),
            ("//user:pw@host/a", "//user:***@host/a"),
            ("//host/a:b@c", "//host/a:b@c"),
            ("/user:pw@host/a", "/user:pw@host/a"),
            ("dir/x://user:pw@host", "dir/x://user:pw@host"),
            ("1a://user:pw@host", "1a://user:pw@host"),
            ("a:/user:pw@host", "a:/user:pw@host"),
            ("http://", "http://"),
        ]
        for (name, shown) in cases {
            #expect(FileName.withoutPassword(name) == shown, "\(name)")
        }
        #expect(FileName.displayed("http://u:S3CRET@h/\u{7}x") == "http://u:***@h/\\x07x")
        let odd = FileName.string(fromBytes: Array("http://u:S3CRET@h/".utf8) + [0xFF])
        #expect(FileName.displayed(odd) == "http://u:***@h/\\xFF")
    }
}
