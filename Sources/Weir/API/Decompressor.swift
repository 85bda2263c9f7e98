import Dispatch
import FoundationEssentials
import SystemPackage
import WeirFiles
import WeirPipeline
import WeirSystem

/// Decompresses any standard zstd data — weir's own output, `zstd` and
/// `pzstd` files, concatenations, skippable frames — from files, file
/// descriptors and streams of bytes, decoding independent frames in
/// parallel and in bounded memory.
///
/// Every operation comes in two forms: `async throws`, and one that takes a
/// completion handler and returns a `Cancellation`; the work runs on a
/// thread of its own, as for ``Compressor``.
///
/// ```swift
/// let decompressor = Decompressor(options: DecompressionOptions(memoryLimit: 64 << 20))
/// try await decompressor.decompress(file: "big.tar.zst")  // writes big.tar
/// ```
public struct Decompressor: Sendable {
    /// How to decompress: checksum verification, memory budget, threads.
    public var options: DecompressionOptions

    /// Creates a decompressor.
    ///
    /// - Parameter options: how to decompress; by default checksums are
    ///   verified, windows up to 128 MiB are accepted, and there is one
    ///   worker per core.
    public init(options: DecompressionOptions = DecompressionOptions()) {
        self.options = options
    }

    // MARK: Files

    /// Decompresses the file at `path` to `output`, safely: the output
    /// appears under its name only when complete and verified, an existing
    /// file is not replaced unless `force`, and the input's permissions and
    /// modification time are carried over. The input is never changed.
    ///
    /// - Parameters:
    ///   - path: the compressed file.
    ///   - output: the file to write; nil strips `.zst` or `.zstd` (and turns
    ///     `.tzst` into `.tar`).
    ///   - force: replace `output` if it exists.
    ///   - progress: told of the bytes read and written; activated when the
    ///     run starts and finished when it ends.
    /// - Returns: what the run did; `frames` counts the frames decoded;
    ///   `Statistics.warnings` says when the file's seek table does not
    ///   match its frames (the frames decode all the same).
    /// - Throws: `WeirError`: an unknown suffix when `output` is nil, not
    ///   zstd, truncated, corrupt, a checksum mismatch, the memory limit, a
    ///   read or write failure; `.cancelled` when the task is cancelled.
    public func decompress(file path: String, to output: String? = nil, force: Bool = false,
                           progress: ProgressObserver? = nil) async throws(WeirError) -> Statistics {
        let work = try fileWork(path, output, force, progress)
        return try await BackgroundRun.run(name: "weir.decompress.file", work: work)
    }

    /// Decompresses the file at `path` to `output` and calls `completion`
    /// with the outcome; see ``decompress(file:to:force:progress:)``.
    ///
    /// - Parameters:
    ///   - path: the compressed file.
    ///   - output: the file to write; nil derives it from `path`.
    ///   - force: replace `output` if it exists.
    ///   - progress: told of the bytes read and written.
    ///   - queue: where `completion` runs.
    ///   - completion: called once with the statistics or the `WeirError`.
    /// - Returns: a handle that stops the run.
    @discardableResult
    public func decompress(file path: String, to output: String? = nil, force: Bool = false,
                           progress: ProgressObserver? = nil, queue: DispatchQueue = .global(),
                           completion: @escaping @Sendable (Result<Statistics, WeirError>) -> Void) -> Cancellation {
        let work: BackgroundRun.Work
        do throws(WeirError) {
            work = try fileWork(path, output, force, progress)
        } catch {
            work = { _ in .failure(error) }
        }
        return BackgroundRun.start(name: "weir.decompress.file", queue: queue, completion: completion, work: work)
    }

    // MARK: File descriptors

    /// Decompresses everything `input` holds, up to its end, into `output`.
    ///
    /// The descriptors stay the caller's: neither is closed. When `input` is
    /// a regular file that ends with a seek table, the table is checked
    /// against the frames: one that does not match is reported in
    /// `Statistics.warnings`, or as a `.corrupt` error when `output` is nil.
    ///
    /// - Parameters:
    ///   - input: the descriptor to read.
    ///   - output: the descriptor to write; nil only verifies the input.
    ///   - progress: told of the bytes read and written.
    /// - Returns: what the run did.
    /// - Throws: `WeirError`; `.cancelled` when the task is cancelled.
    public func decompress(from input: FileDescriptor, to output: FileDescriptor?,
                           progress: ProgressObserver? = nil) async throws(WeirError) -> Statistics {
        try await BackgroundRun.run(name: "weir.decompress.fd", work: descriptorWork(input, output, progress))
    }

