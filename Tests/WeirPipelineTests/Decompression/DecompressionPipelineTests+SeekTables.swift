import CZstd
import Foundation
import Glibc
import SystemPackage
import Testing
@testable import WeirFormats
@testable import WeirFormatsTestSupport
@testable import WeirPipeline
@testable import WeirSystem
@testable import WeirTestSupport

/// The decompression pipeline and the seek table: the table weir writes, the
/// tables that lie (refused, named, or checked once a frame is decoded), and
/// frames that declare no size held to the table's.
extension DecompressionPipelineTests {
    @Test("weir's output ends with a seek table that matches its frames; --no-seek-table leaves it out")
    func seekTableWritten() throws {
        let input = TestData.text(1_000_000, seed: 9)
        for checksum in [true, false] {
            let compressed = try Self.weir(input, chunk: 100_000, checksum: checksum)
            #expect(TestData.same(TestData.zstdDecode(compressed), input))
            let folder = TestData.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let path = folder.appendingPathComponent("x.zst").path
            _ = FileManager.default.createFile(atPath: path, contents: Data(compressed))
            let fd = open(path, O_RDONLY)
            defer { close(fd) }
            let table = try #require(try SeekTable.atEnd(of: Descriptor(fd, path: path), fileSize: compressed.count))
            #expect(table.dataStart == 0)
            #expect(table.hasChecksums == checksum)
            #expect(table.entries.count == 10)
            #expect(table.decompressedTotal == input.count)
            #expect(table.tableOffset + table.encodedSize == compressed.count)
            var scanner = FrameScanner(path: path)
            let frames = try compressed.withUnsafeBytes { bytes in
                try Result { () throws(WeirError) in try scanner.feed(bytes) }.get()
            }
            for (entry, frame) in zip(table.frameOffsets(), frames) {
                #expect(entry.compressedOffset == frame.offset)
                #expect(entry.compressedSize == frame.compressedSize)
                #expect(UInt64(entry.decompressedSize) == frame.header.contentSize)
                if checksum { #expect(entry.checksum == frame.contentChecksum) }
            }
        }
        let bare = try Self.weir(input, chunk: 100_000, seekTable: false)
        #expect(TestData.frames(bare).count == 10)
        #expect(Array(bare.suffix(4)) != [0xB1, 0xEA, 0x92, 0x8F])
    }

    /// weir output with its table replaced by `entries` (same layout).
    static func withTable(_ compressed: [UInt8], _ transform: (inout [SeekTable.Entry]) -> Void,
                          checksums: Bool = true) throws -> [UInt8] {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("x.zst").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(compressed))
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        let table = try #require(try SeekTable.atEnd(of: Descriptor(fd, path: path), fileSize: compressed.count))
        var entries = table.entries
        transform(&entries)
        let replaced = try SeekTable(entries: entries, hasChecksums: checksums, path: path)
        return Array(compressed.prefix(table.tableOffset)) + replaced.encoded()
    }

    @Test(
        "a seek table that does not match the frames: decoding warns once and is right, testing fails naming the entry")
    func hostileTables() throws {
        let input = TestData.text(600_000, seed: 12)
        let good = try Self.weir(input, chunk: 100_000)
        let frames = TestData.frames(good)
        let offsets = frames.indices.map { index in frames[..<index].reduce(0) { $0 + $1.size } }

        var damaged: [(String, [UInt8], String)] = [
            (
                "content size", try Self.withTable(good) { $0[2].decompressedSize += 1 },
                "entry 2 lists 100001 bytes of content, but frame 2 at offset \(offsets[2]) declares 100000"
            ),
            (
                "compressed size", try Self.withTable(good) { $0[3].compressedSize -= 1 },
                "entry 3 lists a compressed size of \(frames[3].size - 1) bytes, but frame 3 at offset \(offsets[3]) "
                    + "is \(frames[3].size) bytes"
            ),
            (
                "compressed size up", try Self.withTable(good) { $0[4].compressedSize += 1 },
                "entry 4 lists a compressed size of \(frames[4].size + 1) bytes, but frame 4 at offset \(offsets[4]) "
                    + "is \(frames[4].size) bytes"
            ),
            (
                "shifted",
                try Self.withTable(good) { entries in
                    entries[0].compressedSize += 5
                    entries[1].compressedSize -= 5
                },
                "entry 0 lists a compressed size of \(frames[0].size + 5) bytes, but frame 0 at offset 0 is "
                    + "\(frames[0].size) bytes"
            ),
            ("checksum", try Self.withTable(good) { $0[3].checksum ^= 1 }, "entry 3 lists the checksum"),
            ("no footer magic", Array(good.dropLast()) + [0x00], "without the footer magic 0x8F92EAB1"),
        ]
        // A footer claiming more frames than the file can hold.
        var pastEnd = good
        pastEnd[pastEnd.count - 9] = 0xFF
        pastEnd[pastEnd.count - 8] = 0xFF
        damaged.append(("frame count", pastEnd, "claims 65535 frames"))
        var oneMore = good
        oneMore[oneMore.count - 9] += 1
        damaged.append(("one more frame", oneMore, "the seek table of 7 frames should begin"))
        for (name, bytes, detail) in damaged {
            let decoded = Self.decodeFile(bytes)
            switch decoded.result {
            case .success(let statistics):
                #expect(TestData.same(decoded.output, input), "\(name)")
                #expect(statistics.warnings.count == 1, "\(name)")
                #expect(
                    statistics.warnings.first?.hasPrefix("seek table does not match the frames; ignoring it (") == true)
                #expect(statistics.warnings.first?.contains(detail) == true, "\(name): \(statistics.warnings)")
            case .failure(let error):
                Issue.record("\(name): \(error)")
            }
            let tested = Self.failure(Self.decodeFile(bytes, test: true))
            #expect(tested?.kind == .corrupt, "\(name)")
            #expect(tested?.description.hasPrefix("in.zst: corrupt seek table: ") == true, "\(name)")
            #expect(tested?.reason.contains(detail) == true, "\(name): \(String(describing: tested))")
            // A table that cannot be read: its read error is the cause, word for word.
            if ["frame count", "one more frame"].contains(name) {
                #expect(tested?.cause?.operation == .readSeekTable, "\(name)")
                #expect(tested?.cause?.reason == tested?.reason, "\(name)")
            } else {
                #expect(tested?.cause == nil, "\(name)")
            }
        }

