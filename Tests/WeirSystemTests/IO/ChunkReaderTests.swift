import CSupport
import Dispatch
import Foundation
import Glibc
import Testing
@testable import WeirSystem
@testable import WeirTestSupport

/// Blocking reads of pipes through a stream channel: chunks are assembled
/// whatever the producer's rhythm, a waiting read can be stopped, and the
/// descriptor's flags come back when the channel is closed.
@Suite("Chunk reader on pipes")
struct ChunkReaderTests {
    private static func bytes(_ data: DispatchData) -> [UInt8] {
        var out: [UInt8] = []
        data.enumerateBytes { region, _, _ in out += region }
        return out
    }

    /// A close-on-exec pipe: (read end, write end).
    private static func pipe() throws -> (Int32, Int32) {
        let ends = try #require(TestPipe.make())
        return (ends.read, ends.write)
    }

    /// Writes `pieces` to `fd` from a thread, sleeping `pause` between them,
    /// then closes `fd`.
    private static func feed(_ fd: Int32, _ pieces: [[UInt8]], pause: useconds_t) {
        DedicatedThread.start(name: "feeder") {
            for piece in pieces {
                piece.withUnsafeBytes { _ = write(fd, $0.baseAddress, $0.count) }
                if pause > 0 { usleep(pause) }
            }
            close(fd)
        }
    }

    @Test("a pipe fed in small, slow pieces gives full chunks, then a short one and the end")
    func slowProducer() throws {
        let (readEnd, writeEnd) = try Self.pipe()
        defer { close(readEnd) }
        let content = TestData.text(10_500, seed: 3)
        let pieces = stride(from: 0, to: content.count, by: 700).map {
            Array(content[$0..<min($0 + 700, content.count)])
        }
        Self.feed(writeEnd, pieces, pause: 3_000)
        let cleanup = DispatchGroup()
        let reader = ChunkReader(
            input: Descriptor(readEnd, path: "pipe"), kind: .stream, chunkSize: 4096, cleanup: cleanup)
        var sizes: [Int] = []
        var read: [UInt8] = []
        while true {
            let chunk = try reader.start().wait()
            sizes.append(chunk.data.count)
            read += Self.bytes(chunk.data)
            if chunk.endOfInput { break }
        }
        reader.close(stop: false)
        cleanup.wait()
        #expect(sizes == [4096, 4096, 2308])
        #expect(read == content)
    }

    @Test("reading raises the pipe's capacity to 1 MiB, so a fast producer fills large reads")
    func pipeCapacity() throws {
        let (readEnd, writeEnd) = try Self.pipe()
        defer { close(readEnd); close(writeEnd) }
        #expect(weir_grow_pipe(readEnd, 0) < ChunkReader.pipeCapacity)  // 64 KiB by default
        let cleanup = DispatchGroup()
        let reader = ChunkReader(
            input: Descriptor(readEnd, path: "pipe"), kind: .stream, chunkSize: 1 << 20, cleanup: cleanup)
        #expect(weir_grow_pipe(readEnd, 0) == ChunkReader.pipeCapacity)
        reader.close(stop: false)
        cleanup.wait()
    }

    @Test("stopping the reader ends a read waiting on a silent pipe with .cancelled")
    func stopWhileWaiting() throws {
        let (readEnd, writeEnd) = try Self.pipe()
        defer { close(readEnd) }
        let cleanup = DispatchGroup()
        let reader = ChunkReader(
            input: Descriptor(readEnd, path: "pipe"), kind: .stream, chunkSize: 4096, cleanup: cleanup)
        _ = "12".withCString { write(writeEnd, $0, 2) }  // some bytes, then silence
        let outcome = Locked<WeirError?>(nil)
        let finished = DispatchSemaphore(value: 0)
        DedicatedThread.start(name: "waiter") {
            do throws(WeirError) { _ = try reader.start().wait() } catch { outcome.withLock { $0 = error } }
            finished.signal()
        }
        #expect(finished.wait(timeout: .now() + .milliseconds(200)) == .timedOut)  // still waiting for more
        reader.close(stop: true)
        #expect(finished.wait(timeout: .now() + .seconds(5)) == .success)
        #expect(outcome.current?.kind == .cancelled)
        // The read blocked in the kernel ends when the producer closes; only
        // then does the channel's cleanup run.
        close(writeEnd)
        #expect(cleanup.wait(timeout: .now() + .seconds(5)) == .success)
    }

