import Dispatch
import FoundationEssentials
import WeirPipeline
import WeirSystem

/// Runs a pipeline on bytes held in memory: async code feeds it a sequence
/// of byte chunks and reads its output as an `AsyncThrowingStream`, with
/// back-pressure both ways and in bounded memory, through the same pipeline
/// code as files and pipes and without a kernel pipe.
///
/// Data flow:
///
///     chunks (any AsyncSequence) ─▶ feeder Task: offers one chunk at a
///        │  time to the ChunkFeed, suspending while it is full
///        ▼
///     ChunkFeed ─▶ the pipeline's ChunkReader, one read at a time
///        ▼
///     pipeline (CompressionPipeline or DecompressionPipeline), run() on a
///        │  thread of its own ("weir.stream.run")
///        ▼
///     StreamSink: pieces back in order ─▶ the stream's next(): one slice
///     of at most ``pieceSize`` per call.
///
/// Nothing runs until the stream is first iterated. A piece counts as
/// written only when the consumer has taken it, so a slow consumer stops the
/// pipeline, which stops reading the feed, which suspends the feeder.
///
/// Ending early: when the stream is dropped before its end, or the task
/// iterating it is cancelled, the pipeline is cancelled (its reader stops
/// the feed, its sink drops what it holds) and the feeder task cancelled.
///
/// Who owns what: `state` (behind a lock) holds whether the run started or
/// stopped, the feeder task and the first failure of the input sequence.
final class ByteStream: Sendable {
    /// The most bytes one piece of output holds.
    static let pieceSize = 1 << 20
    /// The bytes of input the feed holds before the feeder waits (unless a
    /// read waits for more).
    static let feedLimit = 1 << 20
    /// How errors name the stream.
    static let name = "(stream)"

    private struct State {
        var started = false
        var stopped = false
        var feeder: Task<Void, Never>?
        /// The input sequence's own failure, which the stream throws.
        var inputFailure: (any Error)?
    }

    private let feed: ChunkFeed
    private let sink = StreamSink(sliceSize: ByteStream.pieceSize)
    private let pipeline: any BlockingPipeline
    /// Feeds the chunks to the feed; nil when the feed already holds them all.
    private let feedChunks: (@Sendable (ByteStream) async -> Void)?
    private let state = Locked(State())

    /// A stream over the chunks of `chunks`.
    ///
    /// - Parameter makePipeline: the pipeline reading the input and writing
    ///   the output it is given.
    init<Chunks: AsyncSequence & Sendable>(
        chunks: Chunks,
        makePipeline: @Sendable (PipelineInput, PipelineOutput) -> any BlockingPipeline
    ) where Chunks.Element: DataProtocol & Sendable {
        feed = ChunkFeed(limit: Self.feedLimit)
        pipeline = makePipeline(.feed(feed), .stream(sink))
        feedChunks = { stream in
            do {
                for try await chunk in chunks {
                    if Task.isCancelled { break }
                    let data = Self.dispatchData(chunk)
                    if data.isEmpty { continue }
                    guard await stream.feed.offer(data) else { break }
                }
            } catch {
                stream.failInput(error)
            }
            stream.feed.end()
        }
    }

    /// A stream over `data`, held in memory already (no copy, no feeder).
    init(contents data: DispatchData,
         makePipeline: @Sendable (PipelineInput, PipelineOutput) -> any BlockingPipeline) {
        feed = ChunkFeed(contents: data)
        pipeline = makePipeline(.feed(feed), .stream(sink))
        feedChunks = nil
    }

    /// The stream of output pieces; dropping it early cancels the run.
    func makeStream() -> AsyncThrowingStream<Data, any Error> {
        let owner = Owner(self)
        return AsyncThrowingStream(unfolding: {
            try await owner.stream.next()
        })
    }

    /// Stops everything, as when the consumer goes away: cancels the
    /// pipeline and the feeder.
    func stop() {
        let (feeder, running) = state.withLock { state -> (Task<Void, Never>?, Bool) in
            state.stopped = true
            return (state.feeder, state.started)
        }
        feeder?.cancel()
        if running { pipeline.cancel() }
    }

    /// The next piece of output, nil at the end; throws the run's failure.
    private func next() async throws -> Data? {
        start()
        return try await withTaskCancellationHandler {
            try await sink.next()
        } onCancel: {
            self.pipeline.cancel()
        }
    }

    /// Starts the pipeline's thread and the feeder, once.
    private func start() {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started
        }
        guard first else { return }
        let pipeline = self.pipeline
        DedicatedThread.start(name: "weir.stream.run") { [self] in
            let outcome: Result<Void, any Error>
            do throws(WeirError) {
                _ = try pipeline.run()
                outcome = .success(())
            } catch {
                outcome = .failure(state.withLock { $0.inputFailure } ?? error)
            }
            sink.end(outcome)
        }
        guard let feedChunks else { return }
        let feeder = Task.detached { [self] in await feedChunks(self) }
        let stopped = state.withLock { state -> Bool in
            state.feeder = feeder
            return state.stopped
        }
        if stopped { feeder.cancel() }
    }

    /// The input sequence failed: its error is the one the stream throws.
    private func failInput(_ error: any Error) {
        state.withLock { state in
            if state.inputFailure == nil { state.inputFailure = error }
        }
        pipeline.cancel()
    }

    /// A chunk as `DispatchData`, without a copy when it already is one.
    private static func dispatchData(_ chunk: some DataProtocol) -> DispatchData {
        if let data = chunk as? DispatchData { return data }
        var result = DispatchData.empty
        for region in chunk.regions {
            region.withUnsafeBytes { result.append($0) }
        }
        return result
    }

    /// Held by the stream alone: when the stream goes away, so does the
    /// owner, which stops the run.
    private final class Owner: Sendable {
        let stream: ByteStream
        init(_ stream: ByteStream) { self.stream = stream }
        deinit { stream.stop() }
    }
}

extension ByteStream {
    /// Runs the pipeline `makePipeline` returns on `data` (copied once) and
    /// returns its whole output.
    static func run(_ data: Data,
                    makePipeline: @Sendable (PipelineInput, PipelineOutput) -> any BlockingPipeline)
        async throws(WeirError) -> Data {
        let contents = data.withUnsafeBytes { DispatchData(bytes: $0) }
        return try await collect(ByteStream(contents: contents, makePipeline: makePipeline).makeStream())
    }

    /// Every piece of `stream`, joined; its failure as a `WeirError`.
    static func collect(_ stream: AsyncThrowingStream<Data, any Error>) async throws(WeirError) -> Data {
        var result = Data()
        do {
            for try await piece in stream { result.append(piece) }
        } catch let error as WeirError {
            throw error
        } catch {
            throw WeirError.cancelled(path: name, operation: .read, by: error)
        }
        return result
    }
}
