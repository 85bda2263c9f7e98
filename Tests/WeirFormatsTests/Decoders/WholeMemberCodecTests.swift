import Testing
@testable import WeirFormats

@Suite("whole members in one call: libdeflate, liblz4, liblzma behind WholeMemberCodec")
struct WholeMemberCodecTests {
    let content = MemberDecoderHarness.content

    /// `member` decoded by `decode` into a buffer of `capacity` bytes: what it returns, and the buffer.
    func decoded<Result>(_ member: [UInt8], capacity: Int,
                         _ decode: (UnsafeRawBufferPointer, UnsafeMutableRawPointer) throws -> Result)
        rethrows -> (Result, [UInt8]) {
        var output = [UInt8](repeating: 0, count: capacity)
        let result = try member.withUnsafeBytes { input in
            try output.withUnsafeMutableBytes { space in
                // A buffer of at least one byte has an address.
                try decode(input, space.baseAddress.unsafelyUnwrapped)
            }
        }
        return (result, output)
    }

    @Test("a gzip member inflates whole; a buffer too small says so; a damaged one does not inflate")
    func gzip() throws {
        let member = try MemberDecoderHarness.member(.gzip)
        let codec = WholeMemberCodec(path: "t")
        let (whole, output) = try decoded(member, capacity: content.count) {
            try codec.inflateGzip($0, into: $1, capacity: content.count)
        }
        guard case .inflated(let consumed, let produced) = whole else {
            Issue.record("not inflated: \(whole)")
            return
        }
        #expect(consumed == member.count && produced == content.count && output == content)
        let (short, _) = try decoded(member, capacity: content.count - 1) {
            try codec.inflateGzip($0, into: $1, capacity: content.count - 1)
        }
        #expect({ if case .outputTooSmall = short { true } else { false } }())
        var damaged = member
        damaged[member.count / 2] ^= 0xFF
        let (bad, _) = try decoded(damaged, capacity: 2 * content.count) {
            try codec.inflateGzip($0, into: $1, capacity: 2 * content.count)
        }
        #expect({ if case .damaged = bad { true } else { false } }())
    }

    @Test("an lz4 frame decodes to its content; a damaged checksum is named by liblz4")
    func lz4() throws {
        let member = try MemberDecoderHarness.member(.lz4)
        let codec = WholeMemberCodec(path: "t")
        let (problem, output) = try decoded(member, capacity: content.count) {
            try codec.decodeLz4Frame($0, size: member.count, into: $1, content: content.count)
        }
        #expect(problem == nil && output == content)
        var damaged = member
        damaged[member.count - 1] ^= 0xFF
        let (reason, _) = try decoded(damaged, capacity: content.count) {
            try codec.decodeLz4Frame($0, size: member.count, into: $1, content: content.count)
        }
        #expect(reason?.lowercased().contains("checksum") == true, "\(String(describing: reason))")
    }

    @Test("xz streams are found from their footers and decoded whole; anything else is no run of streams")
    func xz() throws {
        let member = try MemberDecoderHarness.member(.xz)
        let two = member + member
        let streams = two.withUnsafeBytes { WholeMemberCodec.xzStreams($0) }
        #expect(streams?.map(\.start) == [0, member.count])
        #expect(streams?.allSatisfy { $0.size == member.count && $0.content == content.count } == true)
        #expect((two + [0]).withUnsafeBytes { WholeMemberCodec.xzStreams($0) } == nil)
        #expect(content.withUnsafeBytes { WholeMemberCodec.xzStreams($0) } == nil)
        let (error, output) = decoded(member, capacity: content.count) {
            WholeMemberCodec.decodeXzStream($0, size: member.count, into: $1, content: content.count,
                                            memoryLimit: .max, path: "t", operation: .decompress, offset: 0)
        }
        #expect(error == nil && output == content)
        var damaged = member
        damaged[member.count / 2] ^= 0xFF
        let (failure, _) = decoded(damaged, capacity: content.count) {
            WholeMemberCodec.decodeXzStream($0, size: member.count, into: $1, content: content.count,
                                            memoryLimit: .max, path: "t", operation: .decompress, offset: 7)
        }
        #expect(failure?.kind == .corrupt, "\(String(describing: failure))")
    }
}
