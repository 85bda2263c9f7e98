import Testing
@testable import WeirFormats

@Suite("lz4 frames, through liblz4's frame API")
struct Lz4MemberDecoderTests {
    let harness = MemberDecoderHarness(member: Lz4MemberDecoder(path: "t", operation: .decompress))

    @Test("a whole frame gives back its content, given whole and a byte at a time")
    func whole() throws {
        try harness.expectWhole(try MemberDecoderHarness.member(.lz4))
    }

    @Test("a frame cut short ends inside an lz4 frame")
    func truncated() throws {
        harness.expectTruncated(try MemberDecoderHarness.member(.lz4), .lz4)
    }

    @Test("a damaged frame is lz4's corrupt data: its header, its content checksum", arguments: [4, -1])
    func damaged(at: Int) throws {
        let member = try MemberDecoderHarness.member(.lz4)
        harness.expectDamaged(member, at: at < 0 ? member.count + at : at, .lz4)
    }
}
