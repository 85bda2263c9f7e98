import Foundation
import Glibc
import Testing
@testable import WeirFormats
@testable import WeirFormatsTestSupport
@testable import WeirSystem
@testable import WeirTestSupport

extension FormatTests {
    @Suite("Seek table")
    struct SeekTableTests {
        typealias F = FormatTests

        /// Writes `bytes` to a temporary file and reads its seek table.
        static func read(_ bytes: [UInt8], claimedSize: Int? = nil) throws(WeirError) -> SeekTable? {
            let folder = TestData.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("table.zst")
            try! Data(bytes).write(to: file)
            let fd = open(file.path, O_RDONLY)
            precondition(fd >= 0)
            defer { close(fd) }
            return try SeekTable.atEnd(of: Descriptor(fd, path: "table.zst"), fileSize: claimedSize ?? bytes.count)
        }

        /// Reads, expecting a `.corrupt` error whose reason contains `text`.
        static func expectCorrupt(_ bytes: [UInt8], _ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
            do {
                let table = try read(bytes)
                Issue.record("expected a corrupt table, got \(String(describing: table))",
                             sourceLocation: sourceLocation)
            } catch {
                #expect(error.kind == .corrupt, sourceLocation: sourceLocation)
                #expect(error.path == "table.zst" && error.operation == .readSeekTable,
                        sourceLocation: sourceLocation)
                #expect(error.reason.contains(text), "\(error.reason)", sourceLocation: sourceLocation)
            }
        }

        /// Ten entries, with checksums that a table without checksums drops.
        static func sampleEntries() -> [SeekTable.Entry] {
            (0 ..< 10).map { SeekTable.Entry(compressedSize: UInt32(100 + $0), decompressedSize: UInt32(1000 * $0),
                                             checksum: 0xABC0 + UInt32($0)) }
        }

        @Test("round trip through a file, with and without checksums", arguments: [false, true])
        func roundTrip(hasChecksums: Bool) throws {
            let table = try SeekTable(entries: Self.sampleEntries(), hasChecksums: hasChecksums, path: "t")
            let bytes = table.encoded()
            #expect(bytes.count == table.encodedSize && bytes.count == 17 + 10 * (hasChecksums ? 12 : 8))
            #expect(Array(bytes.prefix(4)) == [0x5E, 0x2A, 0x4D, 0x18])
            #expect(Array(bytes.suffix(5)) == [hasChecksums ? 0x80 : 0x00, 0xB1, 0xEA, 0x92, 0x8F])
            #expect(table.compressedTotal == (100 ..< 110).reduce(0, +))
            #expect(table.decompressedTotal == 45_000)
            #expect(table.entries.allSatisfy { hasChecksums ? $0.checksum != 0 : $0.checksum == 0 })

            let file = [UInt8](repeating: 0, count: table.compressedTotal) + bytes
            let read = try #require(try Self.read(file))
            #expect(read == table)
            #expect(read.dataStart == 0 && read.tableOffset == table.compressedTotal)
            let frames = read.frameOffsets()
            #expect(frames.map(\.compressedOffset) == (0 ..< 10).map { 100 * $0 + $0 * ($0 - 1) / 2 })
            #expect(frames.map(\.decompressedOffset) == (0 ..< 10).map { 1000 * $0 * ($0 - 1) / 2 })
            #expect(frames.map(\.checksum) == (0 ..< 10).map { hasChecksums ? 0xABC0 + UInt32($0) : nil })

            var appended = SeekTable(hasChecksums: hasChecksums)
            for entry in Self.sampleEntries() {
                try appended.append(compressedSize: Int(entry.compressedSize),
                                    decompressedSize: Int(entry.decompressedSize), checksum: entry.checksum, path: "t")
            }
            #expect(appended == table)
        }

        @Test("stock zstd -d decodes frames with the table appended; the table matches the scanner",
              arguments: [false, true])
        func zstdDecodesSeekableFile(hasChecksums: Bool) throws {
            let chunks = [F.text(70_000, seed: 1), F.text(1, seed: 2), [], F.text(300_000, seed: 3),
                          F.text(999, seed: 4)]
            let frames = chunks.map { F.compress($0, checksum: true) }
            let stream = frames.flatMap { $0 }
            let boundaries = try F.scan(stream, cuts: [stream.count])
            var table = SeekTable(hasChecksums: hasChecksums)
            for (boundary, chunk) in zip(boundaries, chunks) {
                try table.append(compressedSize: boundary.compressedSize, decompressedSize: chunk.count,
                                 checksum: boundary.contentChecksum ?? 0, path: "out.zst")
            }
            let file = stream + table.encoded()

            let folder = TestData.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let url = folder.appendingPathComponent("seekable.zst")
            try Data(file).write(to: url)
            #expect(try F.zstdDecode(file: url) == chunks.flatMap { $0 })

            let read = try #require(try Self.read(file))
            #expect(read == table && read.dataStart == 0)
            #expect(read.frameOffsets().map(\.compressedOffset) == boundaries.map(\.offset))
            #expect(read.frameOffsets().map(\.compressedSize) == boundaries.map(\.compressedSize))
            #expect(read.decompressedTotal == chunks.reduce(0) { $0 + $1.count })

            let scanned = try F.scan(file, cuts: [file.count])
            #expect(scanned.count == chunks.count + 1)
            #expect(scanned.last?.header.kind == .skippable(nibble: 14))
            #expect(scanned.last?.compressedSize == table.encodedSize)
        }