        // Tables that describe only the last frames, or none, match: no warning.
        let bare = try Self.weir(input, chunk: 100_000, seekTable: false)
        for (name, bytes) in [("dropped", try Self.withTable(good) { $0.removeFirst() }),
                              ("zero", bare + SeekTable(hasChecksums: true).encoded()),
                              ("concatenated", good + good)] {
            let expected = name == "concatenated" ? input + input : input
            let decoded = Self.decodeFile(bytes)
            #expect(TestData.same(decoded.output, expected), "\(name)")
            #expect(try decoded.result.get().warnings.isEmpty, "\(name)")
            #expect(try Self.decodeFile(bytes, test: true).result.get().warnings.isEmpty, "\(name)")
        }
        // From a pipe there is no table to check.
        let piped = Self.decodePipe(try Self.withTable(good) { $0[2].decompressedSize += 1 })
        #expect(try piped.result.get().warnings.isEmpty)
        #expect(TestData.same(piped.output, input))

        // A table whose skippable size points past the end of the file: truncated, cleanly.
        var badSize = good
        let tableStart = good.count - (8 + 6 * 12 + 9)
        badSize[tableStart + 4] = 0xFF
        badSize[tableStart + 5] = 0xFF
        badSize[tableStart + 6] = 0xFF
        let badSizeError = Self.failure(Self.decodeFile(badSize))
        #expect(badSizeError?.kind == .truncated)
    }

    @Test("frames that do not declare their size are checked against the table once decoded, whole or streamed")
    func decodedSizes() throws {
        let input = TestData.text(900_000, seed: 13)
        // Frames without Frame_Content_Size, as a streaming compressor writes them.
        let pieces = stride(from: 0, to: input.count, by: 300_000).map {
            Array(input[$0..<min(input.count, $0 + 300_000)])
        }
        let compressed = pieces.map { TestData.compress($0, checksum: true, windowLog: 17, streamed: true) }
        var table = SeekTable(hasChecksums: false)
        for (index, (piece, frame)) in zip(pieces, compressed).enumerated() {
            try table.append(
                compressedSize: frame.count, decompressedSize: piece.count + (index == 2 ? 1 : 0), path: "t")
        }
        let bytes = compressed.flatMap { $0 } + table.encoded()
        let offset = compressed[0].count + compressed[1].count
        let detail = "entry 2 lists 300001 bytes of content, but frame 2 at offset \(offset) decodes to 300000"
        // A 1 MiB budget streams the 300 KB frames; the default decodes them whole.
        for options in [DecompressionOptions(threads: 2), DecompressionOptions(memoryLimit: 1 << 20, threads: 2)] {
            let decoded = Self.decodeFile(bytes, options: options)
            #expect(TestData.same(decoded.output, input))
            #expect(
                try decoded.result.get().warnings == ["seek table does not match the frames; ignoring it (\(detail))"])
            let tested = Self.failure(Self.decodeFile(bytes, options: options, test: true))
            #expect(tested?.reason == "corrupt seek table: \(detail)")
        }
    }
}
