import CZstd
import Dispatch
import Foundation
import Glibc
import Testing
@testable import WeirFormats
@testable import WeirSystem
@testable import WeirTestSupport

/// The format tests' namespace (so that `--filter Format` selects them all),
/// with their inputs and helpers: real frames from libzstd and the zstd
/// tools, hand-built frames, and ways of cutting a stream into pieces.
enum FormatTests {
    /// The suite's seeded generator (WeirTestSupport/TestData.swift), so failures reproduce.
    typealias Random = SeededGenerator

    /// Compressible bytes: lines of words, with random digits, seeded.
    static func text(_ count: Int, seed: UInt64) -> [UInt8] {
        let words: [[UInt8]] = ["scan", "frame", "block", "header", "window", "skippable", "seek", "table", "zstd",
                                "offset", "\n"].map { Array($0.utf8) }
        var random = Random(seed: seed)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 16)
        while bytes.count < count {
            let value = random.next()
            bytes.append(contentsOf: words[Int(value % UInt64(words.count))])
            bytes.append(UInt8(ascii: "0") + UInt8((value >> 32) % 10))
            bytes.append(UInt8(ascii: " "))
        }
        return Array(bytes.prefix(count))
    }

    /// One frame of `input` from libzstd (TestData.compress, which the engine
    /// tests above this layer share).
    static func compress(_ input: [UInt8], level: Int32 = 3, checksum: Bool, contentSize: Bool = true,
                         windowLog: Int32 = 0, streamed: Bool = false) -> [UInt8] {
        TestData.compress(input, level: level, checksum: checksum, contentSize: contentSize,
                          windowLog: windowLog, streamed: streamed)
    }

    /// `/usr/bin/zstd -dc FILE`: the decoded bytes, or nil when zstd fails.
    static func zstdDecode(file: URL) throws -> [UInt8]? {
        let output = file.deletingLastPathComponent().appendingPathComponent("decoded-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/zstd")
        process.arguments = ["-d", "-q", "-f", file.path, "-o", output.path]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return Array(try Data(contentsOf: output))
    }

    /// `value` as 4 little-endian bytes.
    static func le32(_ value: UInt32) -> [UInt8] {
        (0 ..< 4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    /// A skippable frame of magic `0x184D2A50 + nibble` around `payload`.
    static func skippable(nibble: UInt8 = 0, _ payload: [UInt8]) -> [UInt8] {
        le32(0x184D_2A50 + UInt32(nibble)) + le32(UInt32(payload.count)) + payload
    }

    /// A block of a hand-built frame.
    enum Block {
        /// A raw block of these bytes.
        case raw([UInt8])
        /// An RLE block: `count` copies of `byte`.
        case rle(UInt8, count: Int)
    }

    /// A zstd frame built by hand from raw and RLE blocks.
    ///
    /// - Parameters:
    ///   - windowDescriptor: the window byte; nil for a single-segment frame.
    ///   - dictionaryID: (value, field size 0/1/2/4).
    ///   - contentSize: (value, field size 0/1/2/4/8); a 2-byte field stores value − 256.
    ///   - checksum: a checksum to append (the flag is set when non-nil).
    static func frame(windowDescriptor: UInt8?, dictionaryID: (UInt32, Int) = (0, 0),
                      contentSize: (UInt64, Int) = (0, 0), checksum: UInt32? = nil, blocks: [Block]) -> [UInt8] {
        let dictionaryFlag: UInt8 = [0: 0, 1: 1, 2: 2, 4: 3][dictionaryID.1]!
        let fcsFlag: UInt8
        switch contentSize.1 {
        case 0: fcsFlag = 0; precondition(windowDescriptor != nil)
        case 1: fcsFlag = 0; precondition(windowDescriptor == nil)
        case 2: fcsFlag = 1
        case 4: fcsFlag = 2
        default: fcsFlag = 3
        }
        var descriptor = fcsFlag << 6 | dictionaryFlag
        if windowDescriptor == nil { descriptor |= 0x20 }
        if checksum != nil { descriptor |= 0x04 }
        var bytes = le32(0xFD2F_B528) + [descriptor]
        if let windowDescriptor { bytes.append(windowDescriptor) }
        bytes += littleEndian(UInt64(dictionaryID.0), dictionaryID.1)
        let stored = contentSize.1 == 2 ? contentSize.0 - 256 : contentSize.0
        bytes += littleEndian(stored, contentSize.1)
        for (index, block) in blocks.enumerated() {
            let last: UInt32 = index == blocks.count - 1 ? 1 : 0
            switch block {
            case .raw(let payload):
                bytes += blockHeader(last: last, type: 0, size: payload.count) + payload
            case .rle(let byte, let count):
                bytes += blockHeader(last: last, type: 1, size: count) + [byte]
            }
        }
        if let checksum { bytes += le32(checksum) }
        return bytes
    }

    /// A 3-byte block header.
    static func blockHeader(last: UInt32, type: UInt32, size: Int) -> [UInt8] {
        let raw = UInt32(size) << 3 | type << 1 | last
        return [
            UInt8(truncatingIfNeeded: raw), UInt8(truncatingIfNeeded: raw >> 8), UInt8(truncatingIfNeeded: raw >> 16),
        ]
    }

    /// `count` little-endian bytes of `value`.
    static func littleEndian(_ value: UInt64, _ count: Int) -> [UInt8] {
        (0 ..< count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// The frames libzstd finds, walking with `ZSTD_findFrameCompressedSize`:
    /// (offset, size); stops at the first error.
    static func libzstdFrames(_ stream: [UInt8]) -> [(offset: Int, size: Int)] {
        var frames: [(Int, Int)] = []
        stream.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let size = ZSTD_findFrameCompressedSize(bytes.baseAddress! + offset, bytes.count - offset)
                if ZSTD_isError(size) != 0 { return }
                frames.append((offset, size))
                offset += size
            }
        }
        return frames
    }

    /// What `ZSTD_findFrameCompressedSize` says of the frame at `offset`; nil on error.
    static func libzstdFrameSize(_ stream: [UInt8], at offset: Int) -> Int? {
        stream.withUnsafeBytes { bytes in
            let size = ZSTD_findFrameCompressedSize(bytes.baseAddress! + offset, bytes.count - offset)
            return ZSTD_isError(size) != 0 ? nil : size
        }
    }

    /// `bytes` as DispatchData (copied).
    static func data(_ bytes: ArraySlice<UInt8>) -> DispatchData {
        bytes.withUnsafeBytes { DispatchData(bytes: $0) }
    }

    /// Cut points that split `count` bytes into pieces of random sizes
    /// (1 … `maxPiece`, with a bias towards tiny pieces).
    static func randomCuts(_ count: Int, maxPiece: Int, random: inout Random) -> [Int] {
        var cuts: [Int] = []
        var position = 0
        while position < count {
            let size: Int
            switch random.next() % 4 {
            case 0: size = 1 + Int(random.next() % 4)
            case 1: size = 1 + Int(random.next() % 32)
            default: size = 1 + Int(random.next() % UInt64(maxPiece))
            }
            position = min(count, position + size)
            cuts.append(position)
        }
        return cuts
    }

    /// Scans `stream` fed as pieces ending at `cuts` (the last cut must be
    /// `stream.count`), then finishes; checks after each piece that the
    /// scanner keeps no more than a header's bytes.
    static func scan(_ stream: [UInt8], cuts: [Int], path: String = "test.zst") throws(WeirError) -> [FrameBoundary] {
        var scanner = FrameScanner(path: path)
        var frames: [FrameBoundary] = []
        var start = 0
        for cut in cuts {
            frames += try scanner.feed(data(stream[start ..< cut]))
            #expect(scanner.bufferedByteCount <= FrameScanner.maxBufferedBytes, "the scanner buffered too much")
            start = cut
        }
        try scanner.finish()
        return frames
    }

    /// Scans `stream` one byte at a time.
    static func scanByteByByte(_ stream: [UInt8]) throws(WeirError) -> [FrameBoundary] {
        try scan(stream, cuts: Array(stride(from: 1, through: stream.count, by: 1)))
    }

    /// Scans `stream` as one DispatchData made of many regions (one per random piece).
    static func scanAsRegions(_ stream: [UInt8], random: inout Random) throws(WeirError) -> [FrameBoundary] {
        var whole = DispatchData.empty
        var start = 0
        for cut in randomCuts(stream.count, maxPiece: 4096, random: &random) {
            whole.append(data(stream[start ..< cut]))
            start = cut
        }
        var scanner = FrameScanner(path: "regions.zst")
        let frames = try scanner.feed(whole)
        try scanner.finish()
        return frames
    }
}
