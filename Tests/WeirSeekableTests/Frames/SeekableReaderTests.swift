import Foundation
import Testing
@testable import WeirPipeline
@testable import WeirPipelineTestSupport
@testable import WeirSeekable
@testable import WeirSystem
@testable import WeirTestSupport

/// Random access to the content of zstd files: every range read through the
/// reader is the same bytes as that range of the whole decode.
@Suite("Seekable reader")
struct SeekableReaderTests {
    typealias Folder = ScratchFolder

    /// Checks `reader` against `content`: both ends, every frame boundary
    /// (from the frames' sizes), empty ranges and random ones.
    func expectRanges(_ reader: SeekableReader, _ content: [UInt8], seed: UInt64,
                      sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(reader.count == content.count, sourceLocation: sourceLocation)
        var random = SeededGenerator(seed: seed)
        var ranges: [Range<Int>] = [0 ..< 0, 0 ..< 1, 0 ..< content.count, content.count - 1 ..< content.count,
                                    content.count ..< content.count]
        for _ in 0 ..< 150 {
            let start = Int(random.next() % UInt64(content.count))
            let length = Int(random.next() % UInt64(min(300_000, content.count - start) + 1))
            ranges.append(start ..< start + length)
        }
        for range in ranges {
            let read = try reader.read(at: range.lowerBound, count: range.count)
            #expect(Array(read) == Array(content[range]), "\(range)", sourceLocation: sourceLocation)
        }
    }

    @Test("weir's frames, indexed by their seek table; a range past the end is refused, naming the sizes")
    func weirFile() async throws {
        let folder = Folder()
        let content = TestData.text(1_500_000)
        folder.write("data", content)
        try TestCompression.compress(
            file: folder.path("data"), options: CompressionOptions(level: 3, threads: 2, chunkSize: 64 << 10))
        let reader = try SeekableReader(path: folder.path("data.zst"))
        #expect(reader.indexedFromSeekTable && reader.frameCount == 23 && reader.warnings.isEmpty)
        try expectRanges(reader, content, seed: 1)
        // Across a boundary: two frames touched.
        #expect(try reader.read((64 << 10) - 10 ..< (64 << 10) + 10) { _ throws(WeirError) in } == 2)
        #expect(throws: WeirError.self) { try reader.read(at: content.count - 5, count: 6) }
        do {
            _ = try reader.read(at: 10, count: content.count)
        } catch {
            #expect(error.kind == .outOfRange && error.reason.contains("(1500000 bytes)"), "\(error)")
        }
        var streamed: [UInt8] = []
        for try await piece in reader.bytes(in: 1_000_000 ..< 1_400_000) { streamed += piece }
        #expect(streamed == Array(content[1_000_000 ..< 1_400_000]))
    }

    @Test("files without a seek table: zstd's one frame, pzstd's, frames without a content size, a concatenation")
    func otherFiles() async throws {
        let folder = Folder()
        let content = TestData.text(900_000, seed: 3)
        let files: [(String, [UInt8])] = [
            ("zstd", try TestData.realTool("/usr/bin/zstd", ["-3"], input: content)),
            ("pzstd", try TestData.realTool("/usr/bin/pzstd", ["-p", "2", "-3"], input: content)),
            ("nosize", try TestData.realTool("/usr/bin/zstd", ["--no-content-size"], input: content)),
        ]
        for (index, (name, bytes)) in files.enumerated() {
            folder.write(name, bytes)
            let reader = try SeekableReader(path: folder.path(name))
            #expect(!reader.indexedFromSeekTable, "\(name)")
            try expectRanges(reader, content, seed: UInt64(10 + index))
        }
        // A weir file after zstd's and pzstd's: its table covers only its part.
        folder.write("data", content)
        try TestCompression.compress(
            file: folder.path("data"), options: CompressionOptions(level: 3, threads: 2, chunkSize: 64 << 10))
        let weir = try #require(FileManager.default.contents(atPath: folder.path("data.zst"))).map { $0 }
        folder.write("all", files[0].1 + files[1].1 + weir)
        let all = try SeekableReader(path: folder.path("all"))
        #expect(all.indexedFromSeekTable)  // weir's part; the frames before it are scanned
        try expectRanges(all, content + content + content, seed: 20)
    }

