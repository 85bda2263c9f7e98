import Testing
@testable import Weir
@testable import WeirSystem
@testable import WeirTestSupport

/// Checkpoints of one frame's decoder (issue 81, item 6; docs/mount.md,
/// "One frame from zstd"): a cursor restored from any of them, its window
/// in memory or read back from the spill file, decodes the content's bytes
/// from there to the frame's end, its end checked.
@Suite("Frame checkpoints")
struct FrameCheckpointsTests {
    @Test("from every checkpoint, its window in memory or in TMPDIR's file, the content's bytes to the end")
    func restores() throws {
        let folder = ScratchFolder()
        let content = TestData.text(36_000_000, seed: 3)
        // A 1 MiB window: memory for one window, the others spilled.
        let frame = TestData.compress(content, level: 1, checksum: true, windowLog: 20)
        folder.write("one.zst", frame)
        let file = try Descriptor.openForReading(folder.path("one.zst"))
        defer { file.close() }
        let cursor = try #require(try FrameCursor.start(file: file, at: 0, end: frame.count, windowLimit: 1 << 27,
                                                        verifyChecksum: true))
        let recorder = FrameCheckpoints.Recorder(frame: 0 ..< frame.count, memoryLimit: 1 << 20, path: file.path,
                                                 spillFolder: folder.path("."))
        recorder.record(cursor)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(content.count)
        while let block = try cursor.next() {
            decoded.append(contentsOf: block)
            recorder.record(cursor)
        }
        #expect(decoded == content)
        let checkpoints = try #require(recorder.finish())
        #expect(checkpoints.checkpoints.count >= 2)
        #expect(checkpoints.memoryBytes <= 1 << 20)
        #expect(checkpoints.spilledBytes > 0)
        for checkpoint in checkpoints.checkpoints {
            let restored = try FrameCursor.restore(checkpoint, file: file, end: frame.count) {
                buffer throws(WeirError) in try checkpoints.fill(checkpoint, into: buffer)
            }
            var tail: [UInt8] = []
            while let block = try restored.next() { tail.append(contentsOf: block) }
            #expect(tail == Array(content[checkpoint.produced...]), "from \(checkpoint.produced)")
            #expect(checkpoints.checkpoint(before: checkpoint.produced + 5).produced == checkpoint.produced)
        }
    }
}
