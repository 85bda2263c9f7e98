import Testing
@testable import WeirFormats

@Suite("xz streams and .lzma members, through liblzma")
struct LzmaMemberDecoderTests {
    static func harness(_ format: CompressedFormat) -> MemberDecoderHarness {
        MemberDecoderHarness(member: LzmaMemberDecoder(format: format, windowLimit: WindowLimit(memoryLimit: nil),
                                                       path: "t", operation: .decompress))
    }

    @Test("a whole member gives back its content, given whole and a byte at a time", arguments: [
        CompressedFormat.xz, .lzma,
    ])
    func whole(format: CompressedFormat) throws {
        try Self.harness(format).expectWhole(try MemberDecoderHarness.member(format))
    }

    @Test("a member cut short ends inside an xz or lzma member", arguments: [CompressedFormat.xz, .lzma])
    func truncated(format: CompressedFormat) throws {
        Self.harness(format).expectTruncated(try MemberDecoderHarness.member(format), format)
    }

    @Test("a damaged xz stream is xz's corrupt data")
    func damagedXz() throws {
        Self.harness(.xz).expectDamaged(try MemberDecoderHarness.member(.xz), at: 100, .xz)
    }

    @Test("an lzma member whose properties cannot be is lzma's corrupt data")
    func damagedLzma() throws {
        Self.harness(.lzma).expectDamaged(try MemberDecoderHarness.member(.lzma), at: 0, to: 0xff, .lzma)
    }
}
