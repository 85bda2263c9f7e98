import Foundation
import Testing
@testable import WeirPipeline
@testable import WeirPipelineTestSupport
@testable import WeirSeekable
@testable import WeirSystem
@testable import WeirTestSupport

/// Concatenations of seekable files keep their index (the chain of tables),
/// and `weir --index` makes any multi-frame file seekable in place.
@Suite("Seek table chains and appending")
struct SeekTableAppenderTests {
    typealias Folder = ScratchFolder

    /// weir's output of `content` in frames of 64 KiB.
    static func weir(_ content: [UInt8], in folder: Folder, name: String) async throws -> [UInt8] {
        folder.write(name, content)
        try TestCompression.compress(
            file: folder.path(name), options: CompressionOptions(level: 3, threads: 2, chunkSize: 64 << 10))
        return try #require(FileManager.default.contents(atPath: folder.path(name + ".zst"))).map { $0 }
    }

    /// The file's bytes.
    static func bytes(_ path: String) throws -> [UInt8] {
        try #require(FileManager.default.contents(atPath: path)).map { $0 }
    }

    @Test("a concatenation of weir files is listed from its chain of tables, one per part, and its ranges read")
    func chain() async throws {
        let folder = Folder()
        let parts = [TestData.text(300_000, seed: 5), TestData.text(150_000, seed: 6), TestData.text(450_000, seed: 7)]
        var files: [[UInt8]] = []
        for (index, part) in parts.enumerated() {
            files.append(try await Self.weir(part, in: folder, name: "p\(index)"))
        }
        folder.write("all.zst", files.flatMap { $0 })
        let listing = try FrameListing.read(path: folder.path("all.zst"))
        #expect(listing.fromSeekTable && listing.seekTables == 3 && listing.scannedPrefix == 0)
        #expect(listing.warnings.isEmpty && listing.zstdFrameCount == 5 + 3 + 7 && listing.skippableFrameCount == 3)
        #expect(listing.decompressedSize == parts.reduce(0) { $0 + $1.count })
        var offset = 0
        for frame in listing.frames {
            #expect(frame.offset == offset)
            offset += frame.compressedSize
        }
        #expect(offset == files.reduce(0) { $0 + $1.count })
        let reader = try SeekableReader(path: folder.path("all.zst"))
        #expect(reader.indexedFromSeekTable)
        try SeekableReaderTests().expectRanges(reader, parts.flatMap { $0 }, seed: 40)

        // A damaged table in the middle of the chain: the frames before the
        // table after it are scanned, and read the same.
        var damaged = files.flatMap { $0 }
        damaged[files[0].count + files[1].count - 1] ^= 0xFF  // the last byte of part 1's footer magic
        folder.write("damaged.zst", damaged)
        let partly = try FrameListing.read(path: folder.path("damaged.zst"))
        #expect(partly.seekTables == 1 && partly.scannedPrefix == files[0].count + files[1].count)
        #expect(partly.zstdFrameCount == 15 && partly.decompressedSize == listing.decompressedSize)
        try SeekableReaderTests().expectRanges(try SeekableReader(path: folder.path("damaged.zst")),
                                               parts.flatMap { $0 }, seed: 43)

        // A part of one frame has no table (weir writes none for one frame).
        let small = TestData.text(1_000, seed: 12)
        let one = try await Self.weir(small, in: folder, name: "one")
        folder.write("mixed.zst", files[0] + one + files[2])
        let mixed = try FrameListing.read(path: folder.path("mixed.zst"))
        #expect(mixed.seekTables == 1 && mixed.scannedPrefix == files[0].count + one.count)
        try SeekableReaderTests().expectRanges(try SeekableReader(path: folder.path("mixed.zst")),
                                               parts[0] + small + parts[2], seed: 44)
    }

    @Test("pzstd's file gets one table, measured by decoding; a second --index changes nothing")
    func pzstd() throws {
        let folder = Folder()
        // pzstd -1 cuts 2 MiB frames.
        let content = TestData.text(5_000_000, seed: 8)
        let original = try TestData.realTool("/usr/bin/pzstd", ["-p", "2", "-1"], input: content)
        folder.write("p.zst", original)
        let outcome = try SeekTableAppender.index(path: folder.path("p.zst"), synchronous: false)
        guard case .appended(let frames, let bytes, let measured) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        let indexed = try Self.bytes(folder.path("p.zst"))
        #expect(Array(indexed.prefix(original.count)) == original && indexed.count == original.count + bytes)
        #expect(measured == 3 && frames == 6)  // each zstd frame after pzstd's 12-byte skippable frame
        #expect(TestData.zstdDecode(indexed) == content)
        let listing = try FrameListing.read(path: folder.path("p.zst"))
        #expect(listing.fromSeekTable && listing.seekTables == 1 && listing.decompressedSize == content.count)
        #expect(listing.hasChecksum)
        try SeekableReaderTests().expectRanges(try SeekableReader(path: folder.path("p.zst")), content, seed: 41)

        #expect(try SeekTableAppender.index(path: folder.path("p.zst")) == .alreadyIndexed(frames: 6))
        #expect(try Self.bytes(folder.path("p.zst")) == indexed)
    }

    @Test("a concatenation of weir files gets one table over every frame, the parts' tables as empty entries")
    func concatenation() async throws {
        let folder = Folder()
        let a = TestData.text(200_000, seed: 9), b = TestData.text(320_000, seed: 10)
        let both = try await Self.weir(a, in: folder, name: "a") + Self.weir(b, in: folder, name: "b")
        folder.write("ab.zst", both)
        let outcome = try SeekTableAppender.index(path: folder.path("ab.zst"), synchronous: true)
        #expect(outcome == .appended(frames: 4 + 1 + 5 + 1, bytes: 8 + 11 * 12 + 9, measured: 0))
        let listing = try FrameListing.read(path: folder.path("ab.zst"))
        #expect(listing.seekTables == 1 && listing.zstdFrameCount == 9 && listing.skippableFrameCount == 3)
        try SeekableReaderTests().expectRanges(try SeekableReader(path: folder.path("ab.zst")), a + b, seed: 42)
    }

    @Test("a corrupt frame, a file that is not zstd: an error naming the file, and nothing written")
    func refused() throws {
        let folder = Folder()
        let content = TestData.text(3_000_000, seed: 11)
        var damaged = try TestData.realTool("/usr/bin/pzstd", ["-p", "2", "-1"], input: content)
        damaged[damaged.count / 2] ^= 0x5A
        folder.write("bad.zst", damaged)
        folder.write("text", content)
        for name in ["bad.zst", "text"] {
            let before = try Self.bytes(folder.path(name))
            #expect(throws: WeirError.self, "\(name)") { try SeekTableAppender.index(path: folder.path(name)) }
            do {
                _ = try SeekTableAppender.index(path: folder.path(name))
            } catch {
                #expect(error.path == folder.path(name))
            }
            #expect(try Self.bytes(folder.path(name)) == before)
        }
    }
}