    @Test("the pipe is read in blocking mode, and its own flags are back after the channel closes")
    func blockingWhileRead() throws {
        let (readEnd, writeEnd) = try Self.pipe()
        defer { close(readEnd) }
        // A producer that handed over a non-blocking descriptor gets it back so.
        _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK)
        let content = TestData.text(20_000, seed: 5)
        Self.feed(writeEnd, [Array(content.prefix(5000)), Array(content.dropFirst(5000))], pause: 20_000)
        let cleanup = DispatchGroup()
        let reader = ChunkReader(
            input: Descriptor(readEnd, path: "pipe"), kind: .stream, chunkSize: 4096, cleanup: cleanup)
        let first = try reader.start().wait()
        #expect(fcntl(readEnd, F_GETFL) & O_NONBLOCK == 0)
        var read = Self.bytes(first.data)
        var end = first.endOfInput
        while !end {
            let chunk = try reader.start().wait()
            read += Self.bytes(chunk.data)
            end = chunk.endOfInput
        }
        reader.close(stop: false)
        cleanup.wait()
        #expect(read == content)
        #expect(fcntl(readEnd, F_GETFL) & O_NONBLOCK != 0)
    }

    /// Reads one chunk of `content` from a pipe with libdispatch's read
    /// buffers set to `buffer` bytes, by a reader that sizes them to its
    /// chunk when `sizing`; returns the sizes of its regions.
    private static func regions(buffer: Int, content: [UInt8], sizing: Bool = false) throws -> [Int] {
        #expect(DispatchIOTuning.setReadBufferSize(buffer))
        let (readEnd, writeEnd) = try Self.pipe()
        defer { close(readEnd) }
        Self.feed(writeEnd, [content], pause: 0)
        let cleanup = DispatchGroup()
        let reader = ChunkReader(input: Descriptor(readEnd, path: "pipe"), kind: .stream, chunkSize: content.count,
                                 sizesReadBuffers: sizing, cleanup: cleanup)
        let chunk = try reader.start().wait()
        reader.close(stop: false)
        cleanup.wait()
        #expect(Self.bytes(chunk.data) == content)
        var regions: [Int] = []
        chunk.data.enumerateBytes { region, _, _ in regions.append(region.count) }
        return regions
    }

    // One test: the buffer size is process-wide.
    @Test("libdispatch's read buffer size sets the pieces: a buffer of a whole chunk makes it one region")
    func readBufferSize() throws {
        defer { DispatchIOTuning.setReadBufferSize(1 << 20) }  // libdispatch's default
        let content = TestData.random(256 << 10, seed: 9)
        // Filled by several read()s (a pipe hands over at most what it
        // holds), handed over once.
        #expect(try Self.regions(buffer: 256 << 10, content: content) == [256 << 10])
        let small = try Self.regions(buffer: 8 << 10, content: content)
        #expect(small.allSatisfy { $0 <= 8 << 10 })
        #expect(small.count >= 32)
        // A reader of a pipeline that asks (sizesReadBuffers) sets them to
        // its chunk itself.
        #expect(try Self.regions(buffer: 8 << 10, content: content, sizing: true) == [256 << 10])
    }

    @Test("a slow producer's bytes are handed over as they come only when watched (live)")
    func liveDeliveries() throws {
        let piece = ChunkReader.liveDelivery + 4096
        let content = TestData.random(3 * piece, seed: 4)
        for live in [false, true] {
            let (readEnd, writeEnd) = try Self.pipe()
            defer { close(readEnd) }
            Self.feed(
                writeEnd,
                [Array(content[..<piece]), Array(content[piece..<2 * piece]), Array(content[(2 * piece)...])],
                pause: 100_000)
            let cleanup = DispatchGroup()
            let deliveries = Locked(0)
            let reader = ChunkReader(
                input: Descriptor(readEnd, path: "pipe"), kind: .stream, chunkSize: 4 * piece, live: live,
                cleanup: cleanup, onBytes: { _ in deliveries.withLock { $0 += 1 } })
            let chunk = try reader.start().wait()
            reader.close(stop: false)
            cleanup.wait()
            #expect(Self.bytes(chunk.data) == content)
            #expect(chunk.endOfInput)
            if live {
                #expect(deliveries.current >= 3, "live: \(deliveries.current)")
            } else {
                #expect(deliveries.current == 1, "whole chunk: \(deliveries.current)")
            }
        }
    }

    /// The pattern that made libdispatch crash (a use-after-free in
    /// `_dispatch_event_loop_drain`, caught under ThreadSanitizer): the
    /// reader is ahead of the producer, so it waits, and the producer then
    /// closes the pipe. Hundreds of short pipes, each ended that way.
    @Test("hundreds of pipes closed while their reader waits: every byte, then the end")
    func closedWhileWaiting() throws {
        for round in 0..<300 {
            let (readEnd, writeEnd) = try Self.pipe()
            let content = TestData.random(1 + round * 37 % 5000, seed: UInt64(round))
            Self.feed(writeEnd, [Array(content.prefix(content.count / 2)), Array(content.dropFirst(content.count / 2))],
                      pause: useconds_t(round % 4 * 500))
            let cleanup = DispatchGroup()
            let reader = ChunkReader(
                input: Descriptor(readEnd, path: "pipe"), kind: .stream, chunkSize: 1 << 20, cleanup: cleanup)
            let chunk = try reader.start().wait()
            reader.close(stop: false)
            cleanup.wait()
            close(readEnd)
            #expect(chunk.endOfInput)
            #expect(Self.bytes(chunk.data) == content, "round \(round)")
        }
    }
}
