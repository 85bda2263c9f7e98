import Testing
@testable import WeirFormats
@testable import WeirSystem

@Suite("zstd frames as members, through a DecompressionContext")
struct ZstdMemberDecoderTests {
    static func harness() throws -> MemberDecoderHarness {
        MemberDecoderHarness(member: try ZstdMemberDecoder(options: MemberDecoderHarness.options(), path: "t",
                                                           operation: .decompress))
    }

    @Test("a whole frame gives back its content, given whole and a byte at a time")
    func whole() throws {
        try Self.harness().expectWhole(try MemberDecoderHarness.member(.zstd))
    }

    @Test("a frame cut short ends inside a frame")
    func truncated() throws {
        try Self.harness().expectTruncated(try MemberDecoderHarness.member(.zstd), .zstd)
    }

    @Test("a damaged frame is corrupt data, located at the frame's start")
    func damaged() throws {
        var member = try MemberDecoderHarness.member(.zstd)
        member[member.count - 2] ^= 0xff
        let error = #expect(throws: WeirError.self) { _ = try Self.harness().decode(member, piece: 4096) }
        #expect(error?.kind == .checksumMismatch || error?.kind == .corrupt)
        #expect(error?.description.contains("(frame 0, at offset 0)") == true, "\(String(describing: error))")
    }
}
