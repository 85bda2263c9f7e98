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

    @Test("""
          before a read: a member past the content's end, header blocks past it, or more of them than a reader \
          takes are refused, each as every reader says it; then the blocks read are checked against the record
          """)
    func beforeReading() throws {
        #expect(MemberRecordCheck.readProblem(blocks: 0 ..< 512, through: 2048, contentEnd: 1024)
            == "it ends at 2048, past the content's end at 1024")
        #expect(MemberRecordCheck.readProblem(blocks: 512 ..< 1536, through: nil, contentEnd: 1024)
            == "its header blocks end at 1536, past the content's end at 1024")
        let most = MemberRecordCheck.headerBlocksMost
        #expect(MemberRecordCheck.readProblem(blocks: 0 ..< most + 512, through: nil, contentEnd: most + 512)
            == MemberRecordCheck.headerBlocksProblem(most + 512))
        #expect(MemberRecordCheck.readProblem(blocks: 0 ..< 512, through: 1024, contentEnd: 1024) == nil)
        let archive = try Self.archive(format: "ustar")
        var reads: [Range<Int>] = []
        var handed = 0
        let passed = MemberRecordCheck.problem(
            blocks: 0 ..< 512, through: 512, contentEnd: archive.count, path: Array("t/".utf8),
            type: UInt8(ascii: "5"), link: [], dataLength: 0, size: 0,
            read: { reads.append($0); return Array(archive[$0]) }, passed: { handed = $0.count })
        #expect(reads == [0 ..< 512] && handed == 512)
        #expect(passed == nil, "GNU tar's archive begins with the folder t/: \(passed ?? "")")
        let refused = MemberRecordCheck.problem(
            blocks: 0 ..< 512, through: 512, contentEnd: archive.count, path: Array("t/".utf8),
            type: UInt8(ascii: "0"), link: [], dataLength: 0, size: 0, read: { Array(archive[$0]) })
        #expect(refused?.hasPrefix("its header's type is") == true)
        #expect(MemberRecordCheck.problem(blocks: 0 ..< 512, through: 4096, contentEnd: 1024, path: [], type: 0,
                                          link: [], dataLength: 0, size: 0, read: { _ in Issue.record(); return [] })
            == "it ends at 4096, past the content's end at 1024")
    }
}