    /// Decompresses everything `input` holds into `output` and calls
    /// `completion` with the outcome; see ``decompress(from:to:progress:)``.
    ///
    /// - Parameters:
    ///   - input: the descriptor to read.
    ///   - output: the descriptor to write; nil only verifies the input.
    ///   - progress: told of the bytes read and written.
    ///   - queue: where `completion` runs.
    ///   - completion: called once with the statistics or the `WeirError`.
    /// - Returns: a handle that stops the run.
    @discardableResult
    public func decompress(from input: FileDescriptor, to output: FileDescriptor?, progress: ProgressObserver? = nil,
                           queue: DispatchQueue = .global(),
                           completion: @escaping @Sendable (Result<Statistics, WeirError>) -> Void) -> Cancellation {
        BackgroundRun.start(name: "weir.decompress.fd", queue: queue, completion: completion,
                            work: descriptorWork(input, output, progress))
    }

    // MARK: Streams of bytes

    /// Decompresses a sequence of compressed chunks as they come, into a
    /// stream of decompressed pieces.
    ///
    /// Nothing runs until the stream is iterated; memory stays bounded
    /// whatever the length. Dropping the stream, or cancelling the task
    /// iterating it, stops the run (the stream then ends). If `chunks`
    /// throws, the stream throws that error.
    ///
    /// - Parameter chunks: the compressed input, in order.
    /// - Returns: the decompressed bytes, in pieces of at most 1 MiB; the
    ///   stream throws a `WeirError` if the input is not valid zstd.
    public func decompress<Chunks: AsyncSequence & Sendable>(
        _ chunks: Chunks
    ) -> AsyncThrowingStream<Data, any Error> where Chunks.Element: DataProtocol & Sendable {
        let options = planned
        return ByteStream(chunks: chunks) { input, output in
            DecompressionPipeline(input: input, output: output, inputName: ByteStream.name,
                                  outputName: ByteStream.name, options: options)
        }.makeStream()
    }

    /// Decompresses bytes held in memory.
    ///
    /// - Parameter data: the compressed bytes.
    /// - Returns: the decompressed bytes.
    /// - Throws: `WeirError`; `.cancelled` when the task is cancelled.
    public func decompress(_ data: Data) async throws(WeirError) -> Data {
        let options = planned
        return try await ByteStream.run(data) { input, output in
            DecompressionPipeline(input: input, output: output, inputName: ByteStream.name,
                                  outputName: ByteStream.name, options: options)
        }
    }

    /// ``options`` as this process runs them: with `threads` 0, the
    /// workers (and, under a cgroup's memory limit, the chunk or the memory
    /// limit) the process's cores and memory allow, as the `weir` command
    /// plans them (``WorkerPlan``).
    private var planned: DecompressionOptions { WorkerPlan.applied(to: options).options }

    // MARK: Work

    private func fileWork(_ path: String, _ output: String?, _ force: Bool,
                          _ progress: ProgressObserver?) throws(WeirError) -> BackgroundRun.Work {
        let destination: String
        if let output { destination = output } else { destination = try OutputName.decompressed(for: path) }
        let job = FileJob(input: path, operation: .decompress(planned), destination: .file(destination), force: force)
        return BackgroundRun.file(job, progress: progress)
    }

    private func descriptorWork(_ input: FileDescriptor, _ output: FileDescriptor?,
                                _ progress: ProgressObserver?) -> BackgroundRun.Work {
        let options = planned
        return BackgroundRun.pipeline(progress: progress) {
            DecompressionPipeline(input: input, output: output, inputName: "(fd \(input.rawValue))",
                                  outputName: output.map { "(fd \($0.rawValue))" } ?? "(none)",
                                  options: options, observer: progress)
        }
    }
}