        @Test("frames that start after offset 0: dataStart says where")
        func dataStartAfterPrefix() throws {
            let prefix = F.compress(F.text(5000, seed: 7), checksum: false) + F.skippable(nibble: 3, [1, 2, 3])
            let described = F.compress(F.text(8000, seed: 8), checksum: true)
            var table = SeekTable(hasChecksums: false)
            try table.append(compressedSize: described.count, decompressedSize: 8000, path: "p")
            let file = prefix + described + table.encoded()
            let read = try #require(try Self.read(file))
            #expect(read.dataStart == prefix.count)
            #expect(read.tableOffset == prefix.count + described.count)
            #expect(read.frameOffsets().first?.compressedOffset == prefix.count)

            let folder = TestData.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let url = folder.appendingPathComponent("prefixed.zst")
            try Data(file).write(to: url)
            #expect(try F.zstdDecode(file: url) == F.text(5000, seed: 7) + F.text(8000, seed: 8))
        }

        @Test("a table of zero frames describes an empty input")
        func zeroFrames() throws {
            let empty = SeekTable(hasChecksums: false).encoded()
            #expect(empty.count == 17)
            let read = try #require(try Self.read(empty))
            #expect(read.entries.isEmpty && read.dataStart == 0 && read.tableOffset == 0)

            let folder = TestData.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let url = folder.appendingPathComponent("empty.zst")
            try Data(empty).write(to: url)
            #expect(try F.zstdDecode(file: url) == [])

            let afterJunk = try #require(try Self.read(Array(repeating: 0x55, count: 100) + empty))
            #expect(afterJunk.entries.isEmpty && afterJunk.dataStart == 100)
        }

        @Test("no footer magic: nil")
        func noFooter() throws {
            for size in 0 ... 8 {
                #expect(try Self.read(Array(F.text(size, seed: 1))) == nil)
            }
            #expect(try Self.read(F.compress(F.text(1000, seed: 1), checksum: true)) == nil)
            var table = try SeekTable(entries: Self.sampleEntries(), hasChecksums: true, path: "t").encoded()
            table[table.count - 1] ^= 0x01
            #expect(try Self.read(Array(repeating: 0, count: 1045) + table) == nil)
        }

        @Test("reserved descriptor bits are corrupt; unused bits are ignored")
        func descriptorBits() throws {
            let table = try SeekTable(entries: Self.sampleEntries(), hasChecksums: false, path: "t")
            let file = [UInt8](repeating: 0, count: table.compressedTotal) + table.encoded()
            for bit in 2 ... 6 {
                var bad = file
                bad[bad.count - 5] |= 1 << bit
                Self.expectCorrupt(bad, "reserved bits set in the seek table descriptor")
            }
            var unused = file
            unused[unused.count - 5] |= 0x03
            #expect(try Self.read(unused) == table)
        }

        @Test("frame counts that overflow or reach past the start of the file are corrupt")
        func badCounts() throws {
            let table = try SeekTable(entries: Self.sampleEntries(), hasChecksums: true, path: "t")
            let file = [UInt8](repeating: 0, count: table.compressedTotal) + table.encoded()
            let countOffset = file.count - 9
            func withCount(_ count: UInt32) -> [UInt8] {
                var bytes = file
                bytes.replaceSubrange(countOffset ..< countOffset + 4, with: F.le32(count))
                return bytes
            }
            Self.expectCorrupt(withCount(UInt32.max), "claims 4294967295 frames, more than the format's")
            Self.expectCorrupt(withCount(UInt32(SeekTable.maxFrames)), "larger than the \(file.count)-byte file")
            Self.expectCorrupt(withCount(UInt32(SeekTable.maxFrames + 1)), "more than the format's")
            Self.expectCorrupt(withCount(200), "larger than the \(file.count)-byte file")
            Self.expectCorrupt(withCount(11), "should begin at offset")  // one entry too many: no magic there
            Self.expectCorrupt(withCount(9), "should begin at offset")
            // A table alone that claims one frame more than it holds: past the start of the file.
            var alone = SeekTable(hasChecksums: false).encoded()
            alone.replaceSubrange(alone.count - 9 ..< alone.count - 5, with: F.le32(1))
            Self.expectCorrupt(alone, "larger than the 17-byte file")
        }

