import Dispatch
import Testing
@testable import WeirFormats
@testable import WeirSystem
@testable import WeirTestSupport

@Suite("Frames of every format, decoded as one stream")
struct MixedStreamDecoderTests {
    /// One member of `format` for `bytes`, as a worker encodes it.
    static func member(_ format: CompressedFormat, _ bytes: [UInt8], level: Int = 3) throws -> [UInt8] {
        let encoder = try MemberEncoder(format: format, level: level, path: "t")
        let bound = MemberEncoder.bound(format: format, size: bytes.count)
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: bound, alignment: 16)
        defer { output.deallocate() }
        let size = try bytes.withUnsafeBytes { try encoder.encode(DispatchData(bytes: $0), into: output, path: "t") }
        return Array(output[0..<size])
    }

    /// Decodes `stream` fed `piece` bytes at a time (gzip through ISA-L when
    /// that is the whole stream, else zlib).
    static func decode(_ stream: [UInt8], piece: Int, passThrough: Bool = false) throws -> [UInt8] {
        let decoder = MixedStreamDecoder(options: MemberDecoderHarness.options(passThrough: passThrough), path: "t",
                                         operation: .decompress, wholeInput: piece >= stream.count)
        var out: [UInt8] = []
        var at = 0
        while at < stream.count {
            let end = min(stream.count, at + piece)
            try stream[at..<end].withUnsafeBytes { piece in
                try decoder.feed(piece) { (block, _) throws(WeirError) in out += block }
            }
            at = end
        }
        try decoder.finish { (block, _) throws(WeirError) in out += block }
        return out
    }

    @Test("the formats are told by their magic numbers, as zstd tells them")
    func detect() {
        #expect(CompressedFormat.detect([0x1f, 0x8b, 8, 0]) == .gzip)
        #expect(CompressedFormat.detect([0xfd, 0x37, 0x7a, 0x58]) == .xz)
        #expect(CompressedFormat.detect([0x5d, 0, 0, 0x80]) == .lzma)
        #expect(CompressedFormat.detect([0x04, 0x22, 0x4d, 0x18]) == .lz4)
        #expect(CompressedFormat.detect([0x28, 0xb5, 0x2f, 0xfd]) == .zstd)
        #expect(CompressedFormat.detect([0x50, 0x2a, 0x4d, 0x18]) == .zstd)
        #expect(CompressedFormat.detect(Array("text".utf8)) == nil)
        #expect(CompressedFormat.detect([0x04, 0x22]) == nil)
    }

    @Test("members of every format, one after another, in pieces of any size, give back their content",
          arguments: [1, 7, 4096, 1 << 24])
    func members(piece: Int) throws {
        let content = TestData.text(300_000)
        var stream: [UInt8] = []
        for format in [CompressedFormat.gzip, .xz, .lz4, .gzip] { stream += try Self.member(format, content) }
        stream += try TestData.realTool("/usr/bin/zstd", [], input: content)
        stream += try Self.member(.lzma, content)
        #expect(try Self.decode(stream, piece: piece) == Array(repeating: content, count: 6).flatMap { $0 })
    }

    /// Bytes after the frames, named by what they are (a 3 MiB array printed
    /// as the case's name filled CI's log with 9 MB).
    struct Tail: Sendable, CustomTestStringConvertible {
        let bytes: [UInt8]
        let testDescription: String
    }

    @Test("with pass-through, what follows the frames is copied as it is, whatever its size",
          arguments: [1, 4096, 1 << 24], [Tail(bytes: Array("garbage!".utf8), testDescription: "garbage!"),
                                          Tail(bytes: [0x1f], testDescription: "a gzip magic's first byte"),
                                          Tail(bytes: Array(repeating: 7, count: 3 << 20), testDescription: "3 MiB")])
    func passThrough(piece: Int, tail: Tail) throws {
        let content = TestData.text(200_000)
        let stream = try Self.member(.gzip, content) + Self.member(.lz4, content) + tail.bytes
        #expect(try Self.decode(stream, piece: piece, passThrough: true) == content + content + tail.bytes)
        #expect(throws: WeirError.self) { try Self.decode(stream, piece: piece) }
    }

    @Test("a failure sends what was decoded before it, as zstd writes it")
    func decodedBeforeFailure() throws {
        let content = TestData.text(100_000)
        let stream = try Self.member(.gzip, content) + Array("garbage!".utf8)
        let decoder = MixedStreamDecoder(options: MemberDecoderHarness.options(), path: "t", operation: .decompress)
        var out: [UInt8] = []
        #expect(throws: WeirError.self) {
            try stream.withUnsafeBytes { try decoder.feed($0) { (block, _) throws(WeirError) in out += block } }
        }
        #expect(out == content)
    }

    @Test("no block holds bytes of two members, the last of each says it ends it; a failure drops what is unsent",
          arguments: [CompressedFormat.gzip, .xz, .lz4], [4096, 1 << 24])
    func damagedMemberHeld(format: CompressedFormat, piece: Int) throws {
        let content = TestData.text(2_500_000)
        var damaged = try Self.member(format, content)
        damaged[damaged.count - 2] ^= 0x01  // its trailer or checksum
        let stream = try Self.member(format, content) + damaged
        let decoder = MixedStreamDecoder(options: MemberDecoderHarness.options(), path: "t", operation: .decompress,
                                         wholeInput: piece >= stream.count)
        var out: [UInt8] = []
        var ends: [Int] = []
        #expect(throws: WeirError.self) {
            var at = 0
            while at < stream.count {
                let end = min(stream.count, at + piece)
                try stream[at..<end].withUnsafeBytes { bytes in
                    try decoder.feed(bytes) { (block, endsMember) throws(WeirError) in
                        out += block
                        if endsMember { ends.append(out.count) }
                    }
                }
                at = end
            }
            try decoder.finish { (block, _) throws(WeirError) in out += block }
        }
        // The first member, whole and ended; of the second, only full blocks
        // (which its caller holds until the member ends: OtherFormatStream).
        #expect(ends == [content.count])
        #expect(Array(out.prefix(content.count)) == content && out.count < 2 * content.count)
    }

    @Test("a weir gzip member records its size in its header; gzip's own members do not")
    func recordedSize() throws {
        let member = try Self.member(.gzip, TestData.text(10_000))
        #expect(member.withUnsafeBytes { GzipMember.recordedSize($0) } == member.count)
        #expect([UInt8]([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3] + Array(repeating: 0, count: 20))
            .withUnsafeBytes { GzipMember.recordedSize($0) } == nil)
    }

    @Test("damage and a cut are errors in the format's words, with the file's name")
    func errors() throws {
        var member = try Self.member(.gzip, TestData.text(100_000))
        member[member.count - 6] ^= 0xff  // the CRC
        #expect { try Self.decode(member, piece: 1000) } throws: { error in
            "\(error)".hasPrefix("t: corrupt data: gzip: incorrect data check")
        }
        let xz = try Self.member(.xz, TestData.text(100_000))
        #expect { try Self.decode(Array(xz.prefix(xz.count / 2)), piece: 1000) } throws: { error in
            "\(error)" == "t: truncated input: the input ends at offset \(xz.count / 2), inside an xz member"
        }
        #expect { try Self.decode(try Self.member(.lz4, [1, 2, 3]) + [9, 9, 9, 9, 9], piece: 3) } throws: { error in
            "\(error)".hasPrefix("t: unknown frame format at input offset")
        }
    }
}
