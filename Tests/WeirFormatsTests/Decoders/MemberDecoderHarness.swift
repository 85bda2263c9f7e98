import Testing
@testable import WeirFormats
@testable import WeirSystem
@testable import WeirTestSupport

/// Drives one ``MemberDecoding`` through the one streaming loop
/// (``FrameDecoder``), as a stream of members does: a member started at
/// offset 0, fed in pieces, its content decoded in place.
struct MemberDecoderHarness {
    /// The content every member holds.
    static let content = TestData.text(200_000)

    /// What the decoders of a run with the default options are made with
    /// (`DecompressionOptions()`: libzstd's window limit, checksums verified).
    static func options(passThrough: Bool = false) -> DecodingOptions {
        DecodingOptions(windowLimit: WindowLimit(memoryLimit: nil), passThrough: passThrough)
    }

    let member: any MemberDecoding

    /// One member of `format` holding ``content``: zstd's from the zstd
    /// tool, the others as a worker encodes them.
    static func member(_ format: CompressedFormat) throws -> [UInt8] {
        if format == .zstd { return try TestData.realTool("/usr/bin/zstd", [], input: content) }
        return try MixedStreamDecoderTests.member(format, content)
    }

    /// The content of `bytes`, fed `piece` bytes at a time until the member
    /// ends, and how many bytes it took; the end of `bytes` is the end of
    /// the input.
    func decode(_ bytes: [UInt8], piece: Int) throws -> (content: [UInt8], taken: Int) {
        try member.start(at: 0)
        var frame = FrameDecoder(member: member, path: "t")
        let space = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.content.count + 1, alignment: 64)
        defer { space.deallocate() }
        var output = InPlaceOutput(space)
        var taken = 0
        try bytes.withUnsafeBytes { all in
            while taken < all.count {
                let given = UnsafeRawBufferPointer(rebasing: all[taken ..< min(all.count, taken + piece)])
                var used = 0
                let outcome = try frame.decodeMember(given, consumed: &used, into: &output)
                taken += used
                if outcome == .ended { break }
            }
        }
        try frame.finish(inputEndsAt: taken)
        return (Array(space[0 ..< output.filled]), taken)
    }

    /// Expects `bytes`, a whole member, to decode to ``content``, fed whole
    /// and a byte at a time (unless `pieces` is false: ISA-L needs it whole).
    func expectWhole(_ bytes: [UInt8], pieces: Bool = true) throws {
        for piece in pieces ? [bytes.count, 1] : [bytes.count] {
            let (content, taken) = try decode(bytes, piece: piece)
            #expect(content == Self.content, "piece \(piece)")
            #expect(taken == bytes.count, "piece \(piece)")
        }
    }

    /// Expects `bytes` cut in half to end inside a member of `format`, at
    /// the offset where it is cut.
    func expectTruncated(_ bytes: [UInt8], _ format: CompressedFormat, piece: Int = 4096) {
        let half = bytes.count / 2
        #expect(throws: WeirError.endsInside(format, path: "t", operation: .decompress, at: half)) {
            _ = try decode(Array(bytes[..<half]), piece: piece)
        }
    }

    /// Expects `bytes` with the byte at `at` inverted (or set to `value`)
    /// to fail with `format`'s corrupt message (`corrupt data: FORMAT: …`).
    func expectDamaged(_ bytes: [UInt8], at: Int, to value: UInt8? = nil, _ format: CompressedFormat,
                       piece: Int = 4096) {
        var damaged = bytes
        damaged[at] = value ?? ~bytes[at]
        let error = #expect(throws: WeirError.self) { _ = try decode(damaged, piece: piece) }
        #expect(error?.kind == .corrupt)
        let text = error.map(String.init(describing:)) ?? ""
        #expect(text.contains("corrupt data: \(format.rawValue): "), "\(text)")
    }
}
