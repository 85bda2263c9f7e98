import Testing
@testable import WeirFormats
@testable import WeirSystem
@testable import WeirTestSupport

@Suite("The one streaming loop: its checks, for any member decoder")
struct FrameDecoderTests {
    /// A member of `length` bytes that decode to themselves, or (`stalls`)
    /// a decoder that takes nothing and gives nothing.
    final class CopyMember: MemberDecoding {
        let format: CompressedFormat
        let length: Int
        let stalls: Bool
        var consumed: (@Sendable (Int) -> Void)?
        private var copied = 0

        init(_ format: CompressedFormat, length: Int, stalls: Bool = false) {
            (self.format, self.length, self.stalls) = (format, length, stalls)
        }

        func start(at offset: Int) { copied = 0 }

        func step(_ source: UnsafeRawBufferPointer, consumed: inout Int,
                  into destination: UnsafeMutableRawBufferPointer, filled: inout Int) -> Bool {
            guard !stalls else { return false }
            let count = min(source.count - consumed, destination.count - filled, length - copied)
            (destination.baseAddress! + filled).copyMemory(from: source.baseAddress! + consumed, byteCount: count)
            (consumed, filled, copied) = (consumed + count, filled + count, copied + count)
            return copied == length
        }

        func corrupt(_ detail: String) -> WeirError {
            .formatCorrupt(format, path: "t", operation: .decompress, detail, offset: 0)
        }
    }

    /// `bytes` through a decoder of `member`, in `piece`-byte pieces, into a
    /// 1000-byte scratch buffer; the content, then the end of the input.
    static func decode(_ member: CopyMember, _ bytes: [UInt8], piece: Int) throws -> [UInt8] {
        var decoder = FrameDecoder(member: member, path: "t")
        let space = UnsafeMutableRawBufferPointer.allocate(byteCount: 1000, alignment: 8)
        defer { space.deallocate() }
        var output = ScratchOutput(space: space)
        var content: [UInt8] = []
        for start in stride(from: 0, to: bytes.count, by: piece) {
            _ = try bytes[start ..< min(bytes.count, start + piece)].withUnsafeBytes { given in
                try decoder.decode(given, into: &output) { (piece) throws(WeirError) in
                    content += piece
                    return true
                }
            }
        }
        try decoder.finish(inputEndsAt: bytes.count)
        return content
    }

    @Test("content larger than the output buffer, in pieces of any size, comes out whole", arguments: [1, 999, 5000])
    func whole(piece: Int) throws {
        let bytes = TestData.text(5000)
        #expect(try Self.decode(CopyMember(.lz4, length: 5000), bytes, piece: piece) == bytes)
    }

    @Test("the input ending inside the member is the one truncation, naming its format",
          arguments: [CompressedFormat.zstd, .gzip, .xz, .lzma, .lz4])
    func truncated(format: CompressedFormat) {
        #expect(throws: WeirError.endsInside(format, path: "t", operation: .decompress, at: 100)) {
            _ = try Self.decode(CopyMember(format, length: 200), TestData.text(100), piece: 30)
        }
    }

    @Test("bytes after the end of the member are the format's corrupt data")
    func bytesAfter() {
        #expect(throws: CopyMember(.gzip, length: 0).corrupt("bytes after the end of the frame")) {
            _ = try Self.decode(CopyMember(.gzip, length: 100), TestData.text(101), piece: 101)
        }
    }

    @Test("a decoder that takes nothing and gives nothing is refused, not spun on, in its format's words")
    func stalled() {
        #expect(throws: CopyMember(.xz, length: 0).corrupt("the decoder makes no progress")) {
            _ = try Self.decode(CopyMember(.xz, length: 100, stalls: true), TestData.text(100), piece: 100)
        }
    }

    @Test("a decoder followed by progress is given its input a step at a time, each step told")
    func progressSteps() throws {
        let count = 3 * FrameDecoder.step + 5
        let member = CopyMember(.zstd, length: count)
        let told = Locked<[Int]>([])
        member.consumed = { step in told.withLock { $0.append(step) } }
        var decoder = FrameDecoder(member: member, path: "t")
        let space = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 8)
        defer { space.deallocate() }
        var output = InPlaceOutput(space)
        _ = try TestData.text(count).withUnsafeBytes { try decoder.decode($0, into: &output) }
        try decoder.checkEnded()
        let steps = told.withLock { $0 }
        #expect(steps.reduce(0, +) == count)
        #expect(steps.allSatisfy { $0 <= FrameDecoder.step })
        #expect(steps.count >= 4)
    }
}
