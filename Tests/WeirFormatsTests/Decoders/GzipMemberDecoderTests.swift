import Testing
@testable import WeirFormats

@Suite("gzip members, through ISA-L (whole input) or zlib (pieces)")
struct GzipMemberDecoderTests {
    static func harness(wholeInput: Bool) -> MemberDecoderHarness {
        MemberDecoderHarness(member: GzipMemberDecoder(path: "t", operation: .decompress, wholeInput: wholeInput))
    }

    @Test("a whole member gives back its content: ISA-L given it whole, zlib whole and a byte at a time")
    func whole() throws {
        let member = try MemberDecoderHarness.member(.gzip)
        try Self.harness(wholeInput: true).expectWhole(member, pieces: false)
        try Self.harness(wholeInput: false).expectWhole(member)
    }

    @Test("a member cut short ends inside a gzip member", arguments: [false, true])
    func truncated(wholeInput: Bool) throws {
        let member = try MemberDecoderHarness.member(.gzip)
        Self.harness(wholeInput: wholeInput).expectTruncated(member, .gzip, piece: wholeInput ? member.count : 4096)
    }

    @Test("a damaged member is gzip's corrupt data, through either library", arguments: [false, true])
    func damaged(wholeInput: Bool) throws {
        let member = try MemberDecoderHarness.member(.gzip)
        Self.harness(wholeInput: wholeInput).expectDamaged(member, at: member.count / 2, .gzip,
                                                              piece: wholeInput ? member.count : 4096)
    }
}
