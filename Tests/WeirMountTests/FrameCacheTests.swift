import Foundation
import Testing
@testable import Weir
@testable import WeirMount
@testable import WeirPipeline
@testable import WeirSeekable
@testable import WeirSystem
@testable import WeirTestSupport

/// The mount's frame cache: bytes equal to the content's at any range,
/// frames decoded once while kept, memory within its budget, a damaged
/// frame failing its reads only.
@Suite("Frame cache")
struct FrameCacheTests {
    typealias Folder = ScratchFolder

    /// A weir file of 64 KiB frames of `content`, and its reader.
    func reader(_ folder: Folder, _ content: [UInt8]) async throws -> SeekableReader {
        folder.write("data", content)
        _ = try await Compressor(options: CompressionOptions(level: 3, threads: 2, chunkSize: 64 << 10))
            .compress(file: folder.path("data"))
        return try SeekableReader(path: folder.path("data.zst"))
    }

    @Test("random ranges read the content's bytes; a kept frame is not decoded again; the budget holds")
    func ranges() async throws {
        let folder = Folder()
        let content = TestData.text(1_000_000, seed: 5)
        let cache = FrameCache(reader: try await reader(folder, content), budget: 4 * (64 << 10))
        var random = SeededGenerator(seed: 9)
        for _ in 0 ..< 200 {
            let start = Int(random.next() % UInt64(content.count))
            let length = Int(random.next() % UInt64(min(200_000, content.count - start) + 1))
            var buffer = [UInt8](repeating: 0, count: length)
            try buffer.withUnsafeMutableBytes { try cache.read(start ..< start + length, into: $0) }
            #expect(buffer == Array(content[start ..< start + length]))
            #expect(cache.bytesHeld <= 4 * (64 << 10))
        }
        let before = cache.framesDecoded
        var buffer = [UInt8](repeating: 0, count: 10)
        try buffer.withUnsafeMutableBytes { try cache.read(5 ..< 15, into: $0) }
        try buffer.withUnsafeMutableBytes { try cache.read(25 ..< 35, into: $0) }
        #expect(cache.framesDecoded <= before + 1)
        #expect(throws: WeirError.self) {
            try buffer.withUnsafeMutableBytes { try cache.read(content.count - 5 ..< content.count + 5, into: $0) }
        }
    }

    @Test("bytes handed in place: a range within one frame as read gives it, decoded once; across frames: nil")
    func bytesInPlace() async throws {
        let folder = Folder()
        let content = TestData.text(300_000, seed: 8)
        let cache = FrameCache(reader: try await reader(folder, content), budget: 4 * (64 << 10))
        for range in [0 ..< 10, 100 ..< 65536, 70_000 ..< 131_072, 296_000 ..< 300_000] {
            let handed = try cache.withBytes(range) { Array($0) }
            #expect(handed == Array(content[range]), "\(range)")
        }
        #expect(cache.framesDecoded == 3)
        _ = try cache.withBytes(200 ..< 300) { $0.count }
        #expect(cache.framesDecoded == 3)
        var called = false
        #expect(try cache.withBytes(65_000 ..< 66_000) { _ in called = true } == nil)
        #expect(try cache.withBytes(10 ..< 10) { _ in called = true } == nil)
        #expect(!called)
        #expect(throws: WeirError.self) { try cache.withBytes(299_990 ..< 300_010) { $0.count } }
        // A frame too large to keep is not handed in place (read(_:into:) streams it).
        let small = FrameCache(reader: try await reader(Folder(), content), budget: 64 << 10)
        #expect(try small.withBytes(0 ..< 10) { $0.count } == nil)
    }

    @Test("read-ahead decodes the next frame; parallel readers of the same frames get the same bytes")
    func readAheadAndParallel() async throws {
        let folder = Folder()
        let content = TestData.text(600_000, seed: 6)
        let cache = FrameCache(reader: try await reader(folder, content), budget: 16 << 20)
        cache.readAhead(after: 10)
        for _ in 0 ..< 500 where cache.framesDecoded == 0 { usleep(2000) }
        #expect(cache.framesDecoded == 1)
        let failures = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for step in 0 ..< 40 {
                let start = (worker * 7919 + step * 13_331) % (content.count - 70_000)
                var buffer = [UInt8](repeating: 0, count: 70_000)
                let ok = (try? buffer.withUnsafeMutableBytes { try cache.read(start ..< start + 70_000, into: $0) })
                    != nil && buffer == Array(content[start ..< start + 70_000])
                if !ok { failures.withLock { $0 += 1 } }
            }
        }
        #expect(failures.current == 0)
        #expect(cache.framesDecoded == 10)
    }

    @Test("two sequential readers, a budget of three frames: no frame decoded twice (read-ahead takes none in use)")
    func twoSequentialReaders() async throws {
        let folder = Folder()
        let content = TestData.text(13 * (64 << 10), seed: 8)
        let reader = try await reader(folder, content)
        #expect(reader.frameCount == 13)
        let cache = FrameCache(reader: reader, budget: 3 * (64 << 10))
        // A reads frames 0-4, B frames 8-12, 4 KiB at a time in turns, each read followed by the
        // mount's read-ahead after it.
        let streams = [reader.contentRange(ofFrame: 0).lowerBound ..< reader.contentRange(ofFrame: 4).upperBound,
                       reader.contentRange(ofFrame: 8).lowerBound ..< reader.contentRange(ofFrame: 12).upperBound]
        var at = streams.map(\.lowerBound)
        while zip(at, streams).contains(where: { $0 < $1.upperBound }) {
            for stream in 0 ..< 2 where at[stream] < streams[stream].upperBound {
                let range = at[stream] ..< min(at[stream] + 4096, streams[stream].upperBound)
                var buffer = [UInt8](repeating: 0, count: range.count)
                try buffer.withUnsafeMutableBytes { try cache.read(range, into: $0) }
                #expect(buffer == Array(content[range]))
                cache.readAhead(after: range.upperBound - 1)
                at[stream] = range.upperBound
            }
        }
        // The ten frames read, and at most the one after each stream's last (read ahead, not read).
        #expect(cache.framesDecoded >= 10 && cache.framesDecoded <= 12, "\(cache.framesDecoded) frames decoded")
    }

    @Test("a damaged frame fails the reads that touch it, each time; the others read")
    func damagedFrame() async throws {
        let folder = Folder()
        let content = TestData.text(300_000, seed: 7)
        _ = try await reader(folder, content)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: folder.path("data.zst"))))
        let listing = try SeekableReader(path: folder.path("data.zst"))
        #expect(listing.frameCount == 5)
        // A byte in the middle of the file: inside frame 2 of 5 (frames of about equal size).
        bytes[bytes.count / 2] ^= 0x55
        folder.write("bad.zst", bytes)
        let cache = FrameCache(reader: try SeekableReader(path: folder.path("bad.zst")), budget: 16 << 20)
        var failed = 0
        for frame in 0 ..< 5 {
            let range = frame * (64 << 10) ..< frame * (64 << 10) + 100
            var buffer = [UInt8](repeating: 0, count: 100)
            for _ in 0 ..< 2 {
                do {
                    try buffer.withUnsafeMutableBytes { try cache.read(range, into: $0) }
                    #expect(buffer == Array(content[range]))
                } catch {
                    failed += 1
                }
            }
        }
        #expect(failed == 2)
    }

    @Test("the check after each decode: a frame it refuses fails its read and is not kept; cache hits skip it")
    func decodedCheck() async throws {
        let folder = Folder()
        let content = TestData.text(300_000, seed: 8)
        let refusing = Locked(false)
        let checks = Locked(0)
        let cache = FrameCache(reader: try await reader(folder, content), budget: 16 << 20) { () throws(WeirError) in
            checks.withLock { $0 += 1 }
            if refusing.current { throw WeirError.changedWhileRead(path: "data.zst", operation: .read, shrank: false) }
        }
        var buffer = [UInt8](repeating: 0, count: 100)
        try buffer.withUnsafeMutableBytes { try cache.read(0 ..< 100, into: $0) }
        #expect(buffer == Array(content[0 ..< 100]) && checks.current == 1)
        refusing.withLock { $0 = true }
        // Frame 0 is kept: no decode, no check, its bytes as they were.
        try buffer.withUnsafeMutableBytes { try cache.read(200 ..< 300, into: $0) }
        #expect(buffer == Array(content[200 ..< 300]) && checks.current == 1)
        // Frame 1 is decoded, then refused: its read fails, each time, and nothing is kept.
        for _ in 0 ..< 2 {
            #expect(throws: WeirError.self) {
                try buffer.withUnsafeMutableBytes { try cache.read(70_000 ..< 70_100, into: $0) }
            }
        }
        #expect(checks.current == 3 && cache.framesDecoded == 1)
    }

    @Test("frames larger than half the budget: streamed, never kept; 8 readers at once hold at most the budget")
    func streamedWithinBudget() async throws {
        let folder = Folder()
        // Three frames of 4 MiB (level 1: a window of 512 KiB), a budget of 7 MiB: none kept (half: 3.5 MiB),
        // two streams at once (each its window and 2.5 MiB of buffers), the third waits.
        let content = TestData.text(12 << 20, seed: 3)
        folder.write("data", content)
        _ = try await Compressor(options: CompressionOptions(level: 1, threads: 2, chunkSize: 4 << 20))
            .compress(file: folder.path("data"))
        let reader = try SeekableReader(path: folder.path("data.zst"))
        #expect(reader.frameCount == 3)
        let budget = 7 << 20
        let cache = FrameCache(reader: reader, budget: budget)
        let failures = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            var random = SeededGenerator(seed: UInt64(worker + 1))
            for _ in 0 ..< 6 {
                let start = Int(random.next() % UInt64(content.count - (128 << 10)))
                var buffer = [UInt8](repeating: 0, count: 128 << 10)
                let range = start ..< start + buffer.count
                let ok = (try? buffer.withUnsafeMutableBytes { try cache.read(range, into: $0) }) != nil
                    && buffer[...] == content[range]
                if !ok { failures.withLock { $0 += 1 } }
            }
        }
        #expect(failures.current == 0)
        #expect(cache.framesDecoded == 0 && cache.bytesHeld == 0)
        #expect(cache.peakBytesHeld > 0 && cache.peakBytesHeld <= budget, "\(cache.peakBytesHeld) bytes held")
    }
}
