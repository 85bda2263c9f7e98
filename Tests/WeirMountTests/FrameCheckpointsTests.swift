import Testing
import WeirFormats
@testable import WeirMount
@testable import WeirSeekable
@testable import WeirSystem
@testable import WeirTestSupport

/// Checkpoints of one frame's decoder (issue 81, item 6; docs/mount.md,
/// "One frame from zstd"): a cursor restored from any of them, its window
/// in memory or read back from the spill file, decodes the content's bytes
/// from there to the frame's end, its end checked; a read through the
/// cache decodes at most one interval before its bytes.
@Suite("Frame checkpoints")
struct FrameCheckpointsTests {
    /// `content` in one frame (a 1 MiB window) at `name` in `folder`, decoded once by a cursor that leaves
    /// checkpoints, `memoryLimit` bytes of windows in memory, the rest in a file in `spillFolder`: the frame,
    /// the content the cursor decoded, and the checkpoints.
    static func checkpointed(_ content: [UInt8], in folder: ScratchFolder, memoryLimit: Int, spillFolder: String)
        throws -> (frame: [UInt8], decoded: [UInt8], checkpoints: FrameCheckpoints) {
        let frame = TestData.compress(content, level: 1, checksum: true, windowLog: 20)
        folder.write("one.zst", frame)
        let file = try Descriptor.openForReading(folder.path("one.zst"))
        defer { file.close() }
        let cursor = try #require(try FrameCursor.start(file: file, at: 0, end: frame.count, windowLimit: 1 << 27,
                                                        verifyChecksum: true))
        let recorder = FrameCheckpoints.Recorder(frame: 0 ..< frame.count, memoryLimit: memoryLimit, path: file.path,
                                                 spillFolder: spillFolder)
        recorder.record(cursor)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(content.count)
        while let block = try cursor.next() {
            decoded.append(contentsOf: block)
            recorder.record(cursor)
        }
        return (frame, decoded, try #require(recorder.finish()))
    }

    @Test("from every checkpoint, its window in memory or in TMPDIR's file, the content's bytes to the end")
    func restores() throws {
        let folder = ScratchFolder()
        let content = TestData.text(36_000_000, seed: 3)
        // Memory for one window, the others spilled.
        let (frame, decoded, checkpoints) = try Self.checkpointed(content, in: folder, memoryLimit: 1 << 20,
                                                                 spillFolder: folder.path("."))
        #expect(decoded == content)
        let file = try Descriptor.openForReading(folder.path("one.zst"))
        defer { file.close() }
        #expect(checkpoints.checkpoints.count >= 2)
        #expect(checkpoints.memoryBytes <= 1 << 20)
        #expect(checkpoints.spilledBytes > 0)
        // The windows, in memory and in the file, a quarter of the content at most (docs/mount.md).
        #expect(checkpoints.memoryBytes + checkpoints.spilledBytes <= content.count / 4)
        for checkpoint in checkpoints.checkpoints {
            let restored = try FrameCursor.restore(checkpoint, digests: checkpoints.digests, file: file,
                                                   end: frame.count) {
                buffer throws(WeirError) in try checkpoints.fill(checkpoint, into: buffer)
            }
            var tail: [UInt8] = []
            while let block = try restored.next() { tail.append(contentsOf: block) }
            #expect(tail == Array(content[checkpoint.produced...]), "from \(checkpoint.produced)")
            #expect(checkpoints.checkpoint(before: checkpoint.produced + 5).produced == checkpoint.produced)
        }
        // No offset lies more than an interval (and a block) past the checkpoint before it.
        let block = 128 << 10
        #expect(checkpoints.checkpoints.first?.produced == 0)
        for (earlier, later) in zip(checkpoints.checkpoints, checkpoints.checkpoints.dropFirst()) {
            #expect(later.produced - earlier.produced <= checkpoints.interval + block)
        }
        #expect(content.count - (checkpoints.checkpoints.last?.produced ?? 0) <= checkpoints.interval + block)

        // A read through the cache decodes at most one interval before its bytes (docs/mount.md), whatever the
        // cursors' places: forwards past a checkpoint, backwards, near the end, and on from a cursor.
        let cache = FrameCache(reader: try SeekableReader(path: folder.path("one.zst")), budget: 8 << 20,
                               checkpoints: checkpoints)
        let reads = [30_000_000, 1_000_000, 34_000_000, 20_000_000, 20_200_000, 35_900_000, 5]
        for from in reads {
            let count = min(64 << 10, content.count - from)
            var bytes = [UInt8](repeating: 0, count: count)
            let before = cache.bytesDecodedByCursors
            try bytes.withUnsafeMutableBytes { try cache.read(from ..< from + count, into: $0) }
            #expect(bytes == Array(content[from ..< from + count]), "at \(from)")
            let decoded = cache.bytesDecodedByCursors - before
            #expect(decoded <= checkpoints.interval + count + block, "at \(from): \(decoded) bytes decoded")
        }
        #expect(cache.bytesDecodedByCursors > 0)
    }

    @Test("no file for the windows past memory: fewer checkpoints, the same bytes")
    func noSpillFolder() throws {
        let folder = ScratchFolder()
        let content = TestData.text(36_000_000, seed: 4)
        let path = folder.path("one.zst")
        // Room for one window in memory; the folder for the rest does not exist.
        let checkpoints = try Self.checkpointed(content, in: folder, memoryLimit: (1 << 20) + (64 << 10),
                                                spillFolder: folder.path("missing/folder")).checkpoints
        // The frame's start (no window) and the one at about 16 MiB; the one at about 32 MiB had no room.
        #expect(checkpoints.checkpoints.count == 2)
        #expect(checkpoints.spilledBytes == 0)
        let cache = FrameCache(reader: try SeekableReader(path: path), budget: 8 << 20, checkpoints: checkpoints)
        for from in [30_000_000, 2_000, 35_990_000, 17_000_000] {
            let count = min(64 << 10, content.count - from)
            var bytes = [UInt8](repeating: 0, count: count)
            try bytes.withUnsafeMutableBytes { try cache.read(from ..< from + count, into: $0) }
            #expect(bytes == Array(content[from ..< from + count]), "at \(from)")
        }
    }

    @Test("a decode that stops before the frame's end leaves no checkpoints (its digests would not cover it)")
    func stoppedEarly() throws {
        let folder = ScratchFolder()
        let frame = TestData.compress(TestData.text(20_000_000, seed: 5), level: 1, checksum: true, windowLog: 20)
        folder.write("one.zst", frame)
        let file = try Descriptor.openForReading(folder.path("one.zst"))
        defer { file.close() }
        let cursor = try #require(try FrameCursor.start(file: file, at: 0, end: frame.count, windowLimit: 1 << 27,
                                                        verifyChecksum: true))
        let recorder = FrameCheckpoints.Recorder(frame: 0 ..< frame.count, memoryLimit: 64 << 20, path: file.path,
                                                 spillFolder: folder.path("."))
        recorder.record(cursor)
        for _ in 0 ..< 10 {
            _ = try cursor.next()
            recorder.record(cursor)
        }
        #expect(recorder.finish() == nil)
    }

    @Test("a block written to in place after the checkpoints were made: an error, never its new bytes")
    func changedInPlace() throws {
        let folder = ScratchFolder()
        // Random bytes: raw blocks, whose bytes changed decode without a complaint to other bytes.
        let content = TestData.random(40_000_000, seed: 9)
        let path = folder.path("one.zst")
        let (frame, _, checkpoints) = try Self.checkpointed(content, in: folder, memoryLimit: 64 << 20,
                                                            spillFolder: folder.path("."))
        // A raw block past the second checkpoint, one byte of it changed, the file's size the same.
        let header = try #require(frame.withUnsafeBytes { FrameHeader(startOf: $0) })
        var at = header.headerSize, target: (offset: Int, content: Int)?
        var produced = 0
        while target == nil, at + 3 <= frame.count {
            let word = Int(frame[at]) | Int(frame[at + 1]) << 8 | Int(frame[at + 2]) << 16
            let (kind, size) = (word >> 1 & 3, word >> 3)
            if kind == 0, produced > checkpoints.checkpoints[1].produced + (1 << 20) {
                target = (at + 3 + 1000, produced + 1000)
            }
            produced += kind == 2 ? 0 : size
            at += 3 + (kind == 1 ? 1 : size)
            #expect(kind != 2, "random bytes give no compressed block")
        }
        let (offset, contentOffset) = try #require(target)
        var changed = frame
        changed[offset] ^= 0x5A
        folder.write("one.zst", changed)
        let cache = FrameCache(reader: try SeekableReader(path: path), budget: 8 << 20, checkpoints: checkpoints)
        var bytes = [UInt8](repeating: 0, count: 4096)
        #expect(throws: WeirError.self) {
            try bytes.withUnsafeMutableBytes { try cache.read(contentOffset - 100 ..< contentOffset + 3996, into: $0) }
        }
        // Before the changed block, the content as it was.
        try bytes.withUnsafeMutableBytes { try cache.read(1000 ..< 5096, into: $0) }
        #expect(bytes == Array(content[1000 ..< 5096]))
    }
}
