import CZstd
import Dispatch
import Foundation
import Testing
@testable import WeirFormats
@testable import WeirSystem

/// The frame scanner on hand-built and damaged headers: every field size,
/// window descriptors, block size limits, truncation, wrong magic, reserved bits.
extension FormatTests.FrameScannerTests {
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
}
