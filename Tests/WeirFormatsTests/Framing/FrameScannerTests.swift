import CZstd
import Dispatch
import Foundation
import Testing
@testable import WeirFormats
@testable import WeirTestSupport

extension FormatTests {
    @Suite("Frame scanner")
    struct FrameScannerTests {
        typealias F = FormatTests

        /// 3 MB of text, compressed by the zstd tools below.
        static let bigText = F.text(3_000_000, seed: 5)

        /// Checks that `frames` tile `stream` from offset 0 and that each frame's
        /// size is what `ZSTD_findFrameCompressedSize` says.
        static func expectAgreesWithLibzstd(_ frames: [FrameBoundary], _ stream: [UInt8],
                                            sourceLocation: SourceLocation = #_sourceLocation) {
            let reference = F.libzstdFrames(stream)
            #expect(frames.count == reference.count, sourceLocation: sourceLocation)
            #expect(frames.map(\.offset) == reference.map(\.offset), sourceLocation: sourceLocation)
            #expect(frames.map(\.compressedSize) == reference.map(\.size), sourceLocation: sourceLocation)
            #expect(frames.map(\.index) == Array(0 ..< frames.count), sourceLocation: sourceLocation)
            #expect(frames.reduce(0) { $0 + $1.compressedSize } == stream.count, sourceLocation: sourceLocation)
        }

        /// The stream scanned whole, in random pieces (several seeds), as one
        /// DispatchData of many regions, and byte by byte when it is small; all
        /// must give the same frames, which are returned.
        static func scanEveryWay(_ stream: [UInt8], seeds: Int = 4,
                                 sourceLocation: SourceLocation = #_sourceLocation) throws -> [FrameBoundary] {
            let whole = try F.scan(stream, cuts: stream.isEmpty ? [] : [stream.count])
            for seed in 0 ..< UInt64(seeds) {
                var random = F.Random(seed: seed)
                let cuts = F.randomCuts(stream.count, maxPiece: max(1, min(stream.count, 200_000)), random: &random)
                #expect(try F.scan(stream, cuts: cuts) == whole, sourceLocation: sourceLocation)
                #expect(try F.scanAsRegions(stream, random: &random) == whole, sourceLocation: sourceLocation)
            }
            if stream.count <= 70_000 {
                #expect(try F.scanByteByByte(stream) == whole, sourceLocation: sourceLocation)
            }
            return whole
        }

        /// The little-endian u32 at the end of `bytes`.
        static func lastWord(_ bytes: [UInt8]) -> UInt32 {
            bytes.suffix(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
        }

        @Test("one libzstd frame: sizes, checksum, content size, window", arguments: [0, 1, 100, 5000, 300_000])
        func singleFrame(size: Int) throws {
            let input = F.text(size, seed: UInt64(size))
            for checksum in [false, true] {
                for contentSize in [true, false] {
                    let frame = F.compress(input, checksum: checksum, contentSize: contentSize)
                    let frames = try Self.scanEveryWay(frame, seeds: 2)
                    Self.expectAgreesWithLibzstd(frames, frame)
                    let found = try #require(frames.first)
                    #expect(found.offset == 0 && found.compressedSize == frame.count && found.end == frame.count)
                    #expect(found.header.kind == .zstd)
                    #expect(found.header.hasChecksum == checksum)
                    #expect(found.contentChecksum == (checksum ? Self.lastWord(frame) : nil))
                    #expect(found.skippableValue == nil)
                    #expect(found.header.contentSize == (contentSize ? UInt64(size) : nil))
                    let declared = frame.withUnsafeBytes { ZSTD_getFrameContentSize($0.baseAddress, $0.count) }
                    #expect(declared == (contentSize ? UInt64(size) : UInt64.max))  // UNKNOWN is 0ULL - 1
                    #expect(found.header.dictionaryID == 0)
                    #expect(found.blockCount >= max(1, (size + 131_071) / 131_072))
                    if found.header.isSingleSegment {
                        #expect(found.header.windowSize == UInt64(size))
                    } else {
                        #expect(found.header.windowSize >= 1024)
                    }
                    #expect(found.header.headerSize >= 6 && found.header.headerSize <= 18)
                }
            }
        }

        @Test("a streamed libzstd frame: window from the descriptor, no content size")
        func streamedFrameWindow() throws {
            let frame = F.compress(F.text(300_000, seed: 3), checksum: false, windowLog: 20, streamed: true)
            let frames = try Self.scanEveryWay(frame, seeds: 2)
            Self.expectAgreesWithLibzstd(frames, frame)
            let header = try #require(frames.first).header
            #expect(!header.isSingleSegment)
            #expect(header.windowSize == 1 << 20)
            #expect(header.blockMaximumSize == 128 * 1024)
            #expect(header.contentSize == nil)
            #expect(header.headerSize == 6)
        }

        @Test("libzstd's smallest window, raw blocks and RLE blocks agree with libzstd")
        func smallWindowRawAndRLE() throws {
            let inputs = [F.text(100_000, seed: 4), TestData.random(50_000, seed: 5),
                          [UInt8](repeating: 0, count: 1 << 20)]
            for input in inputs {
                for windowLog: Int32 in [10, 0] {
                    let frame = F.compress(input, level: 1, checksum: true, windowLog: windowLog, streamed: true)
                    let frames = try Self.scanEveryWay(frame, seeds: 1)
                    Self.expectAgreesWithLibzstd(frames, frame)
                    let found = try #require(frames.first)
                    if windowLog == 10 {
                        #expect(found.header.windowSize == 1024)
                        #expect(found.blockCount >= input.count / 1024)
                    }
                }
            }
        }

        @Test("concatenated zstd and skippable frames, cut every way")
        func concatenation() throws {
            let parts: [[UInt8]] = [
                F.compress(F.text(10_000, seed: 1), checksum: true),
                F.skippable(nibble: 0, F.le32(1234)),
                F.compress([], checksum: false),
                F.skippable(nibble: 15, []),
                F.compress(F.text(200_000, seed: 2), level: 1, checksum: false, streamed: true),
                F.skippable(nibble: 7, F.text(3000, seed: 3)),
                F.compress(F.text(1, seed: 4), checksum: true),
                F.frame(windowDescriptor: nil, contentSize: (3, 1), blocks: [.rle(0x41, count: 3)]),
                F.skippable(nibble: 14, [1, 2, 3]),
            ]
            let stream = parts.flatMap { $0 }
            let frames = try Self.scanEveryWay(stream, seeds: 8)
            Self.expectAgreesWithLibzstd(frames, stream)
            #expect(frames.map(\.compressedSize) == parts.map(\.count))
            #expect(frames.map(\.header.kind) == [.zstd, .skippable(nibble: 0), .zstd, .skippable(nibble: 15), .zstd,
                                                  .skippable(nibble: 7), .zstd, .zstd, .skippable(nibble: 14)])
            #expect(frames.map(\.skippableValue) == [nil, 1234, nil, nil, nil, nil, nil, nil, nil])
            #expect(frames[2].header.contentSize == 0)
            #expect(frames[7].header.contentSize == 3 && frames[7].blockCount == 1)
            #expect(frames.filter(\.header.isSkippable).allSatisfy { $0.blockCount == 0 && $0.header.headerSize == 8 })
        }

