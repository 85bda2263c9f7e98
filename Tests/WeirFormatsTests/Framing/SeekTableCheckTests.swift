import Testing
@testable import WeirFormats
@testable import WeirSystem

extension FormatTests {
    @Suite("Seek table check")
    struct SeekTableCheckTests {
        /// A zstd frame of `size` bytes at `offset`, declaring `content` bytes (nil: no size declared).
        static func frame(
            _ index: Int, at offset: Int, size: Int, content: UInt64?, checksum: UInt32? = nil
        ) -> FrameBoundary {
            FrameBoundary(index: index, offset: offset, compressedSize: size,
                          header: FrameHeader(kind: .zstd, headerSize: 6, contentSize: content, windowSize: 1 << 20,
                                              hasChecksum: checksum != nil, dictionaryID: 0, isSingleSegment: false),
                          blockCount: 1, contentChecksum: checksum)
        }

        static func skippable(_ index: Int, at offset: Int, size: Int, nibble: UInt8) -> FrameBoundary {
            FrameBoundary(
                index: index, offset: offset, compressedSize: size,
                header: FrameHeader(
                    kind: .skippable(nibble: nibble), headerSize: 8, contentSize: nil,
                    windowSize: 0, hasChecksum: false, dictionaryID: 0, isSingleSegment: false),
                blockCount: 0)
        }

        /// Three frames of 100, 200 and 300 bytes after a `prefix`, then their table.
        static func file(
            prefix: Int = 0, content: Bool = true,
            change: (inout [SeekTable.Entry]) -> Void = { _ in }
        ) throws -> (SeekTable, [FrameBoundary], Int) {
            var entries: [SeekTable.Entry] = []
            for index in 0 ..< 3 {
                let scale = UInt32(index + 1)
                entries.append(SeekTable.Entry(compressedSize: 100 * scale, decompressedSize: 1000 * scale,
                                               checksum: UInt32(index)))
            }
            var frames = [FrameBoundary]()
            var offset = prefix
            for (index, entry) in entries.enumerated() {
                frames.append(
                    Self.frame(
                        index, at: offset, size: Int(entry.compressedSize),
                        content: content ? UInt64(entry.decompressedSize) : nil, checksum: entry.checksum))
                offset += Int(entry.compressedSize)
            }
            change(&entries)
            var table = try SeekTable(entries: entries, hasChecksums: true, path: "t")
            table.dataStart = offset - table.compressedTotal
            frames.append(Self.skippable(3, at: offset, size: table.encodedSize, nibble: 14))
            return (table, frames, offset + table.encodedSize)
        }

        static func run(_ check: inout SeekTableCheck, _ frames: [FrameBoundary]) -> [SeekTableCheck.Expectation?] {
            let expectations = frames.map { check.frameFound($0) }
            check.finish()
            return expectations
        }

