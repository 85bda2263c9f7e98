import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a pipeline between two pipes so that async code can feed it a
/// sequence of byte chunks and read its output as an `AsyncThrowingStream`,
/// with back-pressure both ways and in bounded memory.
///
/// Data flow:
///
///     chunks (any AsyncSequence) ─▶ feeder Task: one DispatchIO write at a
///        │  time on the input pipe's write end (suspends, never blocks)
///        ▼
///     input pipe ─▶ pipeline (CompressionPipeline or
///        │  ParallelDecompressionPipeline), run() on a Thread of its own
///        ▼
///     output pipe ─▶ reading Thread: one read() per request
///        ▼
///     the stream's next(): a request, resumed with the next piece.
///
/// Nothing runs until the stream is first iterated. Nothing is read from
/// the output pipe that was not asked for, so a slow consumer fills the
/// output pipe, which stops the pipeline, which stops reading the input
/// pipe, which suspends the feeder.
///
/// No write ever meets a pipe without a reader (no SIGPIPE, whatever the
/// process does with that signal): the input pipe's read end is closed only
/// once the pipeline has returned *and* the write channel's cleanup has run;
/// the output pipe's read end only once the pipeline has returned.
///
/// Ending early: when the stream is dropped before its end, or the task
/// iterating it is cancelled, the pipeline is cancelled and the feeder
/// stopped; the threads then end on their own and close what is left.
///
/// Who owns what: `state` (behind a lock) holds the first failure, the
/// pending request, the feeder task and the closing flags; the write channel
/// is only used by the feeder and by ``stop()``; the reading buffer belongs
/// to the reading thread.
final class PipeStream: @unchecked Sendable {
    /// The most bytes one piece of output holds: one read() of the output
    /// pipe, which holds at most 64 KiB anyway unless enlarged.
    static let pieceSize = 1 << 20
    /// How errors name the stream.
    static let name = "(stream)"

    private struct State {
        var started = false
        var finished = false       // the stream has returned its end or thrown
        var stopped = false        // stop() was called
        var failure: (any Error)?
        var request: CheckedContinuation<Data?, any Error>?
        var feeder: Task<Void, Never>?
        var pipelineDone = false
        var writeEndClosed = false
        var inputReadClosed = false
    }

    private let makePipeline: @Sendable (_ input: Int32, _ output: Int32) -> any BlockingPipeline
    private let feed: @Sendable (PipeStream) async -> Void
    private let state = Locked(State())
    private let requests = DispatchSemaphore(value: 0)
    private let pipelineRunning = DispatchGroup()
    private let writeQueue = DispatchQueue(label: "weir.stream.write")
    /// What start() makes, set once before any thread or task that uses it
    /// exists; behind a lock all the same, as stop() may come from any thread.
    private struct Parts {
        var pipeline: any BlockingPipeline
        var writeChannel: DispatchIO
        var inputRead: Int32
        var outputRead: Int32
    }
    private let parts = Locked<Parts?>(nil)
    private var pipeline: (any BlockingPipeline)? { parts.withLock { $0?.pipeline } }
    private var writeChannel: DispatchIO? { parts.withLock { $0?.writeChannel } }
    private var inputRead: Int32 { parts.withLock { $0?.inputRead ?? -1 } }
    private var outputRead: Int32 { parts.withLock { $0?.outputRead ?? -1 } }

    /// - Parameters:
    ///   - chunks: the input.
    ///   - makePipeline: the pipeline reading the first descriptor and
    ///     writing the second.
    init<Chunks: AsyncSequence & Sendable>(
        chunks: Chunks,
        makePipeline: @escaping @Sendable (_ input: Int32, _ output: Int32) -> any BlockingPipeline
    ) where Chunks.Element: DataProtocol & Sendable {
        self.makePipeline = makePipeline
        self.feed = { stream in
            do {
                for try await chunk in chunks {
                    if Task.isCancelled { break }
                    let data = Self.dispatchData(chunk)
                    if data.isEmpty { continue }
                    guard await stream.write(data) else { break }
                }
            } catch {
                stream.fail(error)
            }
            stream.closeWriteEnd()
        }
    }

    /// The stream of output pieces; dropping it early cancels the run.
    func makeStream() -> AsyncThrowingStream<Data, any Error> {
        let owner = Owner(self)
        return AsyncThrowingStream(unfolding: {
            try await owner.stream.next()
        })
    }

    /// Stops everything, as when the consumer goes away: cancels the
    /// pipeline, stops the feeder and lets the reading thread end.
    func stop() {
        let (feeder, running) = state.withLock { state -> (Task<Void, Never>?, Bool) in
            state.stopped = true
            return (state.feeder, state.started && !state.pipelineDone)
        }
        feeder?.cancel()
        writeChannel?.close(flags: .stop)
        if running { pipeline?.cancel() }
        requests.signal()  // a reading thread waiting for a request ends
    }

    // MARK: The consumer's side

