import Dispatch
import Foundation
import Testing
@testable import WeirTar
@testable import WeirTestSupport

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
        guard let found = try scanner.finish(contentSize: contentSize, path: "a.tar.zst") else { return nil }
        let frame = try found.frame.bytes(path: "a.tar.zst")
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

    @Test("""
          header fields of any bytes, their checksums made good again: the walk reads inside its blocks \
          and finds the same members in chunks cut anywhere as whole
          """)
    func hostileFields() throws {
        // The walk reads a header's numbers and names a word at a time (issue 82): every field's
        // bytes, NULs, spaces, digits, '/' and bytes with the high bit set, at any place.
        var random = SeededGenerator(seed: 82)
        let odd: [UInt8] = [0, 0x20, 0x2F, 0x30, 0x37, 0x38, 0x80, 0xFF]
        for format in ["ustar", "pax", "gnu"] {
            let (tar, _) = try Self.archive(format: format)
            let headers = stride(from: 0, to: tar.count - 512, by: 512).filter {
                tar[$0 + 257 ..< $0 + 262].elementsEqual("ustar".utf8)
            }
            for round in 0 ..< 200 {
                var bytes = tar
                for _ in 0 ... round % 8 {
                    let header = try #require(headers.randomElement(using: &random))
                    let at = Int.random(in: 0 ..< 512, using: &random)
                    if (148 ..< 156).contains(at) { continue }
                    bytes[header + at] = Bool.random(using: &random)
                        ? try #require(odd.randomElement(using: &random)) : UInt8.random(in: 0 ... 255, using: &random)
                    // The checksum made good again (six octal digits, a NUL, a space), so the fields are read.
                    var sum = 8 * 0x20
                    for index in 0 ..< 512 where !(148 ..< 156).contains(index) { sum += Int(bytes[header + index]) }
                    let digits = Array(String(sum, radix: 8).utf8)
                    let field = [UInt8](repeating: UInt8(ascii: "0"), count: 6 - digits.count) + digits + [0, 0x20]
                    bytes.replaceSubrange(header + 148 ..< header + 156, with: field)
                }
                let whole = TarScanner()
                whole.feed(bytes.withUnsafeBytes { DispatchData(bytes: $0) })
                let once = try Self.index(whole, contentSize: bytes.count)
                let size = [7, 333, 512, 700][round % 4]
                let pieces = TarScanner()
                for chunk in Self.chunks(bytes, size: size) { pieces.feed(chunk) }
                #expect(try Self.index(pieces, contentSize: bytes.count) == once, "\(format), round \(round)")
            }
        }
    }

    @Test("a tar cut short, as parallel --pipepart cuts one, gets no index: only a whole tar does")
    func cutShort() throws {
        let (tar, _) = try Self.archive(format: "gnu")
        let whole = TarScanner()
        for chunk in Self.chunks(tar, size: 1000) { whole.feed(chunk) }
        let full = try #require(try Self.index(whole, contentSize: tar.count))
        let seven = try #require(full.members.first { $0.name == "t/sub/seven" })
        // Cut inside a member's data, inside a header, and just after a member
        // (no end blocks: the tar did not end, it was cut).
        for cut in [seven.dataOffset + 100, seven.headerOffset + 300, seven.end] {
            let scanner = TarScanner()
            for chunk in Self.chunks(Array(tar[..<cut]), size: 1000) { scanner.feed(chunk) }
            #expect(try Self.index(scanner, contentSize: cut) == nil, "cut at \(cut)")
        }
    }

    @Test("not a tar: no scan starts; a stream that stops being tar gives no index")
    func notTar() throws {
        #expect(!TarScanner.startsTar(DispatchData.empty))
        let text = [UInt8](repeating: 0x61, count: 4096)
        #expect(!TarScanner.startsTar(text.withUnsafeBytes { DispatchData(bytes: $0) }))
        let scanner = TarScanner()
        scanner.feed(text.withUnsafeBytes { DispatchData(bytes: $0) })
        #expect(try scanner.finish(contentSize: 4096, path: "a") == nil)
        // A tar whose second header's checksum fails.
        var (tar, _) = try Self.archive(format: "ustar")
        tar[512 * 3 + 148] ^= 1
        let broken = TarScanner()
        for chunk in Self.chunks(tar, size: 4096) { broken.feed(chunk) }
        let index = try Self.index(broken, contentSize: tar.count)
        #expect(index == nil || index?.members.count == 0)
    }

    @Test("every field as GNU tar lists it: sparse files (GNU and pax), devices, FIFOs, hard links, long names",
          arguments: ["gnu", "posix", "oldgnu"])
    func fieldsAsTarListsThem(format: String) throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Devices and FIFOs in a temp folder (never the machine's /dev); sparse files where tar keeps them sparse.
        let long = String(repeating: "l", count: 120)  // past ustar's 100 bytes: a long name each way
        let script = """
            set -e; mkdir -p t/\(long) && echo a > t/\(long)/\(long) && truncate -s 3M t/sparse \
            && printf data | dd of=t/sparse bs=1 seek=1048576 conv=notrunc 2>/dev/null \
            && mknod t/char c 1 3 && mknod t/block b 7 200 && mkfifo t/fifo && ln t/sparse t/hard \
            && ln -s \(long) t/sym && tar --format=\(format) --sparse --owner=7:7 --group=9:9 -cf a.tar t 2>/dev/null
            """
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", script]
        shell.currentDirectoryURL = folder
        try shell.run()
        shell.waitUntilExit()
        try #require(shell.terminationStatus == 0)
        let tar = [UInt8](try Data(contentsOf: folder.appendingPathComponent("a.tar")))
        let listing = Process()
        listing.executableURL = URL(fileURLWithPath: "/bin/tar")
        listing.arguments = ["--numeric-owner", "-tvf", folder.appendingPathComponent("a.tar").path]
        let pipe = Pipe()
        listing.standardOutput = pipe
        try listing.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        listing.waitUntilExit()
        let expected = text.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        for size in [100, 512, 1 << 20] {
            let scanner = TarScanner()
            for chunk in Self.chunks(tar, size: size) { scanner.feed(chunk) }
            let index = try #require(try Self.index(scanner, contentSize: tar.count))
            try #require(index.members.count == expected.count, "\(format) \(size)")
            for (member, line) in zip(index.members, expected) {
                // tar tvf: mode, uid/gid, size (or major,minor), date, time, name…
                #expect(line[1] == "7/9", "\(member.name)")
                if member.type == UInt8(ascii: "3") || member.type == UInt8(ascii: "4") {
                    #expect(line[2] == "\(member.devmajor),\(member.devminor)", "\(member.name)")
                } else {
                    #expect(line[2] == "\(member.size)", "\(member.name)")
                    #expect(line[5] == member.name, "\(format) \(member.name)")
                }
            }
            let sparse = try #require(index.members.first { $0.name == "t/sparse" })
            #expect(sparse.size == 3 << 20 && sparse.dataLength < 1 << 20, "\(format)")
        }
    }
}
