import Testing
@testable import WeirFormats

/// A frame's header as the readers tell one from other bytes.
@Suite("Frame header")
struct FrameHeaderTests {
    @Test("the magic numbers that start a frame: zstd's and the 16 skippable ones, little-endian")
    func magic() {
        #expect(FrameHeader.startsFrame([0x28, 0xB5, 0x2F, 0xFD]))
        #expect(FrameHeader.startsFrame([0x50, 0x2A, 0x4D, 0x18, 0x00]))
        #expect(FrameHeader.startsFrame([0x5F, 0x2A, 0x4D, 0x18]))
        #expect(!FrameHeader.startsFrame([0x60, 0x2A, 0x4D, 0x18]))
        #expect(!FrameHeader.startsFrame([0x28, 0xB5, 0x2F]))
        #expect(!FrameHeader.startsFrame(Array("hell".utf8)))
    }
}
