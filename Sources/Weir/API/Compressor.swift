import Dispatch
import FoundationEssentials
import SystemPackage
import WeirFiles
import WeirPipeline
import WeirSystem

/// Compresses files, file descriptors and streams of bytes to standard zstd,
/// in parallel and in bounded memory: the engine of the `weir` command, for
/// Swift programs.
///
/// The output is a series of independent frames, ended by a seek table
/// unless `CompressionOptions.seekTable` is off, that `zstd -d` and
/// ``Decompressor`` decode.
///
/// Every operation comes in two forms: `async throws`, and one that takes a
/// completion handler and returns a `Cancellation`. Either way the work
/// runs on a thread of its own, never on Swift concurrency's cooperative
/// pool nor on a GCD worker, since the pipeline blocks while it waits for
/// its channels. Cancelling the task (or calling `Cancellation.cancel()`)
/// stops the run, which then fails with a `.cancelled` `WeirError`.
///
/// ```swift
/// let compressor = Compressor(options: CompressionOptions(level: 19, threads: 4))
/// let statistics = try await compressor.compress(file: "big.tar")  // writes big.tar.zst
/// print(statistics.bytesIn, "→", statistics.bytesOut)
/// ```
public struct Compressor: Sendable {
    /// How to compress: level, threads, chunk size, checksum, seek table.
    public var options: CompressionOptions

    /// Creates a compressor.
    ///
    /// - Parameter options: how to compress; zstd's defaults (level 3, one
    ///   worker per core, frames sized by level (8 MiB at level 3), checksums, a seek table) by default.
    public init(options: CompressionOptions = CompressionOptions()) {
        self.options = options
    }

    // MARK: Files

    /// Compresses the file at `path` to `output`, safely: the output appears
    /// under its name only when complete, an existing file is not replaced
    /// unless `force`, and the input's permissions and modification time are
    /// carried over. The input is never changed.
    ///
    /// - Parameters:
    ///   - path: the file to compress.
    ///   - output: the file to write; nil writes `path` + `.zst`.
    ///   - force: replace `output` if it exists.
    ///   - progress: told of the bytes read and written; activated when the
    ///     run starts and finished when it ends.
    /// - Returns: what the run did.
    /// - Throws: `WeirError` naming the file and the operation that failed;
    ///   `.cancelled` when the task is cancelled.
    public func compress(file path: String, to output: String? = nil, force: Bool = false,
                         progress: ProgressObserver? = nil) async throws(WeirError) -> Statistics {
        try await BackgroundRun.run(name: "weir.compress.file", work: fileWork(path, output, force, progress))
    }

    /// Compresses the file at `path` to `output` and calls `completion` with
    /// the outcome; see ``compress(file:to:force:progress:)``.
    ///
    /// - Parameters:
    ///   - path: the file to compress.
    ///   - output: the file to write; nil writes `path` + `.zst`.
    ///   - force: replace `output` if it exists.
    ///   - progress: told of the bytes read and written.
    ///   - queue: where `completion` runs.
    ///   - completion: called once with the statistics or the `WeirError`.
    /// - Returns: a handle that stops the run.
    @discardableResult
    public func compress(file path: String, to output: String? = nil, force: Bool = false,
                         progress: ProgressObserver? = nil, queue: DispatchQueue = .global(),
                         completion: @escaping @Sendable (Result<Statistics, WeirError>) -> Void) -> Cancellation {
        BackgroundRun.start(name: "weir.compress.file", queue: queue, completion: completion,
                            work: fileWork(path, output, force, progress))
    }

    // MARK: File descriptors

    /// Compresses everything `input` holds, up to its end, into `output`.
    ///
    /// The descriptors stay the caller's: neither is closed. Either may be a
    /// regular file, a pipe or a socket.
    ///
    /// - Parameters:
    ///   - input: the descriptor to read.
    ///   - output: the descriptor to write.
    ///   - progress: told of the bytes read and written.
    /// - Returns: what the run did.
    /// - Throws: `WeirError`; `.cancelled` when the task is cancelled.
    public func compress(from input: FileDescriptor, to output: FileDescriptor,
                         progress: ProgressObserver? = nil) async throws(WeirError) -> Statistics {
        try await BackgroundRun.run(name: "weir.compress.fd", work: descriptorWork(input, output, progress))
    }

