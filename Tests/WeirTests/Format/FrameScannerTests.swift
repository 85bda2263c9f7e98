import CZstd
import Dispatch
import Foundation
import Testing
@testable import Weir

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

        @Test("hand-built headers: every field size", arguments: [false, true])
        func handBuiltHeaders(singleSegment: Bool) throws {
            let dictionaryValues: [Int: UInt32] = [0: 0, 1: 0xAB, 2: 0xABCD, 4: 0x1234_5678]
            for dictionarySize in [0, 1, 2, 4] {
                for fcsSize in singleSegment ? [1, 2, 4, 8] : [0, 2, 4, 8] {
                    for checksum in [nil, UInt32(0xDEAD_BEEF)] {
                        let content = fcsSize == 1 ? 150 : 350
                        let raw = F.text(content - 50, seed: UInt64(fcsSize))
                        let frame = F.frame(windowDescriptor: singleSegment ? nil : 0x00,
                                            dictionaryID: (dictionaryValues[dictionarySize]!, dictionarySize),
                                            contentSize: (UInt64(content), fcsSize), checksum: checksum,
                                            blocks: [.raw(raw), .rle(0x5A, count: 50)])
                        let frames = try Self.scanEveryWay(frame, seeds: 1)
                        Self.expectAgreesWithLibzstd(frames, frame)
                        let found = try #require(frames.first)
                        let header = found.header
                        #expect(header.headerSize == 5 + (singleSegment ? 0 : 1) + dictionarySize + fcsSize)
                        #expect(header.isSingleSegment == singleSegment)
                        #expect(header.contentSize == (fcsSize == 0 ? nil : UInt64(content)))
                        #expect(header.windowSize == (singleSegment ? UInt64(content) : 1024))
                        #expect(header.dictionaryID == dictionaryValues[dictionarySize]!)
                        let libraryID = frame.withUnsafeBytes { ZSTD_getDictID_fromFrame($0.baseAddress, $0.count) }
                        #expect(header.dictionaryID == libraryID)
                        let declared = frame.withUnsafeBytes { ZSTD_getFrameContentSize($0.baseAddress, $0.count) }
                        #expect(declared == header.contentSize ?? UInt64.max)
                        #expect(found.blockCount == 2)
                        #expect(found.contentBound == content)  // a raw and an RLE block: exact
                        #expect(found.contentChecksum == checksum)
                        if checksum == nil && dictionarySize == 0 {  // a real frame: libzstd decodes it
                            var output = [UInt8](repeating: 0, count: content)
                            let decoded = output.withUnsafeMutableBytes { out in
                                frame.withUnsafeBytes {
                                    ZSTD_decompress(out.baseAddress, out.count, $0.baseAddress, $0.count)
                                }
                            }
                            #expect(decoded == content)
                            #expect(output == raw + [UInt8](repeating: 0x5A, count: 50))
                        }
                    }
                }
            }
        }

        @Test("window sizes from the window descriptor, without overflow")
        func windowDescriptors() throws {
            let cases: [(UInt8, UInt64)] = [(0x00, 1024), (0x08, 2048), (0x3A, 163_840), (0x50, 1 << 20),
                                             (0xFF, (1 << 41) + 7 * (1 << 38))]
            for (descriptor, window) in cases {
                let frame = F.frame(windowDescriptor: descriptor, blocks: [.raw([])])
                let header = try #require(try F.scan(frame, cuts: [frame.count]).first).header
                #expect(header.windowSize == window)
                #expect(header.blockMaximumSize == Int(min(window, 128 * 1024)))
            }
            // The largest Frame_Content_Size makes the largest single-segment window.
            let frame = F.frame(windowDescriptor: nil, contentSize: (UInt64.max, 8), blocks: [.rle(1, count: 131_072)])
            let header = try #require(try F.scan(frame, cuts: [frame.count]).first).header
            #expect(header.contentSize == UInt64.max && header.windowSize == UInt64.max)
            #expect(header.blockMaximumSize == 128 * 1024)
        }

        @Test("block sizes above min(window, 128 KiB) are corrupt")
        func blockSizeLimits() throws {
            let cases: [(window: UInt8?, contentSize: (UInt64, Int), limit: Int)] = [
                (0x00, (0, 0), 1024), (0x50, (0, 0), 131_072), (nil, (10, 1), 10), (nil, (300, 2), 300),
            ]
            for item in cases {
                let good = F.frame(windowDescriptor: item.window, contentSize: item.contentSize,
                                   blocks: [.rle(7, count: item.limit)])
                #expect(try F.scan(good, cuts: [good.count]).count == 1)
                let bad = F.frame(windowDescriptor: item.window, contentSize: item.contentSize,
                                  blocks: [.rle(7, count: item.limit + 1)])
                var scanner = FrameScanner(path: "big.zst")
                do {
                    _ = try scanner.feed(F.data(bad[...]))
                    Issue.record("a block of \(item.limit + 1) bytes was accepted")
                } catch {
                    #expect(error.kind == .corrupt)
                    #expect(error.reason.contains("declares \(item.limit + 1) bytes"))
                    #expect(error.reason.contains("frame 0"))
                    #expect(error.path == "big.zst" && error.operation == .scan)
                }
            }
        }

        @Test("truncated at every offset: frames up to the cut, then a truncation error naming the frame")
        func truncatedEverywhere() throws {
            let parts = [F.compress(F.text(400, seed: 11), checksum: true), F.skippable(F.le32(77)),
                         F.compress(F.text(300, seed: 12), checksum: false, streamed: true),
                         F.skippable(nibble: 2, F.text(40, seed: 13))]
            let stream = parts.flatMap { $0 }
            var boundaries = [0]
            for part in parts { boundaries.append(boundaries.last! + part.count) }
            for length in 0 ... stream.count {
                var scanner = FrameScanner(path: "cut.zst")
                let prefix = Array(stream.prefix(length))
                var frames = try scanner.feed(F.data(prefix[..<(length / 2)]))
                frames += try scanner.feed(F.data(prefix[(length / 2)...]))
                let complete = boundaries.lastIndex { $0 <= length }!
                #expect(frames.count == complete)
                #expect(scanner.offset == length)
                if boundaries.contains(length) {
                    #expect(scanner.currentFrameStart == nil && scanner.currentFrameBytes == 0)
                    try scanner.finish()
                    continue
                }
                #expect(scanner.currentFrameStart == boundaries[complete])
                #expect(scanner.currentFrameBytes == length - boundaries[complete])
                do {
                    try scanner.finish()
                    Issue.record("no error for a stream cut at \(length)")
                } catch {
                    #expect(error.kind == .truncated)
                    #expect(error.reason.contains("frame \(complete), which starts at offset \(boundaries[complete])"))
                    #expect(error.reason.contains("ends at offset \(length)"))
                }
            }
        }

        @Test("wrong magic: not zstd at the start, corrupt after a frame; the scanner stays failed")
        func wrongMagic() throws {
            for start in [[0, 1, 2, 3], [0x27, 0xB5, 0x2F, 0xFD], Array("hello world".utf8)] as [[UInt8]] {
                var scanner = FrameScanner(path: "x")
                #expect(throws: WeirError.self) { _ = try scanner.feed(F.data(start[...])) }
                do { _ = try scanner.feed(F.data(start[...])) } catch {
                    #expect(error.kind == .notZstd)
                    #expect(error.reason.contains("at offset 0") && error.reason.contains("frame 0"))
                }
            }
            let frame = F.compress(F.text(100, seed: 1), checksum: true)
            let stream = frame + Array("garbage".utf8)
            var scanner = FrameScanner(path: "trailing.zst", operation: .decompress)
            var caught: WeirError?
            do { _ = try scanner.feed(F.data(stream[...])) } catch { caught = error }
            let error = try #require(caught)
            #expect(error.kind == .corrupt && error.operation == .decompress)
            #expect(error.reason.contains("at offset \(frame.count)") && error.reason.contains("frame 1"))
            #expect(scanner.frameCount == 1)
            // Spent: the same error again, from feed and finish.
            do { _ = try scanner.feed(F.data(frame[...])) } catch { #expect(error == caught) }
            do { try scanner.finish() } catch { #expect(error == caught) }
            // Fewer than 4 trailing bytes cannot be told from a cut magic number.
            var short = FrameScanner(path: "short.zst")
            _ = try short.feed(F.data((frame + [1, 2])[...]))
            #expect(throws: WeirError.self) { try short.finish() }
        }

        @Test("reserved descriptor bit and reserved block type are corrupt; the unused bit is ignored")
        func reservedBits() throws {
            var frame = F.frame(windowDescriptor: 0x10, blocks: [.raw([1, 2, 3])])
            frame[4] |= 0x10  // unused bit: accepted, as libzstd does
            let frames = try F.scan(frame, cuts: [frame.count])
            Self.expectAgreesWithLibzstd(frames, frame)

            frame[4] |= 0x08  // reserved bit
            do { _ = try F.scanByteByByte(frame); Issue.record("reserved bit accepted") } catch {
                #expect(error.kind == .corrupt && error.reason.contains("reserved bit"))
                #expect(error.reason.contains("offset 4"))
            }
            #expect(F.libzstdFrames(frame).isEmpty)

            var block = F.frame(windowDescriptor: 0x10, blocks: [.raw([1]), .raw([2])])
            let secondBlock = 6 + 4
            block[secondBlock] |= 0x06  // type 3
            do { _ = try F.scan(block, cuts: [block.count]); Issue.record("reserved block type accepted") } catch {
                #expect(error.kind == .corrupt)
                #expect(error.reason.contains("block 1 at offset \(secondBlock) has the reserved block type"))
            }
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