    /// The next piece of output, nil at the end; throws the run's failure.
    private func next() async throws -> Data? {
        let done = state.withLock { $0.finished }
        if done { return nil }
        try start()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                let stopped = state.withLock { state -> Bool in
                    if state.stopped { return true }
                    state.request = continuation
                    return false
                }
                if stopped {
                    continuation.resume(throwing: WeirError(.cancelled, path: Self.name, operation: "read", reason: "cancelled"))
                } else {
                    requests.signal()
                }
            }
        } onCancel: {
            self.pipeline?.cancel()
        }
    }

    /// Creates the pipes, the pipeline, the write channel, the threads and
    /// the feeder, once.
    private func start() throws {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started
        }
        guard first else { return }
        var input: [Int32] = [-1, -1]
        var output: [Int32] = [-1, -1]
        guard Self.makePipe(&input) else {
            state.withLock { $0.finished = true }
            throw WeirError.system(errno, path: Self.name, operation: "pipe")
        }
        guard Self.makePipe(&output) else {
            let error = errno
            Glibc.close(input[0])
            Glibc.close(input[1])
            state.withLock { $0.finished = true }
            throw WeirError.system(error, path: Self.name, operation: "pipe")
        }
        let inputWrite = input[1]
        let outputWrite = output[1]
        let pipeline = makePipeline(input[0], output[1])
        let writeChannel = DispatchIO(type: .stream, fileDescriptor: inputWrite, queue: writeQueue) { [self] _ in
            Glibc.close(inputWrite)
            state.withLock { $0.writeEndClosed = true }
            closeInputReadIfDone()
        }
        parts.withLock {
            $0 = Parts(pipeline: pipeline, writeChannel: writeChannel, inputRead: input[0], outputRead: output[0])
        }

        pipelineRunning.enter()
        startThread(name: "weir.stream.run") { [self] in
            let outcome: WeirError?
            do throws(WeirError) {
                _ = try pipeline.run()
                outcome = nil
            } catch {
                outcome = error
            }
            Glibc.close(outputWrite)  // the reading thread sees the end
            if let outcome { fail(outcome) }
            // Success means the feeder closed its end; a failure must stop
            // it, or its write would wait forever on a full pipe.
            writeChannel.close(flags: .stop)
            state.withLock { $0.pipelineDone = true }
            closeInputReadIfDone()
            pipelineRunning.leave()
        }
        startThread(name: "weir.stream.out") { [self] in
            readLoop()
        }
        let feed = self.feed
        let feeder = Task.detached { [self] in await feed(self) }
        let stopped = state.withLock { state -> Bool in
            state.feeder = feeder
            return state.stopped
        }
        if stopped { feeder.cancel() }
    }

    /// The reading thread: waits for a request, reads one piece, answers it.
    private func readLoop() {
        let outputRead = self.outputRead
        var buffer = [UInt8](repeating: 0, count: Self.pieceSize)
        while true {
            requests.wait()
            guard let continuation = state.withLock({ state -> CheckedContinuation<Data?, any Error>? in
                defer { state.request = nil }
                return state.request
            }) else {
                if state.withLock({ $0.stopped }) { break }
                continue
            }
            var count: Int
            repeat {
                count = buffer.withUnsafeMutableBytes { Glibc.read(outputRead, $0.baseAddress, $0.count) }
            } while count < 0 && errno == EINTR
            if count > 0 {
                continuation.resume(returning: Data(buffer[0..<count]))
                continue
            }
            if count < 0 {
                let error = WeirError.system(errno, path: Self.name, operation: "read")
                fail(error)
                pipeline?.cancel()
            }
            // The end: the pipeline has closed its end of the output pipe.
            pipelineRunning.wait()
            let failure = state.withLock { state -> (any Error)? in
                state.finished = true
                return state.failure
            }
            if let failure {
                continuation.resume(throwing: failure)
            } else {
                continuation.resume(returning: nil)
            }
            break
        }
        pipelineRunning.wait()
        Glibc.close(outputRead)
    }

    // MARK: The feeder's side

    /// Writes `data` to the input pipe; false when the channel was stopped
    /// or failed (the pipeline has ended or the stream was dropped).
    private func write(_ data: DispatchData) async -> Bool {
        guard let writeChannel else { return false }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            writeChannel.write(offset: 0, data: data, queue: writeQueue) { done, _, error in
                if done { continuation.resume(returning: error == 0) }
            }
        }
    }

    /// Ends the input: the pipeline sees the end of its input once the
    /// writes already queued are done.
    private func closeWriteEnd() {
        writeChannel?.close()
    }

    /// Records the first failure (the one the stream throws) and cancels the
    /// pipeline.
    private func fail(_ error: any Error) {
        state.withLock { state in
            if state.failure == nil { state.failure = error }
        }
        pipeline?.cancel()
    }

    /// Closes the input pipe's read end once nobody can write to it any more.
    private func closeInputReadIfDone() {
        let close = state.withLock { state -> Bool in
            guard state.pipelineDone, state.writeEndClosed, !state.inputReadClosed else { return false }
            state.inputReadClosed = true
            return true
        }
        if close { Glibc.close(inputRead) }
    }

    private func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            Thread.current.name = name  // from the thread itself, so that Linux names it too (15 bytes at most)
            body()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// A pipe whose ends are not inherited by child processes.
    private static func makePipe(_ ends: inout [Int32]) -> Bool {
        guard pipe(&ends) == 0 else { return false }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return true
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
        let stream: PipeStream
        init(_ stream: PipeStream) { self.stream = stream }
        deinit { stream.stop() }
    }
}

extension PipeStream {
    /// A sequence of one chunk.
    static func single(_ data: Data) -> AsyncStream<Data> {
        AsyncStream { continuation in
            continuation.yield(data)
            continuation.finish()
        }
    }

    /// Every piece of `stream`, joined; its failure as a ``WeirError``.
    static func collect(_ stream: AsyncThrowingStream<Data, any Error>) async throws(WeirError) -> Data {
        var result = Data()
        do {
            for try await piece in stream { result.append(piece) }
        } catch let error as WeirError {
            throw error
        } catch {
            throw WeirError(.cancelled, path: name, operation: "read", reason: "\(error)")
        }
        return result
    }
}