    /// Compresses everything `input` holds into `output` and calls
    /// `completion` with the outcome; see ``compress(from:to:progress:)``.
    ///
    /// - Parameters:
    ///   - input: the descriptor to read.
    ///   - output: the descriptor to write.
    ///   - progress: told of the bytes read and written.
    ///   - queue: where `completion` runs.
    ///   - completion: called once with the statistics or the `WeirError`.
    /// - Returns: a handle that stops the run.
    @discardableResult
    public func compress(from input: FileDescriptor, to output: FileDescriptor, progress: ProgressObserver? = nil,
                         queue: DispatchQueue = .global(),
                         completion: @escaping @Sendable (Result<Statistics, WeirError>) -> Void) -> Cancellation {
        BackgroundRun.start(name: "weir.compress.fd", queue: queue, completion: completion,
                            work: descriptorWork(input, output, progress))
    }

    // MARK: Streams of bytes

    /// Compresses a sequence of byte chunks (`Data`, `DispatchData`, `[UInt8]`
    /// …) as they come, into a stream of compressed pieces.
    ///
    /// Nothing runs until the stream is iterated. Memory stays bounded
    /// whatever the length: the input is read only as fast as the output is
    /// consumed. Dropping the stream, or cancelling the task iterating it,
    /// stops the run (the stream then ends, as any `AsyncThrowingStream`
    /// does when its task is cancelled). If `chunks` throws, the stream
    /// throws that error.
    ///
    /// - Parameter chunks: the input, in order.
    /// - Returns: the compressed bytes, in pieces of at most 1 MiB; the
    ///   stream throws a `WeirError` if the run fails.
    public func compress<Chunks: AsyncSequence & Sendable>(
        _ chunks: Chunks
    ) -> AsyncThrowingStream<Data, any Error> where Chunks.Element: DataProtocol & Sendable {
        let options = planned
        return ByteStream(chunks: chunks) { input, output in
            CompressionPipeline(input: input, output: output, inputName: ByteStream.name,
                                outputName: ByteStream.name, options: options)
        }.makeStream()
    }

    /// Compresses bytes held in memory.
    ///
    /// - Parameter data: the bytes to compress.
    /// - Returns: the compressed bytes.
    /// - Throws: `WeirError`; `.cancelled` when the task is cancelled.
    public func compress(_ data: Data) async throws(WeirError) -> Data {
        let options = planned
        return try await ByteStream.run(data) { input, output in
            CompressionPipeline(input: input, output: output, inputName: ByteStream.name,
                                outputName: ByteStream.name, options: options)
        }
    }

    /// ``options`` as this process runs them: with `threads` 0, the
    /// workers (and, under a cgroup's memory limit, the chunk or the memory
    /// limit) the process's cores and memory allow, as the `weir` command
    /// plans them (``WorkerPlan``).
    private var planned: CompressionOptions { WorkerPlan.applied(to: options).options }

    // MARK: Work

    private func fileWork(_ path: String, _ output: String?, _ force: Bool,
                          _ progress: ProgressObserver?) -> BackgroundRun.Work {
        let job = FileJob(input: path, operation: .compress(planned),
                          destination: .file(output ?? OutputName.compressed(for: path)), force: force)
        return BackgroundRun.file(job, progress: progress)
    }

    private func descriptorWork(_ input: FileDescriptor, _ output: FileDescriptor,
                                _ progress: ProgressObserver?) -> BackgroundRun.Work {
        let options = planned
        return BackgroundRun.pipeline(progress: progress) {
            CompressionPipeline(input: input, output: output, inputName: "(fd \(input.rawValue))",
                                outputName: "(fd \(output.rawValue))", options: options, observer: progress)
        }
    }
}
