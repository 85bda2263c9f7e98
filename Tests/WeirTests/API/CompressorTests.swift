import Dispatch
import Foundation
import Glibc
import SystemPackage
import Testing
@testable import Weir
@testable import WeirPipeline
@testable import WeirSystem
@testable import WeirTestSupport

/// The public API: files, descriptors and streams, async and with
/// completion handlers.
@Suite("Compressor and Decompressor", .serialized)
struct CompressorTests {
    /// A scratch folder, removed at the end of the test.
    final class Folder: Sendable {
        let url = TestData.temporaryFolder()
        deinit { try? FileManager.default.removeItem(at: url) }
        func path(_ name: String) -> String { url.appendingPathComponent(name).path }
        func write(_ name: String, _ bytes: [UInt8]) {
            _ = FileManager.default.createFile(atPath: path(name), contents: Data(bytes))
        }
        func read(_ name: String) -> [UInt8]? { FileManager.default.contents(atPath: path(name)).map { Array($0) } }
    }

    /// Small frames and two workers, so that every test crosses frame boundaries.
    static let options = CompressionOptions(level: 3, threads: 2, chunkSize: 64 << 10)

    @Test("file round trip, async, with a progress observer")
    func fileAsync() async throws {
        let folder = Folder()
        let input = TestData.text(1_000_000)
        folder.write("data", input)
        let seen = Locked(0)
        let observer = ProgressObserver(interval: 0.001) { totals in seen.withLock { $0 = max($0, totals.bytesIn) } }
        let compressed = try await Compressor(options: Self.options).compress(
            file: folder.path("data"), progress: observer)
        #expect(compressed.bytesIn == input.count)
        #expect(compressed.frames == 16)
        #expect(TestData.same(TestData.zstdDecode(try #require(folder.read("data.zst"))), input))
        #expect(seen.current <= input.count)

        try FileManager.default.removeItem(atPath: folder.path("data"))
        let restored = try await Decompressor().decompress(file: folder.path("data.zst"))
        #expect(restored.bytesOut == input.count)
        #expect(folder.read("data") == input)
    }

    @Test("file round trip with completion handlers")
    func fileCompletion() async throws {
        let folder = Folder()
        let input = TestData.text(300_000, seed: 7)
        folder.write("data", input)
        let compressed = await withCheckedContinuation { continuation in
            Compressor(options: Self.options).compress(file: folder.path("data"), to: folder.path("x.zst")) {
                continuation.resume(returning: $0)
            }
        }
        #expect(try compressed.get().bytesIn == input.count)
        let restored = await withCheckedContinuation { continuation in
            Decompressor().decompress(
                file: folder.path("x.zst"), to: folder.path("copy"), queue: DispatchQueue(label: "test")
            ) {
                continuation.resume(returning: $0)
            }
        }
        #expect(try restored.get().bytesOut == input.count)
        #expect(folder.read("copy") == input)
    }