        @Test("a table that matches its frames, with or without frames before the ones it describes")
        func matching() throws {
            for prefix in [0, 50] {
                var (table, frames, size) = try Self.file(prefix: prefix)
                if prefix > 0 { frames.insert(Self.frame(9, at: 0, size: 50, content: 7), at: 0) }
                var check = SeekTableCheck(table: table, readError: nil, fileSize: size)
                let expectations = Self.run(&check, frames)
                #expect(check.mismatch == nil)
                #expect(expectations.allSatisfy { $0 == nil })  // every size is declared
            }
            // Frames that declare no size are left for the decoder to check.
            let (table, frames, size) = try Self.file(content: false)
            var check = SeekTableCheck(table: table, readError: nil, fileSize: size)
            #expect(Self.run(&check, frames) == [.init(entry: 0, size: 1000), .init(entry: 1, size: 2000),
                                                  .init(entry: 2, size: 3000), nil])
            #expect(check.mismatch == nil)
        }

        @Test("each field names its entry: compressed size either way, content size, checksum")
        func fields() throws {
            let cases: [(String, (inout [SeekTable.Entry]) -> Void, SeekTableCheck.Mismatch)] = [
                (
                    "smaller", { $0[1].compressedSize -= 1 },
                    .init(
                        entry: 1,
                        detail: "entry 1 lists a compressed size of 199 bytes, but frame 1 at offset 100 is 200 bytes")
                ),
                (
                    "larger", { $0[1].compressedSize += 1 },
                    .init(
                        entry: 1,
                        detail: "entry 1 lists a compressed size of 201 bytes, but frame 1 at offset 100 is 200 bytes")
                ),
                (
                    "first", { $0[0].compressedSize += 7 },
                    .init(
                        entry: 0,
                        detail: "entry 0 lists a compressed size of 107 bytes, but frame 0 at offset 0 is 100 bytes")
                ),
                (
                    "last", { $0[2].compressedSize -= 3 },
                    .init(
                        entry: 2,
                        detail: "entry 2 lists a compressed size of 297 bytes, but frame 2 at offset 300 is 300 bytes")
                ),
                (
                    "content", { $0[2].decompressedSize = 5 },
                    .init(entry: 2, detail: "entry 2 lists 5 bytes of content, but frame 2 at offset 300 declares 3000")
                ),
                (
                    "checksum", { $0[0].checksum = 0xFF },
                    .init(
                        entry: 0,
                        detail: "entry 0 lists the checksum 0x000000FF, but frame 0 at offset 0 ends with 0x00000000")
                ),
            ]
            for (name, change, expected) in cases {
                let (table, frames, size) = try Self.file(change: change)
                var check = SeekTableCheck(table: table, readError: nil, fileSize: size)
                _ = Self.run(&check, frames)
                #expect(check.mismatch == expected, "\(name)")
            }
        }

        @Test("an unreadable table counts only when the file ends with a seek table frame")
        func unreadable() throws {
            let (_, frames, size) = try Self.file()
            let error = WeirError.corruptSeekTable(path: "t", "broken")
            var check = SeekTableCheck(table: nil, readError: error, fileSize: size)
            _ = Self.run(&check, frames)
            #expect(check.mismatch == .init(entry: nil, detail: "broken", cause: error))
            // The footer magic by chance at the end of a zstd frame: no table, nothing to report.
            var coincidence = SeekTableCheck(table: nil, readError: error, fileSize: 600)
            _ = Self.run(&coincidence, Array(frames.prefix(3)))
            #expect(coincidence.mismatch == nil)
            // Another skippable frame at the end (pzstd writes nibble 0) is not a table.
            var other = SeekTableCheck(table: nil, readError: nil, fileSize: 608)
            _ = Self.run(&other, Array(frames.prefix(3)) + [Self.skippable(3, at: 600, size: 8, nibble: 0)])
            #expect(other.mismatch == nil)
        }

        @Test("a stream that starts mid-file checks only the entries it reads")
        func midFile() throws {
            let (table, frames, size) = try Self.file {
                $0[0].compressedSize = 60; $0[0].checksum = 9
            }  // entry 0 damaged
            // Frame 0 is not read: the stream starts at offset 100, where frame 1 begins.
            let stream = frames.dropFirst().map { frame -> FrameBoundary in
                var frame = frame
                frame.offset -= 100
                frame.index -= 1
                return frame
            }
            var check = SeekTableCheck(table: table, readError: nil, fileSize: size, streamBase: 100)
            _ = Self.run(&check, Array(stream))
            #expect(check.mismatch == nil)
        }

        @Test("the mismatch first in the table is the one kept")
        func order() {
            let table = SeekTableCheck.Mismatch(entry: nil, detail: "a")
            let early = SeekTableCheck.Mismatch(entry: 1, detail: "b")
            let late = SeekTableCheck.decodedSize(
                entry: 4, listed: 10, frame: Self.frame(4, at: 40, size: 5, content: nil),
                streamBase: 100, decoded: 9)
            #expect(table.precedes(early) && early.precedes(late) && !late.precedes(early))
            #expect(late.detail == "entry 4 lists 10 bytes of content, but frame 4 at offset 140 decodes to 9")
        }
    }
}
