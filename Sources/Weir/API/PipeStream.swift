import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Runs a pipeline between two pipes so that async code can feed it a
/// sequence of byte chunks and read its output as an `AsyncThrowingStream`,
/// with back-pressure both ways and in bounded memory.
///
/// Data flow:
///
///     chunks (any AsyncSequence) ─▶ feeder Task: hands one chunk at a
///        │  time to the writing Thread and suspends until it is written
///        ▼
///     writing Thread: non-blocking write()s, poll()ing while the pipe is
///        │  full, giving up as soon as the run stops
///        ▼
///     input pipe ─▶ pipeline (CompressionPipeline or
///        │  DecompressionPipeline), run() on a Thread of its own
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
/// No DispatchIO of its own: the pipes' far ends are plain descriptors used
/// by two threads, so that the only channels are the pipeline's, closed and
/// cleaned up before `run()` returns (closing a descriptor that a channel's
/// epoll registration may still name has crashed libdispatch on Linux).
///
/// Who owns what: `state` (behind a lock) holds the first failure, the
/// pending read request and write, the feeder task and the closing flags;
/// the reading buffer belongs to the reading thread, the input pipe's write
/// end to the writing thread.
final class PipeStream: Sendable {
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
        var write: (data: DispatchData, done: CheckedContinuation<Bool, Never>)?
        var inputEnded = false     // the feeder has no more chunks
        var inputReadClosed = false
    }

    private let makePipeline: @Sendable (_ input: Int32, _ output: Int32) -> any BlockingPipeline
    private let feed: @Sendable (PipeStream) async -> Void
    private let state = Locked(State())
    private let requests = DispatchSemaphore(value: 0)
    private let pipelineRunning = DispatchGroup()
    private let writes = DispatchSemaphore(value: 0)
    /// How long the writing thread waits on a full pipe before it looks
    /// again whether the run has stopped.
    static let pollMilliseconds: Int32 = 50
    /// What start() makes, set once before any thread or task that uses it
    /// exists; behind a lock all the same, as stop() may come from any thread.
    private struct Parts {
        var pipeline: any BlockingPipeline
        var inputRead: Int32
        var outputRead: Int32
    }
    private let parts = Locked<Parts?>(nil)
    private var pipeline: (any BlockingPipeline)? { parts.withLock { $0?.pipeline } }
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
        if running { pipeline?.cancel() }
        requests.signal()  // a reading thread waiting for a request ends
        writes.signal()    // so does a writing thread waiting for a chunk
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
                    continuation.resume(throwing: WeirError(.cancelled, path: Self.name, operation: .read, reason: "cancelled"))
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
        guard let input = PipeEnds.make() else {
            state.withLock { $0.finished = true }
            throw WeirError.system(errno, path: Self.name, operation: .pipe)
        }
        guard let output = PipeEnds.make() else {
            let error = errno
            input.close()
            state.withLock { $0.finished = true }
            throw WeirError.system(error, path: Self.name, operation: .pipe)
        }
        let inputWrite = input.write
        let outputWrite = output.write
        let pipeline = makePipeline(input.read, output.write)
        _ = fcntl(inputWrite, F_SETFL, fcntl(inputWrite, F_GETFL) | O_NONBLOCK)
        parts.withLock {
            $0 = Parts(pipeline: pipeline, inputRead: input.read, outputRead: output.read)
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
            state.withLock { $0.pipelineDone = true }
            writes.signal()  // a writing thread stops writing and ends
            closeInputReadIfDone()
            pipelineRunning.leave()
        }
        startThread(name: "weir.stream.in") { [self] in
            writeLoop(fd: inputWrite)
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
            let count = buffer.withUnsafeMutableBytes { Descriptor(outputRead, path: Self.name).readSome(into: $0) }
            if count > 0 {
                continuation.resume(returning: Data(buffer[0..<count]))
                continue
            }
            if count < 0 {
                let error = WeirError.system(errno, path: Self.name, operation: .read)
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

    /// Writes `data` to the input pipe, through the writing thread; false
    /// when the run has stopped (the pipeline ended, or the stream was dropped).
    private func write(_ data: DispatchData) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let open = state.withLock { state -> Bool in
                guard !state.writeEndClosed, !state.stopped, !state.pipelineDone else { return false }
                state.write = (data, continuation)
                return true
            }
            if open { writes.signal() } else { continuation.resume(returning: false) }
        }
    }

    /// Ends the input: the writing thread closes its end once the last
    /// chunk is written, and the pipeline sees the end of its input.
    private func closeWriteEnd() {
        state.withLock { $0.inputEnded = true }
        writes.signal()
    }

    /// The writing thread: writes each chunk the feeder hands over, then
    /// closes the input pipe's write end when the input ends or the run stops.
    private func writeLoop(fd: Int32) {
        while true {
            writes.wait()
            let (next, ended) = state.withLock { state -> ((data: DispatchData, done: CheckedContinuation<Bool, Never>)?, Bool) in
                defer { state.write = nil }
                return (state.write, state.inputEnded || state.stopped || state.pipelineDone)
            }
            if let next {
                let written = writeAll(next.data, to: fd)
                next.done.resume(returning: written)
                if !written { break }
            } else if ended {
                break
            }
        }
        let pending = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            state.writeEndClosed = true
            defer { state.write = nil }
            return state.write?.done
        }
        pending?.resume(returning: false)
        Glibc.close(fd)
        closeInputReadIfDone()
    }

    /// Writes every byte of `data` to the non-blocking `fd`, waiting in
    /// poll() while the pipe is full; false once the run has stopped.
    private func writeAll(_ data: DispatchData, to fd: Int32) -> Bool {
        var ok = true
        data.enumerateBytes { buffer, _, stop in
            var offset = 0
            while offset < buffer.count {
                let rest = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[offset...])
                let count = Descriptor(fd, path: Self.name).writeSome(rest)
                if count > 0 {
                    offset += count
                } else if count < 0 && errno == EAGAIN {
                    if state.withLock({ $0.stopped || $0.pipelineDone }) { ok = false; break }
                    var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&entry, 1, Self.pollMilliseconds)
                } else {
                    ok = false
                    break
                }
            }
            if !ok { stop = true }
        }
        return ok
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
        DedicatedThread.start(name: name, body)
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
            throw WeirError(.cancelled, path: name, operation: .read, reason: "\(error)")
        }
        return result
    }
}