    @Test("file errors are WeirErrors, in both forms")
    func fileErrors() async throws {
        let folder = Folder()
        folder.write("plain.txt", TestData.text(1000))
        await #expect(throws: WeirError.self) {
            try await Decompressor().decompress(file: folder.path("plain.txt"))
        }
        let result = await withCheckedContinuation { continuation in
            Decompressor().decompress(file: folder.path("plain.txt")) { continuation.resume(returning: $0) }
        }
        guard case .failure(let error) = result else { Issue.record("expected a failure"); return }
        #expect(error.kind == .unknownSuffix)
        do {
            _ = try await Decompressor().decompress(file: folder.path("plain.txt"), to: folder.path("out"))
            Issue.record("expected a failure")
        } catch {
            #expect(error.kind == .notZstd)
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path("out")))
        do {
            _ = try await Compressor().compress(file: folder.path("missing"))
            Issue.record("expected a failure")
        } catch {
            #expect(error.kind == .system(errno: ENOENT))
        }
    }

    @Test("descriptor round trip, async and with completion handlers")
    func descriptors() async throws {
        let folder = Folder()
        let input = TestData.text(500_000, seed: 3)
        folder.write("data", input)
        let source = try FileDescriptor.open(folder.path("data"), .readOnly)
        let target = try FileDescriptor.open(folder.path("data.zst"), .writeOnly, options: [.create, .truncate],
                                             permissions: .ownerReadWrite)
        defer { try? source.close(); try? target.close() }
        let compressed = try await Compressor(options: Self.options).compress(from: source, to: target)
        #expect(compressed.bytesIn == input.count)

        let again = try FileDescriptor.open(folder.path("data.zst"), .readOnly)
        let copy = try FileDescriptor.open(folder.path("copy"), .writeOnly, options: [.create, .truncate],
                                           permissions: .ownerReadWrite)
        defer { try? again.close(); try? copy.close() }
        let restored = await withCheckedContinuation { continuation in
            Decompressor().decompress(from: again, to: copy) { continuation.resume(returning: $0) }
        }
        #expect(try restored.get().bytesOut == input.count)
        #expect(folder.read("copy") == input)
    }

    @Test("stream round trip, many chunks in and out, any chunk type",
          arguments: [0, 1, 65_535, 65_536, 2_000_000])
    func streams(size: Int) async throws {
        let input = TestData.text(size, seed: UInt64(size))
        let pieces = stride(from: 0, to: input.count, by: 10_007).map {
            Array(input[$0..<min($0 + 10_007, input.count)])
        }
        let chunks = AsyncStream<[UInt8]> { continuation in
            for piece in pieces { continuation.yield(piece) }
            continuation.finish()
        }
        var compressed = Data()
        for try await piece in Compressor(options: Self.options).compress(chunks) {
            #expect(piece.count <= ByteStream.pieceSize)
            compressed.append(piece)
        }
        #expect(TestData.same(TestData.zstdDecode(Array(compressed)), input))

        let compressedChunks = AsyncStream<DispatchData> { continuation in
            for start in stride(from: 0, to: compressed.count, by: 4096) {
                compressed[start..<min(start + 4096, compressed.count)].withUnsafeBytes {
                    _ = continuation.yield(DispatchData(bytes: $0))
                }
            }
            continuation.finish()
        }
        var restored = Data()
        for try await piece in Decompressor().decompress(compressedChunks) { restored.append(piece) }
        #expect(Array(restored) == input)
    }

    @Test("a stream with a frame damaged in the middle yields every frame before it, then throws")
    func damagedStream() async throws {
        let input = TestData.text(32 << 16, seed: 12)
        let compressed = try await Compressor(options: Self.options).compress(Data(input))
        let frames = TestData.frames(Array(compressed))
        let damaged = 20
        let start = frames.prefix(damaged).reduce(0) { $0 + $1.size }
        var bytes = Array(compressed)
        for index in start + 200 ..< start + 216 { bytes[index] ^= 0x5A }
        let chunks = AsyncStream<[UInt8]> { continuation in
            for at in stride(from: 0, to: bytes.count, by: 4096) {
                continuation.yield(Array(bytes[at..<min(at + 4096, bytes.count)]))
            }
            continuation.finish()
        }
        var restored: [UInt8] = []
        var failure: (any Error)?
        do {
            for try await piece in Decompressor(options: DecompressionOptions(threads: 4)).decompress(chunks) {
                restored += piece
            }
        } catch {
            failure = error
        }
        let kind = (failure as? WeirError)?.kind
        #expect(kind == .corrupt || kind == .checksumMismatch, "\(String(describing: failure))")
        let before = restored == Array(input.prefix(damaged << 16))
        #expect(before, "\(restored.count) bytes, not the \(damaged << 16) before the damaged frame")
    }

    @Test("in-memory round trip and a corrupt input")
    func memory() async throws {
        let input = Data(TestData.text(200_000, seed: 9))
        let compressed = try await Compressor(options: Self.options).compress(input)
        #expect(compressed.count < input.count)
        #expect(try await Decompressor().decompress(compressed) == input)
        do {
            _ = try await Decompressor().decompress(Data("not zstd at all".utf8))
            Issue.record("expected a failure")
        } catch {
            #expect(error.kind == .notZstd)
        }
    }

    struct SourceFailed: Error {}

    @Test("a failing source makes the stream throw its error")
    func failingSource() async throws {
        let chunks = AsyncThrowingStream<Data, any Error> { continuation in
            continuation.yield(Data(TestData.text(100_000)))
            continuation.finish(throwing: SourceFailed())
        }
        await #expect(throws: SourceFailed.self) {
            for try await _ in Compressor(options: Self.options).compress(chunks) {}
        }
    }

    @Test("dropping a stream early, or cancelling its task, stops the run and its threads")
    func endingEarly() async throws {
        do {
            var count = 0
            for try await _ in Compressor(options: Self.options).compress(Self.endless()) {
                count += 1
                if count == 1 { #expect(Self.streamThreads() >= 1) }  // the thread running the pipeline
                if count == 3 { break }
            }
        }
        let task = Task {
            var bytes = 0
            for try await piece in Compressor(options: Self.options).compress(Self.endless()) { bytes += piece.count }
            return bytes
        }
        try await Task.sleep(for: .milliseconds(200))
        task.cancel()
        // As with any AsyncThrowingStream, a cancelled consumer sees the
        // stream end (or the run's .cancelled error): what matters is that it
        // ends, and that the run stops.
        _ = try? await task.value
        // The thread running each pipeline ends once its run has stopped.
        var left = Self.streamThreads()
        for _ in 0..<500 where left > 0 {
            try await Task.sleep(for: .milliseconds(10))
            left = Self.streamThreads()
        }
        #expect(left == 0)
    }

    @Test("a consumer that stops asking stops the stream's input, which goes on when it asks again")
    func streamBackPressure() async throws {
        let pulled = Locked(0)
        let chunk = Data(TestData.random(1 << 16))
        let chunks = AsyncStream<Data>(unfolding: {
            pulled.withLock { $0 += 1 }
            return chunk
        })
        var pieces = Compressor(options: Self.options).compress(chunks).makeAsyncIterator()
        _ = try await pieces.next()
        try await Task.sleep(for: .milliseconds(300))
        let held = pulled.current
        try await Task.sleep(for: .milliseconds(300))
        // Held: the feed's 1 MiB and the chunk offered, the chunks in flight
        // (threads + 1 of 64 KiB) and the read in progress; not the endless input.
        #expect(pulled.current == held)
        #expect(held <= (ByteStream.feedLimit >> 16) + Self.options.resolvedChunksInFlight + 4)
        for _ in 0..<40 { _ = try await pieces.next() }
        #expect(pulled.current > held)
    }

    @Test("cancelling the task of a file run fails it with .cancelled and leaves no output")
    func cancelFile() async throws {
        let folder = Folder()
        // A FIFO nobody writes to: the run waits until it is cancelled.
        #expect(mkfifo(folder.path("fifo"), 0o600) == 0)
        let writer = open(folder.path("fifo"), O_RDWR)  // keeps the FIFO open without data
        defer { close(writer) }
        let task = Task {
            try await Compressor(options: Self.options).compress(file: folder.path("fifo"), to: folder.path("out.zst"))
        }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        do {
            _ = try await task.value
            Issue.record("expected a failure")
        } catch let error as WeirError {
            #expect(error.kind == .cancelled)
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path("out.zst")))
    }

    /// An endless input: only the consumer's leaving can end a run on it.
    static func endless() -> AsyncStream<Data> {
        let chunk = Data(TestData.random(1 << 16))
        return AsyncStream(bufferingPolicy: .bufferingOldest(4)) { continuation in
            let producer = Task {
                while !Task.isCancelled {
                    if case .terminated = continuation.yield(chunk) { break }
                    try? await Task.sleep(for: .milliseconds(1))
                }
            }
            continuation.onTermination = { _ in producer.cancel() }
        }
    }

    /// The threads of stream runs still alive in this process.
    static func streamThreads() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            return name.hasPrefix("weir.stream")
        }.count
    }
}