        @Test("every two- and three-piece split of a small stream gives the same frames")
        func everySplit() throws {
            let stream = F.compress(F.text(300, seed: 11), checksum: true) + F.skippable(F.le32(9))
                + F.compress(F.text(200, seed: 12), checksum: false, streamed: true)
            let expected = try F.scan(stream, cuts: [stream.count])
            #expect(expected.count == 3)
            for first in 0 ... stream.count {
                #expect(try F.scan(stream, cuts: [first, stream.count]) == expected)
                for second in stride(from: first, through: stream.count, by: 7) {
                    #expect(try F.scan(stream, cuts: [first, second, stream.count]) == expected)
                }
            }
        }

        @Test("zstd -T2 writes one frame of many blocks")
        func zstdMultithreaded() throws {
            let stream = try TestData.realTool("/usr/bin/zstd", ["-T2", "-3"], input: Self.bigText)
            let frames = try Self.scanEveryWay(stream, seeds: 3)
            Self.expectAgreesWithLibzstd(frames, stream)
            let frame = try #require(frames.first)
            #expect(frames.count == 1)
            #expect(frame.blockCount >= Self.bigText.count / (128 * 1024))
            #expect(frame.header.contentSize == UInt64(Self.bigText.count))
            #expect(frame.header.hasChecksum)
            #expect(frame.contentChecksum == Self.lastWord(stream))
        }

        @Test("pzstd files are skippable size hints followed by zstd frames")
        func pzstd() throws {
            let input = Self.bigText + F.text(2_000_000, seed: 6)
            let stream = try TestData.realTool("/usr/bin/pzstd", ["-1", "-p", "2"], input: input)
            let frames = try Self.scanEveryWay(stream, seeds: 3)
            Self.expectAgreesWithLibzstd(frames, stream)
            #expect(frames.count >= 4 && frames.count % 2 == 0)
            for pair in stride(from: 0, to: frames.count - 1, by: 2) {
                let hint = frames[pair]
                let frame = frames[pair + 1]
                #expect(hint.header.kind == .skippable(nibble: 0))
                #expect(hint.compressedSize == 12)
                #expect(hint.skippableValue.map(Int.init) == frame.compressedSize)
                #expect(frame.header.kind == .zstd)
                #expect(frame.header.contentSize == nil)
            }
            // The content bound counts the empty last block pzstd writes as 0,
            // not as a block's worth: it exceeds a frame's content by less than
            // one block (its last compressed block may be partial).
            let zstdFrames = frames.filter { $0.header.kind == .zstd }
            let overshoot = zstdFrames.reduce(0) { $0 + $1.contentBound } - input.count
            #expect(overshoot >= 0 && overshoot < zstdFrames.count * FrameScanner.blockSizeMax)
        }

