import Foundation
import Testing
@testable import WeirSeekable
@testable import WeirSystem
@testable import WeirTestSupport

@Suite("Frame listing")
struct FrameListingTests {
    /// Lists `bytes` written to a temporary file.
    static func list(_ bytes: [UInt8]) throws(WeirError) -> FrameListing {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("input.zst").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return try FrameListing.read(path: path)
    }

    /// Found by scripts/fuzz (target `list`): a 24-byte frame whose header
    /// declares 2^64 − 2 bytes of content trapped converting it to Int.
    @Test("a frame declaring more content than its blocks can hold is corrupt, not a trap")
    func declaredSizeBeyondBlocks() {
        let crash: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0xD5, 0xEA, 0xFF, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                              0xFF, 0x03, 0x80, 0x00, 0x00, 0x17, 0x17, 0x17, 0x92, 0x8F]
        do throws(WeirError) {
            let listing = try Self.list(crash)
            Issue.record("listed: \(listing.frames)")
        } catch {
            #expect(error.kind == .corrupt)
            #expect(error.reason.contains("frame 0 at offset 0 declares 18446744073709551614 bytes of content"))
        }
    }

    @Test("a frame declaring what its blocks hold is listed with that size")
    func declaredSizeWithinBlocks() throws {
        // One raw block of 3 bytes, declaring 3 bytes (single segment, 1-byte Frame_Content_Size).
        let frame: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x20, 0x03, 0x19, 0x00, 0x00, 0x61, 0x62, 0x63]
        let listing = try Self.list(frame)
        #expect(listing.frames.count == 1)
        #expect(listing.decompressedSize == 3)
    }
}
