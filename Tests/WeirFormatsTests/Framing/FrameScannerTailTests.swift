import Testing
@testable import WeirFormats
@testable import WeirSystem

extension FormatTests {
    @Suite("Frame scanner: what follows the zstd frames")
    struct FrameScannerTailTests {
        typealias F = FormatTests

        /// Scans `stream` in pieces of `piece` bytes with `policy`; the frames
        /// found, the scanner, and the error thrown, if any.
        static func scan(_ stream: [UInt8], piece: Int, policy: FrameScanner.TailPolicy)
            -> (frames: [FrameBoundary], scanner: FrameScanner, error: WeirError?) {
            var scanner = FrameScanner(path: "tail.zst", operation: .decompress)
            scanner.tailPolicy = policy
            var frames: [FrameBoundary] = []
            do throws(WeirError) {
                var at = 0
                while at < stream.count {
                    let end = min(stream.count, at + piece)
                    frames += try scanner.feed(F.data(stream[at..<end]))
                    at = end
                }
                try scanner.finish()
            } catch {
                return (frames, scanner, error)
            }
            return (frames, scanner, nil)
        }

        @Test(
            "another format after the frames ends the scan there, as zstd then decodes it", arguments: [1, 5, 1 << 20])
        func otherFormat(piece: Int) {
            let frame = F.compress(F.text(5000, seed: 2), checksum: true)
            let skippable: [UInt8] = [0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0]
            for tail in [[0x1f, 0x8b, 8, 0, 9, 9], [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0], [0x04, 0x22, 0x4d, 0x18, 1]]
                as [[UInt8]]
            {
                let stream = frame + skippable + tail + frame
                let scanned = Self.scan(stream, piece: piece, policy: .otherFormats)
                #expect(scanned.error == nil)
                #expect(scanned.frames.count == 2 && scanned.scanner.tailStart == frame.count + 8)
                #expect(scanned.scanner.offset == frame.count + 8)
                // By default, it is corrupt.
                #expect(Self.scan(stream, piece: piece, policy: .fails).error?.kind == .corrupt)
            }
        }

        @Test("data of no format after the frames: the frames first, then the error; pass-through takes it all",
              arguments: [1, 3, 1 << 20])
        func garbage(piece: Int) {
            let frame = F.compress(F.text(5000, seed: 3), checksum: false)
            let stream = frame + Array("garbage".utf8)
            let scanned = Self.scan(stream, piece: piece, policy: .otherFormats)
            #expect(scanned.frames.count == 1)
            #expect(
                scanned.error?.kind == .corrupt && scanned.error?.reason.contains("after frame 0 is not zstd") == true)
            let copied = Self.scan(stream, piece: piece, policy: .anything)
            #expect(copied.error == nil && copied.frames.count == 1 && copied.scanner.tailStart == frame.count)
            // 1 to 3 bytes: too few for a magic number; pass-through's too.
            let short = Self.scan(frame + [1, 2], piece: piece, policy: .anything)
            #expect(short.error == nil && short.scanner.tailStart == frame.count && short.scanner.offset == frame.count)
            #expect(Self.scan(frame + [1, 2], piece: piece, policy: .otherFormats).error?.kind == .truncated)
        }

        @Test("a scan error in a piece keeps the frames that ended before it in that piece, in order (issue 59)",
              arguments: [7, 1 << 20])
        func framesBeforeFailure(piece: Int) {
            let frame = F.compress(F.text(5000, seed: 4), checksum: true)
            // A zstd magic followed by another: the second one's first byte
            // reads as a descriptor with its reserved bit set.
            let magic: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd]
            let stream = frame + frame + magic + magic + frame
            for policy in [FrameScanner.TailPolicy.fails, .otherFormats] {
                var scanner = FrameScanner(path: "bad.zst", operation: .decompress)
                scanner.tailPolicy = policy
                var returned: [FrameBoundary] = []
                var thrown: WeirError?
                var at = 0
                while at < stream.count, thrown == nil {
                    let end = min(stream.count, at + piece)
                    do throws(WeirError) {
                        returned += try scanner.feed(F.data(stream[at..<end]))
                    } catch {
                        thrown = error
                    }
                    at = end
                }
                #expect(thrown?.kind == .corrupt && thrown?.reason.contains("reserved bit") == true)
                // Returned, or kept for the caller by the feed that threw: both frames, in order.
                let frames = returned + scanner.endedBeforeFailure
                #expect(frames.map(\.offset) == [0, frame.count])
                #expect(frames.allSatisfy { $0.compressedSize == frame.count })
                // In one piece, the feed that threw returned none of them.
                if piece > stream.count { #expect(returned.isEmpty && scanner.endedBeforeFailure.count == 2) }
            }
        }

        @Test("another format at offset 0 is a tail from 0 for a decoder of other formats; else not zstd")
        func firstFrame() {
            let gzip: [UInt8] = [0x1f, 0x8b, 8, 0, 1, 2]
            for policy in [FrameScanner.TailPolicy.otherFormats, .anything] {
                for piece in [1, 4, 6] {
                    let scanned = Self.scan(gzip, piece: piece, policy: policy)
                    #expect(scanned.error == nil && scanned.frames.isEmpty && scanned.scanner.tailStart == 0)
                }
                // Bytes of no format weir reads: not zstd, whatever the policy.
                #expect(Self.scan([9, 9, 9, 9, 9, 9], piece: 4, policy: policy).error?.kind == .notZstd)
            }
            #expect(Self.scan(gzip, piece: 4, policy: .fails).error?.kind == .notZstd)
        }
    }
}