    @Test(
        """
        a frame larger than the whole-frame limit is streamed from its start; a damaged table is taken at open \
        (issue 71), and a read of the frame it lies about fails, naming the frame; -l's listing finds it
        """
    )
    func streamedAndDamaged() async throws {
        let folder = Folder()
        let content = TestData.text(700_000, seed: 4)
        folder.write("big", try TestData.realTool("/usr/bin/zstd", ["-3"], input: content))
        let streaming = try SeekableReader(
            path: folder.path("big"), options: DecompressionOptions(), wholeFrameLimit: 1000)
        try expectRanges(streaming, content, seed: 30)

        folder.write("data", content)
        try TestCompression.compress(
            file: folder.path("data"), options: CompressionOptions(level: 3, threads: 2, chunkSize: 64 << 10))
        var bytes = try #require(FileManager.default.contents(atPath: folder.path("data.zst"))).map { $0 }
        // The first entry's decompressed size, in the table after its 8-byte skippable header.
        let footer = bytes.count - 9
        let frames = Int(bytes[footer]) | Int(bytes[footer + 1]) << 8
        let entrySize = bytes[footer + 4] & 0x80 != 0 ? 12 : 8
        let table = footer - frames * entrySize
        bytes[table + 4] ^= 0x01
        folder.write("damaged.zst", bytes)
        let reader = try SeekableReader(path: folder.path("damaged.zst"))
        #expect(reader.indexedFromSeekTable && reader.warnings.isEmpty && reader.count == content.count + 1)
        for range in [0 ..< 10, 65_000 ..< 65_536, 0 ..< content.count] {
            do {
                _ = try reader.read(at: range.lowerBound, count: range.count)
                Issue.record("\(range): read from a table that lies about frame 0")
            } catch {
                #expect(error.kind == .corrupt && error.reason.contains(
                    "frame 0 at offset 0 declares 65536 bytes of content, but its seek table entry lists 65537"),
                        "\(range): \(error)")
            }
        }
        // The frames after it, as the table places them; -l reads every header and finds the lie.
        #expect(try reader.read(at: 65_537, count: 100) == Data(content[65_536 ..< 65_636]))
        #expect(try FrameListing.read(path: folder.path("damaged.zst")).tableMismatch != nil)
    }

    @Test("no byte of a frame is returned before its checksum passed, a read inside it too (issue 59)")
    func partialThenWhole() async throws {
        let folder = Folder()
        // Frames of 4 MiB: without checking, streaming stops after the first MiB of output.
        let content = TestData.text(5_000_000, seed: 5)
        folder.write("data", content)
        try TestCompression.compress(
            file: folder.path("data"), options: CompressionOptions(level: 3, threads: 2, chunkSize: 4 << 20))
        var bytes = try #require(FileManager.default.contents(atPath: folder.path("data.zst"))).map { $0 }
        let first = try FrameListing.read(path: folder.path("data.zst")).frames[0]
        let size = try #require(first.decompressedSize)
        #expect(size > 2 << 20, "frame 0 holds \(size) bytes")
        bytes[first.offset + first.compressedSize - 1] ^= 0x01  // frame 0's stored checksum
        folder.write("bad.zst", bytes)
        for start in [10, size - 10] {
            let reader = try SeekableReader(path: folder.path("bad.zst"))
            let error = #expect(throws: WeirError.self, "start \(start)") { try reader.read(at: start, count: 10) }
            #expect(error?.kind == .checksumMismatch && "\(error!)".contains("frame 0, at offset 0"), "\(start)")
        }
        // Unchecked (--no-check), a first read inside a frame streams and stops there.
        let unchecked = try SeekableReader(path: folder.path("bad.zst"),
                                           options: DecompressionOptions(verifyChecksum: false))
        #expect(try unchecked.read(at: 10, count: 10) == Data(content[10 ..< 20]))
        // A first read past the first MiB of an intact frame.
        let good = try SeekableReader(path: folder.path("data.zst"))
        #expect(try good.read(at: 3 << 20, count: 100) == Data(content[(3 << 20) ..< (3 << 20) + 100]))
    }

    /// Three frames of 200,000 bytes that declare no size (zstd from a
    /// pipe, with checksums), given a seek table by `weir --index`.
    func unsizedFrames(_ folder: Folder, _ content: [UInt8]) throws -> [UInt8] {
        var bytes: [UInt8] = []
        for part in 0 ..< 3 {
            let slice = Array(content[part * 200_000 ..< (part + 1) * 200_000])
            bytes += try TestData.realTool("/usr/bin/zstd", ["--no-content-size"], input: slice)
        }
        folder.write("plain.zst", bytes)
        _ = try SeekTableAppender.index(path: folder.path("plain.zst"), synchronous: false)
        return try #require(FileManager.default.contents(atPath: folder.path("plain.zst"))).map { $0 }
    }

    @Test(
        """
        sizes only the seek table gives are taken without decoding, and each frame decoded is checked against its \
        entry, whole or streamed (issue 59)
        """
    )
    func tableSizesTrustedThenChecked() throws {
        let folder = Folder()
        let content = TestData.text(600_000, seed: 6)
        var bytes = try unsizedFrames(folder, content)
        let frames = try FrameListing.read(path: folder.path("plain.zst")).frames
        #expect(frames.filter(\.sizeFromTableOnly).count == 3)
        // Frame 2's body damaged: opening decodes nothing, so it opens, and
        // only reads of frame 2 fail.
        var damaged = bytes
        damaged[frames[2].offset + frames[2].compressedSize / 2] ^= 0x20
        folder.write("damaged.zst", damaged)
        let reader = try SeekableReader(path: folder.path("damaged.zst"))
        #expect(reader.indexedFromSeekTable && reader.count == 600_000)
        #expect(try reader.read(at: 150_000, count: 100_000) == Data(content[150_000 ..< 250_000]))
        #expect(throws: WeirError.self) { try reader.read(at: 450_000, count: 10) }
        // Entry 0 made 1,000 bytes larger, entry 1 as much smaller: a range
        // across the boundary the table gives fails, naming frame 0 and the sizes.
        let footer = bytes.count - 9
        let table = footer - 3 * (bytes[footer + 4] & 0x80 != 0 ? 12 : 8)
        for (at, change) in [(table + 4, 1000), (table + (bytes[footer + 4] & 0x80 != 0 ? 16 : 12), -1000)] {
            let value = Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16
            for index in 0 ..< 3 { bytes[at + index] = UInt8(truncatingIfNeeded: (value + change) >> (8 * index)) }
        }
        folder.write("lying.zst", bytes)
        for limit in [SeekableReader.cacheableFrameSize, 1000] {
            let lying = try SeekableReader(path: folder.path("lying.zst"), options: DecompressionOptions(),
                                           wholeFrameLimit: limit)
            #expect(lying.count == 600_000)
            do {
                _ = try lying.read(at: 199_000, count: 3000)
                Issue.record("limit \(limit): a range across a lying boundary was read")
            } catch {
                #expect(error.reason.contains("frame 0 at offset 0 decodes to 200000 bytes of content, but its seek "
                                              + "table entry lists 201000"), "limit \(limit): \(error)")
            }
            #expect(throws: WeirError.self, "limit \(limit)") { try lying.read(at: 250_000, count: 200_000) }
        }
    }
}