        @Test("a huge skippable frame is skipped without buffering, and tracked")
        func hugeSkippable() throws {
            var scanner = FrameScanner(path: "huge")
            #expect(try scanner.feed(F.data((F.le32(0x184D_2A53) + F.le32(UInt32.max))[...])).isEmpty)
            #expect(scanner.currentHeader?.kind == .skippable(nibble: 3))
            let piece = F.data(ArraySlice(repeating: 0, count: 65536))
            for round in 1 ... 16 {
                #expect(try scanner.feed(piece).isEmpty)
                #expect(scanner.bufferedByteCount == 0)
                #expect(scanner.currentFrameStart == 0 && scanner.currentFrameBytes == 8 + round * 65536)
            }
            do { try scanner.finish(); Issue.record("truncation not reported") } catch {
                #expect(error.kind == .truncated)
                #expect(error.reason.contains("\(Int(UInt32.max) - 16 * 65536) bytes short"))
            }
        }

        @Test("the frame in progress: where it started, bytes seen, its header")
        func currentFrame() throws {
            let first = F.compress(F.text(500_000, seed: 8), checksum: true)
            let second = F.skippable(nibble: 1, F.text(5000, seed: 9))
            let stream = first + second
            var scanner = FrameScanner(path: "progress")
            var found: [FrameBoundary] = []
            var position = 0
            while position < stream.count {
                let end = min(stream.count, position + 997)
                found += try scanner.feed(F.data(stream[position ..< end]))
                position = end
                let start: Int? = position < first.count ? 0
                    : (position > first.count && position < stream.count ? first.count : nil)
                #expect(scanner.currentFrameStart == start)
                #expect(scanner.currentFrameBytes == (start.map { position - $0 } ?? 0))
                if start == 0 {
                    #expect(scanner.currentHeader?.contentSize == 500_000)
                } else if start != nil {
                    #expect(scanner.currentHeader?.kind == .skippable(nibble: 1))
                } else {
                    #expect(scanner.currentHeader == nil)
                }
            }
            try scanner.finish()
            #expect(found.map(\.offset) == [0, first.count] && scanner.frameCount == 2)
        }

        @Test("seeded mutations: frames or a clean error, never a crash; memory stays bounded")
        func mutations() throws {
            let base = F.compress(F.text(2000, seed: 21), checksum: true) + F.skippable(F.le32(1000))
                + F.compress(F.text(700, seed: 22), checksum: false, streamed: true)
                + F.frame(windowDescriptor: nil, contentSize: (20, 1),
                          blocks: [.rle(1, count: 10), .raw(Array(repeating: 2, count: 10))])
                + F.skippable(nibble: 14, Array(repeating: 0, count: 17))
            var random = F.Random(seed: 2024)
            var outcomes = (frames: 0, errors: 0)
            for _ in 0 ..< 3000 {
                var stream = base
                switch random.next() % 6 {
                case 0:  // flip a few bytes anywhere
                    for _ in 0 ... random.next() % 4 {
                        stream[Int(random.next() % UInt64(stream.count))] ^= UInt8(1 + random.next() % 255)
                    }
                case 1:  // flip a byte in the first header
                    stream[Int(random.next() % 20)] ^= UInt8(1 << (random.next() % 8))
                case 2:  // truncate
                    stream = Array(stream.prefix(Int(random.next() % UInt64(stream.count))))
                case 3:  // extend with random bytes
                    stream += (0 ..< 1 + random.next() % 64).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                case 4:  // duplicate a slice somewhere else
                    let from = Int(random.next() % UInt64(stream.count))
                    let slice = stream[from ..< min(stream.count, from + Int(random.next() % 64))]
                    stream.insert(contentsOf: slice, at: Int(random.next() % UInt64(stream.count)))
                default:  // a zstd magic, then noise
                    let noise = (0 ..< random.next() % 200).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                    stream = F.le32(0xFD2F_B528) + noise
                }
                let cuts = F.randomCuts(stream.count, maxPiece: 512, random: &random)
                do {
                    let frames = try F.scan(stream, cuts: cuts, path: "mutant.zst")
                    outcomes.frames += 1
                    var offset = 0
                    for frame in frames {
                        #expect(frame.offset == offset)
                        if let reference = F.libzstdFrameSize(stream, at: frame.offset) {
                            #expect(reference == frame.compressedSize)
                        }
                        offset = frame.end
                    }
                    #expect(offset == stream.count)
                } catch {
                    outcomes.errors += 1
                    #expect([.notZstd, .corrupt, .truncated].contains(error.kind))
                    #expect(error.path == "mutant.zst" && error.reason.contains("frame "))
                }
            }
            #expect(outcomes.frames > 100 && outcomes.errors > 100)
        }
    }
}
