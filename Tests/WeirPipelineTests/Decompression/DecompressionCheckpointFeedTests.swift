import Foundation
import Testing
@testable import WeirFiles
@testable import WeirFormats
@testable import WeirPipeline
@testable import WeirTestSupport

/// A decompression's record names only frames whose content is all
/// written, in file order, whatever order the writer finishes pieces in.
@Suite("Decoded frame log")
struct DecompressionCheckpointFeedTests {
    /// The record of a resumable decompression's output after `steps` and
    /// a checkpoint of everything told.
    static func recorded(_ steps: (DecompressionCheckpointFeed) -> Void) throws -> ResumeRecord {
        let folder = ScratchFolder()
        let partial = try #require(try PartialOutput.open(for: folder.path("out"), identity: "1 2 3 4", options: "-",
                                                          holds: .content, dictionary: nil))
        steps(DecompressionCheckpointFeed(partial: partial))
        partial.checkpointNow()
        partial.keepRecord()
        partial.descriptor.close()
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: partial.recordPath)))
        return try #require(ResumeRecord.parse(bytes)).record
    }

    static func entry(_ compressed: UInt32, _ content: UInt32, _ checksum: UInt32 = 0) -> SeekTable.Entry {
        SeekTable.Entry(compressedSize: compressed, decompressedSize: content, checksum: checksum)
    }

    @Test("frames decoded whole: told once every piece before theirs is written, with their pieces' bytes")
    func wholeFrames() throws {
        let record = try Self.recorded { log in
            log.frame(compressedSize: 100, checksum: 7, end: 1)
            log.frame(compressedSize: 200, checksum: nil, end: 2)
            log.pieceWritten(1, size: 50)  // a sparse piece of zeros, done before the one before it
            log.pieceWritten(0, size: 30)
        }
        #expect(record.entries == [Self.entry(100, 30, 7), Self.entry(200, 50)])
        #expect(record.checkpoint == .init(frames: 2, compressedBytes: 300, decompressedBytes: 80))
    }

    @Test("a streamed frame told after its pieces; a skippable frame goes with the next frame")
    func streamedAndSkippable() throws {
        let record = try Self.recorded { log in
            log.pieceWritten(0, size: 10)
            log.pieceWritten(1, size: 20)
            log.frame(compressedSize: 64, checksum: 1, end: 2)
            log.skippable(size: 12)
            log.frame(compressedSize: 40, checksum: 2, end: 3)
            log.pieceWritten(2, size: 5)
            log.skippable(size: 9)  // the seek table: no frame after it
        }
        #expect(record.entries == [Self.entry(64, 30, 1), Self.entry(12, 0), Self.entry(40, 5, 2)])
        #expect(record.checkpoint == .init(frames: 3, compressedBytes: 116, decompressedBytes: 35))
    }

    @Test("a frame whose pieces are not all written, or after a dropped piece, is not told")
    func heldBack() throws {
        let waiting = try Self.recorded { log in
            log.frame(compressedSize: 100, checksum: nil, end: 1)
            log.frame(compressedSize: 200, checksum: nil, end: 2)
            log.pieceWritten(1, size: 50)
        }
        #expect(waiting.entries.isEmpty && waiting.checkpoint == nil)
        let dropped = try Self.recorded { log in
            log.frame(compressedSize: 100, checksum: nil, end: 1)
            log.pieceWritten(0, size: -1)
            log.frame(compressedSize: 200, checksum: nil, end: 2)
            log.pieceWritten(1, size: 50)
        }
        #expect(dropped.entries.isEmpty && dropped.checkpoint == nil)
    }
}