        @Test("a skippable header that does not match the footer is corrupt")
        func badSkippableHeader() throws {
            let table = try SeekTable(entries: Self.sampleEntries(), hasChecksums: false, path: "t")
            let file = [UInt8](repeating: 0, count: table.compressedTotal) + table.encoded()
            let start = table.compressedTotal
            var magic = file
            magic[start] = 0x50  // skippable, but nibble 0
            Self.expectCorrupt(magic, "with the skippable magic 0x184D2A5E, not 0x184D2A50")
            for delta in [-1, 1, 1 << 20] {
                var size = file
                size.replaceSubrange(start + 4 ..< start + 8, with: F.le32(UInt32(table.encodedSize - 8 + delta)))
                Self.expectCorrupt(size, "declares \(table.encodedSize - 8 + delta) bytes, "
                                   + "but 10 frames need \(table.encodedSize - 8)")
            }
        }

        @Test("frames larger than the bytes before the table are corrupt")
        func framesPastStart() throws {
            let table = try SeekTable(entries: Self.sampleEntries(), hasChecksums: false, path: "t")
            let file = [UInt8](repeating: 0, count: table.compressedTotal - 1) + table.encoded()
            Self.expectCorrupt(file, "describes \(table.compressedTotal) bytes of frames, "
                               + "more than the \(table.compressedTotal - 1) bytes")
            var huge = SeekTable(hasChecksums: false)
            for _ in 0 ..< 3 { try huge.append(compressedSize: Int(UInt32.max), decompressedSize: 0, path: "t") }
            Self.expectCorrupt(huge.encoded(), "more than the 0 bytes before it")
        }

        @Test("the builder refuses sizes of 4 GiB or more, and negative sizes")
        func builderLimits() throws {
            var table = SeekTable(hasChecksums: true)
            try table.append(compressedSize: SeekTable.maxFrameSize, decompressedSize: SeekTable.maxFrameSize,
                             path: "big")
            for (compressed, decompressed) in [(1 << 32, 0), (0, 1 << 32), (-1, 0), (0, Int.max)] {
                do {
                    try table.append(compressedSize: compressed, decompressedSize: decompressed, path: "big")
                    Issue.record("accepted \(compressed), \(decompressed)")
                } catch {
                    #expect(error.kind == .library && error.path == "big")
                    #expect(error.reason.contains("too large for a seek table"))
                }
            }
            #expect(table.entries.count == 1)
            #expect(table.encoded().count == 17 + 12)
        }

        @Test("read errors: a bad descriptor, a file shorter than its size")
        func readErrors() throws {
            do {
                _ = try SeekTable.atEnd(of: Descriptor(-1, path: "nofd"), fileSize: 100); Issue.record("no error")
            } catch {
                #expect(error.kind == .system(errno: EBADF) && error.path == "nofd")
            }
            let table = SeekTable(hasChecksums: false).encoded()
            do { _ = try Self.read(table, claimedSize: table.count + 50); Issue.record("no error") } catch {
                #expect(error.kind == .truncated)
            }
        }

        @Test("a large table is read in batches")
        func largeTable() throws {
            var table = SeekTable(hasChecksums: true)
            var random = F.Random(seed: 99)
            for index in 0 ..< 10_000 {
                try table.append(compressedSize: Int(random.next() % 4), decompressedSize: index,
                                 checksum: UInt32(truncatingIfNeeded: random.next()), path: "t")
            }
            let file = [UInt8](repeating: 0, count: table.compressedTotal + 3) + table.encoded()
            let read = try #require(try Self.read(file))
            #expect(read.entries == table.entries)
            #expect(read.dataStart == 3)
        }

        @Test("seeded mutations of the table: nil, a table or a clean error")
        func mutations() throws {
            let table = try SeekTable(entries: Self.sampleEntries(), hasChecksums: true, path: "t")
            let file = [UInt8](repeating: 0, count: table.compressedTotal) + table.encoded()
            var random = F.Random(seed: 7)
            for _ in 0 ..< 300 {
                var bytes = file
                for _ in 0 ... random.next() % 3 {
                    let index = file.count - 1 - Int(random.next() % UInt64(table.encodedSize))
                    bytes[index] ^= UInt8(1 + random.next() % 255)
                }
                do {
                    if let read = try Self.read(bytes) {
                        #expect(read.tableOffset + read.encodedSize == bytes.count && read.dataStart >= 0)
                    }
                } catch {
                    #expect(error.kind == .corrupt)
                }
            }
        }
    }
}
