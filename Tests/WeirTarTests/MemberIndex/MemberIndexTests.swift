import CZstd
import Testing
import WeirFormats
import WeirSystem
@testable import WeirTar
@testable import WeirTarTestSupport
@testable import WeirTestSupport

@Suite("Member index codec")
struct MemberIndexTests {
    /// The skippable frame around a hand-made record list.
    static func frame(_ records: [UInt8]) -> [UInt8] {
        try! MemberIndex.frame(records: records, level: 3, path: "a.tar.zst")
    }

    /// `frame` with its skippable size field set to what it holds.
    static func sized(_ frame: [UInt8]) -> [UInt8] {
        let size = UInt32(frame.count - 8)
        return Array(frame[0 ..< 4]) + (0 ..< 4).map { UInt8(truncatingIfNeeded: size >> ($0 * 8)) } + frame[8...]
    }

    /// Decodes `frame` at offset 100, expecting a corrupt index whose reason says `text`; the same from a
    /// record list opened without its check, at its first walk, and from one walked as it is decoded on another
    /// thread (as `weir -d --member` reads it).
    static func expectCorrupt(_ frame: [UInt8], _ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let decoders: [(String, () throws(WeirError) -> Void)] = [
            ("decode", { () throws(WeirError) in
                _ = try MemberIndex.decode(frame: frame, path: "a.tar.zst", offset: 100)
            }),
            ("unchecked walk", { () throws(WeirError) in
                let records = try MemberIndex.records(frame: frame, path: "a.tar.zst", offset: 100, checking: false)
                try records.forEach { _ in }
            }),
            ("walk as decoded", { () throws(WeirError) in
                let records = try MemberIndex.records(frame: frame, path: "a.tar.zst", offset: 100, checking: false,
                                                      walkingAsDecoded: true)
                try records.forEach { _ in }
            }),
        ]
        for (name, decoder) in decoders {
            do throws(WeirError) {
                try decoder()
                Issue.record("\(name): expected a corrupt index", sourceLocation: sourceLocation)
            } catch {
                #expect(error.kind == .corrupt && error.operation == .readMemberIndex, "\(name)",
                        sourceLocation: sourceLocation)
                #expect(error.description.hasPrefix("a.tar.zst: corrupt member index at offset 100: "),
                        "\(name): \(error)", sourceLocation: sourceLocation)
                #expect(error.reason.contains(text), "\(name): \(error.reason)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test("version 2 round-trips every field, devices included, over many blocks; version 1 is still read")
    func version2RoundTrips() throws {
        var index = MemberIndex.sample()
        index.members.append(.init(headerOffset: 4096, headerLength: 512, dataLength: 0, size: 0, mtime: 9,
                                   mode: 0o600, type: UInt8(ascii: "4"), path: Array("dev/loop7".utf8),
                                   uname: Array("root".utf8), gname: Array("disk".utf8), devmajor: 7, devminor: 263))
        index.endOffset = 4608
        #expect(try MemberIndex.decode(frame: try MemberIndex.version2(index), path: "a", offset: 0) == index)
        // Old indexes (version 1, rows) read as before, devices at 0.
        let old = try MemberIndex.decode(frame: Self.frame(MemberIndex.sample().recordList()), path: "a", offset: 0)
        #expect(old == MemberIndex.sample())
        // Enough members for several blocks of columns: names that share folders, sizes of every width.
        var many: [MemberIndex.Member] = []
        var end = 0
        for number in 0 ..< 30_000 {
            let size = number % 7 == 0 ? 0 : (number * 7919) % (1 << (number % 40))
            let path = Array("root/d\(number / 100)/sub\(number % 3)/file-\(number).c".utf8)
            let member = MemberIndex.Member(headerOffset: end, headerLength: 512,
                                            dataLength: (size + 511) / 512 * 512, size: size,
                                            mtime: Int64(1_600_000_000 + number % 13), mode: 0o644, uid: number % 2,
                                            gid: 5, path: path, uname: Array("u\(number % 2)".utf8),
                                            gname: Array("g".utf8))
            many.append(member)
            end = member.end
        }
        let big = MemberIndex(members: many, endedEarly: false, endOffset: end, contentSize: end + 1024)
        let kept = try MemberIndex.version2(big)
        #expect(try MemberIndex.decode(frame: kept, path: "a", offset: 0) == big)
        // Walked as it is decoded on another thread, block by block: the same members, and again once decoded.
        let streamed = try MemberIndex.records(frame: kept, path: "a", offset: 0, checking: false,
                                               walkingAsDecoded: true)
        #expect(try streamed.members() == big.members)
        #expect(try streamed.members() == big.members)
        // Its last block damaged: the blocks before it walk, then the stream's failure is what the walk throws.
        var late = kept
        late[late.count - 6] ^= 0x40
        Self.expectCorrupt(late, "does not decode")
        // Past its bound in memory, the compressed stream goes to a spill file and comes back the same.
        #expect(try MemberIndex.version2(big, spillBound: 4096) == kept)
        // Filled blocks wait raw in a file and are compressed at the end; where no file can be made they are
        // compressed as they fill, and where the file stops short (a full disk) in the first block or a later
        // one, what went there is compressed, then the rest: the same bytes each way.
        #expect(try MemberIndex.version2(big, spillFolder: "/nonexistent/weir-test") == kept)
        #expect(try MemberIndex.version2(big, blocksCapacity: 1000) == kept)
        let small = try MemberIndex.version2(big, blockBytes: 64 << 10)
        #expect(try MemberIndex.decode(frame: small, path: "a", offset: 0) == big)
        for capacity in [0, 100, 150_000, 64 << 10] {
            #expect(try MemberIndex.version2(big, blockBytes: 64 << 10, blocksCapacity: capacity) == small)
        }
    }

    @Test("""
          paths and owners of every shape round-trip through the column writer: '/' first, last, doubled \
          or none, names shorter and longer than a word, neighbours that share part of a folder
          """)
    func pathShapes() throws {
        // The writer reads only the tails past the shared prefix, a word at a time (issue 82): these
        // cut the shared prefix inside a folder's name, at its '/', and past it, at every offset.
        var random = SeededGenerator(seed: 68)
        let parts = ["", "a", "/", "//", "bb/", "ccc/d", "e/f/", "0123456789/", "x.c", "long-folder-name/"]
        let owners: [[UInt8]] = [[], Array("root".utf8), Array("r".utf8), Array("a-long-owner-name".utf8)]
        var members: [MemberIndex.Member] = []
        var end = 0
        var previous: [UInt8] = []
        for number in 0 ..< 20_000 {
            // Most often the previous path cut somewhere and grown again, as neighbours in a listing are.
            var path = number % 4 == 0 ? [] : Array(previous.prefix(Int.random(in: 0 ... previous.count,
                                                                                 using: &random)))
            for _ in 0 ..< Int.random(in: 0 ... 5, using: &random) {
                path += Array(parts.randomElement(using: &random)!.utf8)
            }
            members.append(.init(headerOffset: end, headerLength: 512, dataLength: 0, size: 0, path: path,
                                 uname: owners[(number / 3) % owners.count],
                                 gname: owners[Int.random(in: 0 ..< owners.count, using: &random)]))
            end += 512
            previous = path
        }
        let index = MemberIndex(members: members, endedEarly: false, endOffset: end, contentSize: end + 1024)
        #expect(try MemberIndex.decode(frame: try MemberIndex.version2(index), path: "a", offset: 0) == index)
    }

    @Test("a version 2 index that lies is refused with the file and offset, never half believed")
    func version2Lies() throws {
        let frame = try MemberIndex.version2(MemberIndex.sample())
        // The declared member count, one more and one fewer: the columns hold three.
        let countAt = 8 + 8 + 2
        for count: UInt8 in [2, 4] {
            var lie = frame
            lie[countAt] = count
            Self.expectCorrupt(lie, "columns hold 3")
        }
        var version = frame
        version[16] = 3
        Self.expectCorrupt(version, "version 3")
        var flipped = frame
        flipped[flipped.count - 6] ^= 0x40
        Self.expectCorrupt(flipped, "does not decode")
        Self.expectCorrupt(Self.sized(Array(frame.dropLast(3))), "cut short")
    }

    @Test("an index round-trips through its frame, names' bytes as they are")
    func roundTrip() throws {
        for ended in [false, true] {
            var index = MemberIndex.sample()
            index.endedEarly = ended
            let bytes = try index.encoded(path: "a.tar.zst")
            #expect(try MemberIndex.decode(frame: bytes, path: "a.tar.zst", offset: 0) == index)
        }
        let empty = MemberIndex(members: [], endedEarly: false, endOffset: 0, contentSize: 1024)
        #expect(try MemberIndex.decode(frame: empty.encoded(path: "x"), path: "x", offset: 0) == empty)
    }

    @Test("""
          a walk of the records hands each member as decoded, and a member kept stays as it was while the walk \
          rewrites the next one's names in place
          """)
    func walkKeepsMembers() throws {
        // Names that grow, shrink, share all or nothing with the previous one; links that come and go.
        var generator = SystemRandomNumberGenerator()
        var members: [MemberIndex.Member] = []
        var end = 0
        for position in 0 ..< 500 {
            let depth = Int.random(in: 0 ... 4, using: &generator)
            let path = (0 ..< depth).map { "d\($0 + position % 3)/" }.joined() + "f\(Int.random(in: 0 ... 9))"
            let link = position % 7 == 0 ? Array("target\(position)".utf8) : []
            let owner = position % 50 < 25 ? "alice" : "al"
            members.append(.init(headerOffset: end, headerLength: 512, dataLength: 512 * (position % 3),
                                 size: position, mtime: Int64(position) - 100, mode: UInt32(position % 0o7777),
                                 uid: position % 5, gid: 7, type: UInt8(ascii: link.isEmpty ? "0" : "2"),
                                 path: Array(path.utf8), link: link, uname: Array(owner.utf8),
                                 gname: position % 100 == 0 ? [] : Array("staff".utf8)))
            end = members[position].end
        }
        let index = MemberIndex(members: members, endedEarly: false, endOffset: end, contentSize: end + 1024)
        let frame = try index.encoded(path: "a.tar.zst")
        let records = try MemberIndex.records(frame: frame, path: "a.tar.zst", offset: 0)
        #expect(records.count == members.count && records.endOffset == end && records.contentSize == end + 1024)
        var walked: [MemberIndex.Member] = []
        try records.forEach { walked.append($0) }
        #expect(walked == members)
        #expect(try records.members() == members)
        #expect(try MemberIndex.decode(frame: frame, path: "a.tar.zst", offset: 0) == index)
    }

    @Test("the frame: magic 0x184D2A5B, its size, WEIRTARI, one zstd frame with content size and checksum")
    func frameLayout() throws {
        let index = MemberIndex.sample()
        let bytes = try index.encoded(path: "a.tar.zst")
        #expect(Array(bytes[0 ..< 4]) == [0x5B, 0x2A, 0x4D, 0x18])
        let size = bytes[4 ..< 8].reversed().reduce(0) { $0 << 8 | Int($1) }
        #expect(size == bytes.count - 8)
        #expect(Array(bytes[8 ..< 16]) == Array("WEIRTARI".utf8))
        let inner = Array(bytes[16...])
        inner.withUnsafeBytes { frame in
            #expect(ZSTD_findFrameCompressedSize(frame.baseAddress, frame.count) == frame.count)
            #expect(ZSTD_getFrameContentSize(frame.baseAddress, frame.count) == UInt64(index.recordList().count))
            #expect(FrameHeader(startOf: frame)?.hasChecksum == true)
        }
    }

    @Test("the record list is the layout of docs/members.md, byte for byte")
    func recordListBytes() {
        let index = MemberIndex(members: [
            .init(headerOffset: 0, headerLength: 512, dataLength: 1024, size: 600, mtime: -1, mode: 0o644,
                  uid: 1, gid: 300, path: Array("ab".utf8), uname: Array("u".utf8), gname: Array("g".utf8)),
            .init(headerOffset: 2048, headerLength: 512, dataLength: 0, size: 0, mtime: 64, mode: 0o777,
                  uid: 1, gid: 300, type: UInt8(ascii: "2"), path: Array("ac".utf8), link: Array("ab".utf8),
                  uname: Array("u".utf8), gname: Array("h".utf8)),
        ], endedEarly: true, endOffset: 2560, contentSize: 3000)
        let a = UInt8(ascii: "a"), b = UInt8(ascii: "b"), c = UInt8(ascii: "c"), u = UInt8(ascii: "u")
        let g = UInt8(ascii: "g"), h = UInt8(ascii: "h")
        let expected: [UInt8] = [
            1, 1, 2, 0x80, 0x14, 0xB8, 0x17, // version, flags, count, end 2560, content 3000
            0, 0x80, 0x04, 0x80, 0x08, 0xD8, 0x04, 1, 0xA4, 0x03, 1, 0xAC, 0x02, 0x30, // gap … type '0'
            0, 2, a, b, 0, 0, 1, u, 0, 1, g, // path, link, uname, gname (first: nothing shared)
            0x80, 0x04, 0x80, 0x04, 0, 0, 0x80, 0x01, 0xFF, 0x03, 1, 0xAC, 0x02, 0x32, // gap 512 (2048 - 1536) …
            1, 1, c, 2, a, b, 1, 0, 0, 1, h, // "ac" shares "a"; link; uname all shared; gname none
        ]
        #expect(index.recordList() == expected)
    }

    @Test("a damaged frame is refused with the file and the index's offset")
    func damagedFrames() throws {
        let good = try MemberIndex.sample().encoded(path: "a.tar.zst")
        var magic = good
        magic[0] = 0x5C
        Self.expectCorrupt(magic, "not 0x184D2A5B")
        Self.expectCorrupt(Array(good.dropLast()), "declares")
        Self.expectCorrupt(Self.sized(Array(good.dropLast())), "cut short")
        var tag = good
        tag[10] = UInt8(ascii: "X")
        Self.expectCorrupt(tag, "WEIRTARI")
        var flipped = good
        flipped[good.count - 6] ^= 0x40
        Self.expectCorrupt(flipped, "does not decode")
        Self.expectCorrupt(Self.sized(good + [0, 0, 0]), "3 bytes follow the record list")
        Self.expectCorrupt(Array(good.prefix(12)), "too short")
    }

    @Test("a zstd frame without its checksum or content size is refused")
    func innerFrameFlags() throws {
        let records = MemberIndex.sample().recordList()
        for (checksum, size) in [(0, 1), (1, 0)] {
            let context = ZSTD_createCCtx()
            defer { ZSTD_freeCCtx(context) }
            ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, Int32(checksum))
            ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, Int32(size))
            if size == 1 { ZSTD_CCtx_setPledgedSrcSize(context, UInt64(records.count)) }
            var inner = [UInt8](repeating: 0, count: ZSTD_compressBound(records.count))
            // Streamed: without a pledged size, the header has no content size.
            let written = records.withUnsafeBytes { source in
                inner.withUnsafeMutableBytes { out in
                    var input = ZSTD_inBuffer(src: source.baseAddress, size: source.count, pos: 0)
                    var output = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
                    _ = ZSTD_compressStream2(context, &output, &input, ZSTD_e_end)
                    return output.pos
                }
            }
            inner.removeSubrange(written...)
            let bytes = Self.sized([0x5B, 0x2A, 0x4D, 0x18, 0, 0, 0, 0] + Array("WEIRTARI".utf8) + inner)
            Self.expectCorrupt(bytes, "lacks its content size or checksum")
        }
    }

    @Test("a record list that lies is refused, never half believed")
    func lyingRecordLists() {
        let valid = MemberIndex.sample().recordList()
        Self.expectCorrupt(Self.frame([2, 0, 0, 0, 0]), "version 2")
        Self.expectCorrupt(Self.frame(Array(valid.dropLast())), "past the end")
        Self.expectCorrupt(Self.frame(valid + [0]), "1 bytes follow the last member's record")
        Self.expectCorrupt(Self.frame([1, 0, 0, 0x81]), "varint runs past the end")
        Self.expectCorrupt(Self.frame([1, 0, 0] + [UInt8](repeating: 0xFF, count: 10) + [1, 0]), "larger than 64")
        Self.expectCorrupt(Self.frame([1, 0, 0, 10, 9]), "passes the content size")
        Self.expectCorrupt(Self.frame([1, 0, 0x80, 0x80, 0x04, 0, 0]), "declares 65536 members")
        // One member whose data runs past the end offset (512 + 512 > 1000).
        let member: [UInt8] = [0, 0x80, 0x04, 0x80, 0x04, 0, 0, 0, 0, 0, 0x30, 0, 1, 0x61, 0, 0, 0, 0, 0]
        Self.expectCorrupt(Self.frame([1, 0, 1, 0xE8, 0x07, 0xE8, 0x07] + member), "member 0 runs past the end")
        // A gap that overflows an Int.
        var overflow: [UInt8] = [1, 0, 1, 0x80, 0x08, 0x80, 0x08]
        overflow += [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F] + member.dropFirst()
        Self.expectCorrupt(Self.frame(overflow), "member 0 runs past")
        // Headers that are not whole blocks.
        var blocks = member
        blocks[1 ... 2] = [0x90, 0x03]
        Self.expectCorrupt(Self.frame([1, 0, 1, 0x80, 0x08, 0x80, 0x08] + blocks), "not whole 512-byte blocks")
        // A first name that claims to share bytes with a previous one.
        var shared = member
        shared[11] = 1
        Self.expectCorrupt(Self.frame([1, 0, 1, 0x80, 0x08, 0x80, 0x08] + shared), "shares 1 bytes")
    }
}
