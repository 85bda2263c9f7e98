import Dispatch
import Foundation
import Testing
@testable import Weir

@Suite("Tar scanner")
struct TarScannerTests {
    /// GNU tar's archive (`format`) of a small tree: a folder, a path over 100 bytes,
    /// a symbolic link, files of 0, 1 and 700 bytes.
    static func archive(format: String) throws -> (tar: [UInt8], names: [String]) {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = """
            mkdir -p t/sub && : > t/empty && printf x > t/one && head -c 700 /dev/zero > t/sub/seven \
            && ln -s one t/link && mkdir t/\(String(repeating: "d", count: 90)) \
            && echo long > t/\(String(repeating: "d", count: 90))/\(String(repeating: "n", count: 60)) \
            && tar --format=\(format) -cf a.tar t && tar tf a.tar > names
            """
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", script]
        shell.currentDirectoryURL = folder
        try shell.run()
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 0)
        let tar = [UInt8](try Data(contentsOf: folder.appendingPathComponent("a.tar")))
        let names = try String(contentsOf: folder.appendingPathComponent("names"), encoding: .utf8)
        return (tar, names.split(separator: "\n").map(String.init))
    }

    /// The index a scan found, through its frame and back (the codec is MemberIndexTests').
    static func index(_ scanner: TarScanner, contentSize: Int) throws -> MemberIndex? {
        guard let found = scanner.finish(contentSize: contentSize) else { return nil }
        let frame = try MemberIndex.frame(records: found.records, level: 3, path: "a.tar.zst")
        let index = try MemberIndex.decode(frame: frame, path: "a.tar.zst", offset: 0)
        #expect(index.members.count == found.members)
        return index
    }

    /// `bytes` as chunks of `size`, each of two regions (as a chunk read in pieces is).
    static func chunks(_ bytes: [UInt8], size: Int) -> [DispatchData] {
        stride(from: 0, to: bytes.count, by: size).map { start in
            let end = min(bytes.count, start + size), middle = (start + end) / 2
            var data = bytes[start ..< middle].withUnsafeBytes { DispatchData(bytes: $0) }
            bytes[middle ..< end].withUnsafeBytes { data.append(DispatchData(bytes: $0)) }
            return data
        }
    }

    @Test("members found across chunks of any size, split anywhere: tar tf's names, offsets that are tars",
          arguments: ["ustar", "pax", "gnu"])
    func scans(format: String) throws {
        let (tar, names) = try Self.archive(format: format)
        for size in [333, 512, 4096, 1 << 20] {
            let scanner = TarScanner()
            for chunk in Self.chunks(tar, size: size) { scanner.feed(chunk) }
            let index = try #require(try Self.index(scanner, contentSize: tar.count))
            #expect(index.members.map(\.name) == names, "\(size)")
            #expect(!index.endedEarly && index.contentSize == tar.count, "\(size)")
            #expect(index.endOffset == index.members.last?.end && tar[index.endOffset...].allSatisfy { $0 == 0 })
            var end = 0
            for member in index.members {
                #expect(member.headerOffset == end, "\(member.name)")
                let header = Array(tar[member.dataOffset - 512 ..< member.dataOffset])
                #expect(Array(header[257 ..< 262]) == Array("ustar".utf8), "\(member.name)")
                end = member.end
            }
            let link = try #require(index.members.first { $0.name == "t/link" })
            #expect(link.type == UInt8(ascii: "2") && link.link == Array("one".utf8))
            #expect(index.members.first { $0.name == "t/sub/seven" }?.size == 700)
        }
    }

    @Test("a tar cut short: the members seen, the last one to the content's end, flagged")
    func cutShort() throws {
        let (tar, _) = try Self.archive(format: "gnu")
        let whole = TarScanner()
        for chunk in Self.chunks(tar, size: 1000) { whole.feed(chunk) }
        let full = try #require(try Self.index(whole, contentSize: tar.count))
        let seven = try #require(full.members.first { $0.name == "t/sub/seven" })
        let cut = seven.dataOffset + 100
        let scanner = TarScanner()
        for chunk in Self.chunks(Array(tar[..<cut]), size: 1000) { scanner.feed(chunk) }
        let index = try #require(try Self.index(scanner, contentSize: cut))
        #expect(index.endedEarly && index.endOffset == cut)
        #expect(index.members.last?.name == "t/sub/seven" && index.members.last?.end == cut)
    }

    @Test("not a tar: no scan starts; a scan abandoned ends without its input")
    func notTar() {
        #expect(!TarScanner.startsTar(DispatchData.empty))
        let text = [UInt8](repeating: 0x61, count: 4096)
        #expect(!TarScanner.startsTar(text.withUnsafeBytes { DispatchData(bytes: $0) }))
        let scanner = TarScanner()
        scanner.feed(text.withUnsafeBytes { DispatchData(bytes: $0) })
        scanner.abandon()
        #expect(scanner.finish(contentSize: 4096) == nil)
    }
}
