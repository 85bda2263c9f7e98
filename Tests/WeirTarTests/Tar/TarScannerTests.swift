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

    /// A ustar header block: `name`, `size` bytes of data, type `type`, its checksum right.
    static func header(_ name: String, size: Int, type: UInt8) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: 512)
        block.replaceSubrange(0 ..< name.utf8.count, with: name.utf8)
        for (at, field) in [(100, "0000644"), (108, "0000000"), (116, "0000000"), (136, "14530327600")] {
            block.replaceSubrange(at ..< at + field.utf8.count, with: field.utf8)
        }
        let octal = String(size, radix: 8)
        block.replaceSubrange(124 ..< 135, with: (String(repeating: "0", count: 11 - octal.count) + octal).utf8)
        block[156] = type
        block.replaceSubrange(257 ..< 265, with: Array("ustar\u{0}00".utf8))
        block.replaceSubrange(148 ..< 156, with: Array("        ".utf8))
        let sum = String(block.reduce(0) { $0 + Int($1) }, radix: 8)
        block.replaceSubrange(148 ..< 155, with: (String(repeating: "0", count: 6 - sum.count) + sum + "\u{0}").utf8)
        return block
    }

    @Test("""
          a file's type with a folder's name and data (which GNU tar makes a folder, its data read as headers): \
          no index, and the reader's check refuses such a record; an empty one is a folder
          """)
    func fileTypedFolder() throws {
        func member(_ name: String, _ data: [UInt8], type: UInt8) -> [UInt8] {
            Self.header(name, size: data.count, type: type) + data
                + [UInt8](repeating: 0, count: (512 - data.count % 512) % 512)
        }
        let inner = member("evil.txt", Array("EVIL\n".utf8), type: UInt8(ascii: "0"))
        for type in [UInt8(ascii: "0"), 0] {
            let tar = member("x.txt", Array("x\n".utf8), type: UInt8(ascii: "0")) + member("dir/", inner, type: type)
                + member("after.txt", Array("after\n".utf8), type: UInt8(ascii: "0"))
                + [UInt8](repeating: 0, count: 1024)
            let scanner = TarScanner()
            for chunk in Self.chunks(tar, size: 700) { scanner.feed(chunk) }
            #expect(try Self.index(scanner, contentSize: tar.count) == nil, "type \(type)")
            let blocks = Array(tar[1024 ..< 1536])
            let problem = blocks.withUnsafeBytes {
                MemberRecordCheck.problem(in: $0, path: Array("dir/".utf8), type: UInt8(ascii: "5"), link: [],
                                          dataLength: 1024, size: 0)
            }
            #expect(problem?.contains("a file's type, a folder's name") == true, "\(problem ?? "")")
            // Without data it is a folder, as tar makes it.
            let empty = member("x.txt", Array("x\n".utf8), type: UInt8(ascii: "0")) + member("dir/", [], type: type)
                + [UInt8](repeating: 0, count: 1024)
            let plain = TarScanner()
            for chunk in Self.chunks(empty, size: 700) { plain.feed(chunk) }
            let index = try #require(try Self.index(plain, contentSize: empty.count))
            #expect(index.members.map(\.type) == [UInt8(ascii: "0"), UInt8(ascii: "5")], "type \(type)")
        }
    }

    @Test("""
          a pax global header that sets a field the index records (GNU tar applies it to every later member): \
          no index, the check refuses it; one that holds a comment only (git archive's) changes nothing
          """)
    func globalHeader() throws {
        func member(_ name: String, _ data: [UInt8], type: UInt8) -> [UInt8] {
            Self.header(name, size: data.count, type: type) + data
                + [UInt8](repeating: 0, count: (512 - data.count % 512) % 512)
        }
        for (record, indexed) in [("17 path=glob.txt\n", false), ("10 size=0\n", false), ("15 comment=abc\n", true)] {
            let global = member("pax_global_header", Array(record.utf8), type: UInt8(ascii: "g"))
            let tar = global + member("a.txt", Array("hello\n".utf8), type: UInt8(ascii: "0"))
                + member("b.txt", Array("bee\n".utf8), type: UInt8(ascii: "0")) + [UInt8](repeating: 0, count: 1024)
            let scanner = TarScanner()
            for chunk in Self.chunks(tar, size: 300) { scanner.feed(chunk) }
            let index = try Self.index(scanner, contentSize: tar.count)
            #expect((index != nil) == indexed, "\(record)")
            let problem = tar[0 ..< 1536].withUnsafeBytes {
                MemberRecordCheck.problem(in: $0, path: Array("a.txt".utf8), type: UInt8(ascii: "0"), link: [],
                                          dataLength: 512, size: 6)
            }
            #expect((problem == nil) == indexed, "\(record): \(problem ?? "")")
            if let index { #expect(index.members.map(\.name) == ["a.txt", "b.txt"]) }
        }
    }

    @Test("""
          what tar reads and the walk indexes, the check takes too: a GNU volume label before a member, a size \
          field with text after its digits
          """)
    func checkAgreesWithWalk() throws {
        func member(_ name: String, _ data: [UInt8], type: UInt8) -> [UInt8] {
            Self.header(name, size: data.count, type: type) + data
                + [UInt8](repeating: 0, count: (512 - data.count % 512) % 512)
        }
        var odd = member("a.txt", Array(repeating: 0x61, count: 600), type: UInt8(ascii: "0"))
        // "00001130 X": GNU tar and the walk read 600 up to the space.
        odd.replaceSubrange(124 ..< 136, with: Array("00001130 X\u{0}\u{0}".utf8))
        odd.replaceSubrange(148 ..< 156, with: Array("        ".utf8))
        let sum = String(odd[0 ..< 512].reduce(0) { $0 + Int($1) }, radix: 8)
        odd.replaceSubrange(148 ..< 155, with: (String(repeating: "0", count: 6 - sum.count) + sum + "\u{0}").utf8)
        let tar = odd + member("label", [], type: UInt8(ascii: "V")) + member("m.txt", Array("m\n".utf8),
                                                                               type: UInt8(ascii: "0"))
            + [UInt8](repeating: 0, count: 1024)
        let scanner = TarScanner()
        for chunk in Self.chunks(tar, size: 512) { scanner.feed(chunk) }
        let index = try #require(try Self.index(scanner, contentSize: tar.count))
        #expect(index.members.map(\.name) == ["a.txt", "m.txt"])
        for record in index.members {
            let problem = tar[record.headerOffset ..< record.dataOffset].withUnsafeBytes {
                MemberRecordCheck.problem(in: $0, of: record)
            }
            #expect(problem == nil, "\(record.name): \(problem ?? "")")
        }
    }

    @Test("""
          what tars read otherwise gets no index and the check refuses it: a pax record with a blank GNU tar \
          skips, two pax headers for one member, a hard link with data, a Solaris ACL member (A), a pax size \
          not a plain decimal, two GNU long names, a size field after a NUL, a contiguous file (7) named as a \
          folder with data; an empty one is a folder, indexed and checked alike
          """)
    func readOtherwise() throws {
        func member(_ name: String, _ data: [UInt8], type: UInt8) -> [UInt8] {
            Self.header(name, size: data.count, type: type) + data
                + [UInt8](repeating: 0, count: (512 - data.count % 512) % 512)
        }
        let a = member("a.txt", Array(repeating: 0x61, count: 600), type: UInt8(ascii: "0"))
        let end = [UInt8](repeating: 0, count: 1024)
        let cases: [(String, [UInt8])] = [
            ("blank", member("PaxHeaders/a", Array("18  path=glob.txt\n".utf8), type: UInt8(ascii: "x")) + a),
            ("global blank", member("pax_global_header", Array("17\tpath=glob.txt\n".utf8),
                                    type: UInt8(ascii: "g")) + a),
            ("two pax", member("PaxHeaders/a", Array("17 path=evil.txt\n".utf8), type: UInt8(ascii: "x"))
                + member("PaxHeaders/a", Array("11 mtime=1\n".utf8), type: UInt8(ascii: "x")) + a),
            ("link data", member("hl", Array(repeating: 0x62, count: 100), type: UInt8(ascii: "1"))),
            ("acl", member("acl.txt", Array("A\n".utf8), type: UInt8(ascii: "A")) + a),
            ("pax plus", member("PaxHeaders/a", Array("13 size=+600\n".utf8), type: UInt8(ascii: "x")) + a),
            ("two L", member("././@LongLink", Array("n1\u{0}".utf8), type: UInt8(ascii: "L"))
                + member("././@LongLink", Array("n2\u{0}".utf8), type: UInt8(ascii: "L")) + a),
            ("nul size", { () -> [UInt8] in
                // "\0" then "0000001130": GNU tar skips the NUL and reads 600, others read 0.
                var block = a
                block.replaceSubrange(124 ..< 136, with: [0] + Array("00000001130".utf8))
                block.replaceSubrange(148 ..< 156, with: Array("        ".utf8))
                let sum = String(block[0 ..< 512].reduce(0) { $0 + Int($1) }, radix: 8)
                let field = String(repeating: "0", count: 6 - sum.count) + sum + "\u{0}"
                block.replaceSubrange(148 ..< 155, with: field.utf8)
                return block
            }()),
            ("contiguous", member("c7/", member("evil.txt", Array("EVIL\n".utf8), type: UInt8(ascii: "0")),
                                   type: UInt8(ascii: "7"))),
        ]
        for (name, body) in cases {
            let tar = body + end
            let scanner = TarScanner()
            for chunk in Self.chunks(tar, size: 700) { scanner.feed(chunk) }
            #expect(try Self.index(scanner, contentSize: tar.count) == nil, "\(name)")
        }
        // The check, on blocks a crafted index could list: each refused.
        for (name, blocks, path, type) in [
            ("blank", Array(cases[0].1[0 ..< 1536]), "a.txt", UInt8(ascii: "0")),
            ("two pax", Array(cases[2].1[0 ..< 2560]), "a.txt", UInt8(ascii: "0")),
            ("acl", Array(cases[4].1[0 ..< 1536]), "a.txt", UInt8(ascii: "0")),
            ("pax plus", Array(cases[5].1[0 ..< 1536]), "a.txt", UInt8(ascii: "0")),
            ("two L", Array(cases[6].1[0 ..< 2560]), "n2", UInt8(ascii: "0")),
            ("nul size", Array(cases[7].1[0 ..< 512]), "a.txt", UInt8(ascii: "0")),
        ] {
            let problem = blocks.withUnsafeBytes {
                MemberRecordCheck.problem(in: $0, path: Array(path.utf8), type: type, link: [], dataLength: 1024,
                                          size: 600)
            }
            #expect(problem != nil, "\(name)")
        }
        let link = member("hl", Array(repeating: 0x62, count: 100), type: UInt8(ascii: "1"))
        let linkProblem = link[0 ..< 512].withUnsafeBytes {
            MemberRecordCheck.problem(in: $0, path: Array("hl".utf8), type: UInt8(ascii: "1"), link: [],
                                      dataLength: 512, size: 0)
        }
        #expect(linkProblem?.contains("a hard link with 100 bytes of data") == true, "\(linkProblem ?? "")")
        // An empty contiguous file named as a folder: a folder, as tar makes it; its record passes the check.
        let empty = member("x.txt", Array("x\n".utf8), type: UInt8(ascii: "0"))
            + member("q/", [], type: UInt8(ascii: "7")) + end
        let scanner = TarScanner()
        for chunk in Self.chunks(empty, size: 700) { scanner.feed(chunk) }
        let index = try #require(try Self.index(scanner, contentSize: empty.count))
        let folder = try #require(index.members.last)
        #expect(folder.type == UInt8(ascii: "5"))
        #expect(empty[folder.headerOffset ..< folder.dataOffset].withUnsafeBytes {
            MemberRecordCheck.problem(in: $0, of: folder)
        } == nil)
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
