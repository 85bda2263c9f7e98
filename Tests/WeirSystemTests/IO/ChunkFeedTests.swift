import Dispatch
import Foundation
import Glibc
import Testing
@testable import WeirSystem
@testable import WeirTestSupport

/// Bytes handed over in memory and read as from a pipe: whole reads whatever
/// the chunks' sizes, a feeder held back while the feed is full, and a stop
/// that ends both sides.
@Suite("Chunk feed")
struct ChunkFeedTests {
    private static func bytes(_ data: DispatchData) -> [UInt8] {
        var out: [UInt8] = []
        data.enumerateBytes { region, _, _ in out += region }
        return out
    }

    private static func data(_ count: Int, _ byte: UInt8 = 7) -> DispatchData {
        [UInt8](repeating: byte, count: count).withUnsafeBytes { DispatchData(bytes: $0) }
    }

    /// Reads `feed` to its end in reads of `size`, on a thread of its own.
    private static func readAll(
        _ feed: ChunkFeed, size: Int
    ) async -> Result<[(count: Int, end: Bool, bytes: [UInt8])], WeirError> {
        await withCheckedContinuation { continuation in
            DedicatedThread.start(name: "reader") {
                let reader = ChunkReader(feed: feed, path: "feed", chunkSize: size)
                var reads: [(count: Int, end: Bool, bytes: [UInt8])] = []
                do throws(WeirError) {
                    while true {
                        let chunk = try reader.start().wait()
                        reads.append((chunk.data.count, chunk.endOfInput, bytes(chunk.data)))
                        if chunk.endOfInput { break }
                    }
                    continuation.resume(returning: .success(reads))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
    }

    @Test("chunks of any size come out as whole reads, then a short one and the end")
    func wholeReads() async throws {
        let input = TestData.random(370_000, seed: 3)
        let feed = ChunkFeed(limit: 50_000)
        let feeder = Task {
            for start in stride(from: 0, to: input.count, by: 10_007) {
                let piece = input[start..<min(start + 10_007, input.count)]
                let data = piece.withUnsafeBytes { DispatchData(bytes: $0) }
                #expect(await feed.offer(data))
            }
            feed.end()
        }
        let reads = try await Self.readAll(feed, size: 100_000).get()
        await feeder.value
        #expect(reads.map(\.count) == [100_000, 100_000, 100_000, 70_000])
        #expect(reads.map(\.end) == [false, false, false, true])
        #expect(reads.flatMap(\.bytes) == input)
    }

    @Test("a feed made of one block gives it back in reads, with no feeder")
    func contents() async throws {
        let input = TestData.random(250_000, seed: 4)
        let feed = ChunkFeed(contents: input.withUnsafeBytes { DispatchData(bytes: $0) })
        let reads = try await Self.readAll(feed, size: 100_000).get()
        #expect(reads.map(\.count) == [100_000, 100_000, 50_000])
        #expect(reads.flatMap(\.bytes) == input)
    }

    @Test("a feeder waits while the feed is full, and goes on once a read takes bytes")
    func backPressure() async throws {
        let feed = ChunkFeed(limit: 64 << 10)
        let returned = Locked(false)
        let feeder = Task {
            let accepted = await feed.offer(Self.data(64 << 10))
            returned.withLock { $0 = true }
            return accepted
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(!returned.current)  // full: nobody has read yet
        let reader = ChunkReader(feed: feed, path: "feed", chunkSize: 4096)
        let chunk = try reader.start().wait()
        #expect(chunk.data.count == 4096)
        #expect(await feeder.value)
        #expect(returned.current)
    }

    @Test("stopping the feed tells a waiting feeder no, and cancels a waiting read")
    func stop() async throws {
        let full = ChunkFeed(limit: 1024)
        let feeder = Task { await full.offer(Self.data(2048)) }
        try await Task.sleep(for: .milliseconds(50))
        full.stop()
        #expect(await feeder.value == false)
        // A feed once stopped takes nothing more.
        #expect(await full.offer(Self.data(8)) == false)

        let empty = ChunkFeed(limit: 1024)
        let reading = Task { await Self.readAll(empty, size: 1 << 20) }
        try await Task.sleep(for: .milliseconds(100))
        ChunkReader(feed: empty, path: "feed", chunkSize: 1 << 20).close(stop: true)
        guard case .failure(let error) = await reading.value else {
            Issue.record("the read should have been cancelled")
            return
        }
        #expect(error.kind == .cancelled)
    }
}
