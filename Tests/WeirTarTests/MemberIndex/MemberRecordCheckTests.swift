import Dispatch
import Foundation
import Testing
@testable import WeirTar
@testable import WeirTestSupport

/// The one check of a member's record against its own header blocks
/// (`--member`, `-t`, the library's reads, `weir mount`), on GNU tar's
/// archives as the scanner indexes them.
@Suite("Member record check")
struct MemberRecordCheckTests {
    /// GNU tar's archive (`format`) of every kind of member: files (one
    /// sparse but in ustar), a hard and a symbolic link, a folder, a FIFO,
    /// a long name (not in ustar).
    static func archive(format: String) throws -> [UInt8] {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let long = String(repeating: "n", count: 120)
        let ustar = format == "ustar"
        let script = """
            mkdir -p t/sub && printf 'hello\\n' > t/a.txt && : > t/empty && ln t/a.txt t/hard \
            && ln -s a.txt t/link && mkfifo t/fifo && truncate -s 300000 t/sparse \
            && printf data | dd of=t/sparse bs=1 seek=200000 conv=notrunc status=none \
            \(ustar ? "" : "&& echo long > t/sub/\(long)") \
            && tar --format=\(format) \(ustar ? "" : "--sparse") -cf a.tar t
            """
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", script]
        shell.currentDirectoryURL = folder
        try shell.run()
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 0)
        return [UInt8](try Data(contentsOf: folder.appendingPathComponent("a.tar")))
    }

    @Test("""
          every kind of member passes as the scanner indexes it; another size, type or link target \
          is refused, named
          """,
          arguments: ["ustar", "gnu", "pax"])
    func records(format: String) throws {
        let tar = try Self.archive(format: format)
        let scanner = TarScanner()
        scanner.feed(tar.withUnsafeBytes { DispatchData(bytes: $0) })
        let index = try #require(try TarScannerTests.index(scanner, contentSize: tar.count))
        #expect(Set(index.members.map { Character(UnicodeScalar($0.type)) }).isSuperset(of: ["0", "1", "2", "5", "6"]),
                "\(index.members.map(\.type))")
        for member in index.members {
            let header = Array(tar[member.headerOffset ..< member.dataOffset])
            try header.withUnsafeBytes { header in
                #expect(MemberRecordCheck.problem(in: header, of: member) == nil, "\(format) \(member.name)")
                var sized = member
                sized.size += 1
                let size = try #require(MemberRecordCheck.problem(in: header, of: sized))
                #expect(size.contains("its header gives a size of \(member.size) bytes, the index \(member.size + 1)"))
                for type in Array("01256".utf8) where type != member.type {
                    var typed = member
                    typed.type = type
                    if type == UInt8(ascii: "1") || type == UInt8(ascii: "2") { typed.link = Array("t/a.txt".utf8) }
                    let problem = try #require(MemberRecordCheck.problem(in: header, of: typed),
                                               "\(format) \(member.name) as \(type)")
                    #expect(problem.contains("its header's type is"), "\(problem)")
                }
                if member.type == UInt8(ascii: "1") || member.type == UInt8(ascii: "2") {
                    var linked = member
                    linked.link = Array("t/empty".utf8)
                    #expect(MemberRecordCheck.problem(in: header, of: linked)?.contains("its header links to") == true)
                }
            }
        }
    }
}
