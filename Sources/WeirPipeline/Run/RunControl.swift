import Dispatch
import WeirSystem

/// The bookkeeping every pipeline run shares: the first failure, the
/// in-flight slots, and the group of work still under way.
///
/// - `slots` counts free in-flight places. It is created at 0 and signalled
///   `limit` times, so its "initial value" is 0 and libdispatch never finds
///   it deallocated "while in use", even when a failure leaves places taken.
///   It is only ever waited on by the pipeline's dedicated threads.
/// - `activity` has one entry for the reading thread and one for every
///   piece from its ticket (``RunTicket``: a slot taken, or a piece made) to
///   its write (or its drop after a failure); `run()` waits for it to empty.
/// - A slot and an activity entry are taken and given back only through a
///   ``RunTicket``, whose one `release()` frees both.
/// - `stopHandlers` run once, on the thread that reports the first failure:
///   they close the channels with `.stop` so that blocked reads and writes end.
/// - A piece that fails on a worker cuts the run there instead
///   (``fail(_:atPiece:)``): nothing more is read or started, the pieces
///   after it are dropped, the ones before it are still made and written —
///   as zstd writes what it decoded before the damage — and the run fails
///   with its error once they are out (``closeChannels(reader:writer:cleanup:)``).
package final class RunControl: Sendable {
    private struct State {
        var failure: WeirError?
        /// The lowest piece that failed on a worker, and its error.
        var cut: (piece: Int, error: WeirError)?
        var stops: [@Sendable () -> Void] = []
        var cuts: [@Sendable (_ piece: Int) -> Void] = []
    }

    package let slots = DispatchSemaphore(value: 0)
    package let activity = DispatchGroup()
    private let state = Locked(State())

    package init(slots limit: Int) {
        for _ in 0..<max(1, limit) { slots.signal() }
    }

    /// Registers work to do when the run fails (stop channels, wake threads).
    func onStop(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.stops.append(body) }
    }

    /// Registers what a cut does (stop reading, drop the pieces after it).
    func onCut(_ body: @escaping @Sendable (_ piece: Int) -> Void) {
        state.withLock { $0.cuts.append(body) }
    }

    /// Records `error` if it is the first, then runs the stop handlers once.
    /// After a cut, a cancellation (the reading thread stopped by it) is
    /// recorded as the cut's error.
    package func fail(_ error: WeirError) {
        let stops: [@Sendable () -> Void] = state.withLock { state in
            guard state.failure == nil else { return [] }
            state.failure = error.kind == .cancelled ? state.cut?.error ?? error : error
            state.cuts.removeAll()
            defer { state.stops.removeAll() }
            return state.stops
        }
        for stop in stops { stop() }
    }

    /// Output piece `piece` could not be made: cuts the run before it (see
    /// the type's comment). A later cut at a lower piece moves it down.
    func fail(_ error: WeirError, atPiece piece: Int) {
        let cuts: [@Sendable (Int) -> Void] = state.withLock { state in
            guard state.failure == nil, piece < state.cut?.piece ?? .max else { return [] }
            state.cut = (piece, error)
            return state.cuts
        }
        for cut in cuts { cut(piece) }
    }

    /// Whether piece `piece` is not to be made or written: the run failed,
    /// or was cut before it.
    func drops(piece: Int) -> Bool {
        state.withLock { $0.failure != nil || piece > $0.cut?.piece ?? .max }
    }

    /// Registers the stop every pipeline needs: on the first failure, stop
    /// both channels (reads and writes in progress end with ECANCELED), drop
    /// the pieces the writer holds, then run `wake` to unblock the pipeline's
    /// own thread (signal a slot, cancel a budget).
    func stopOnFailure(reader: ChunkReader, writer: (any PieceSink)?, wake: @escaping @Sendable () -> Void) {
        onStop {
            reader.close(stop: true)
            writer?.close(stop: true)
            writer?.abandon()
            wake()
        }
        // A cut stops the reader and drops what follows the piece; the
        // writer goes on with the pieces before it.
        onCut { piece in
            reader.close(stop: true)
            writer?.abandon(after: piece)
            wake()
        }
    }

    /// Ends a run after `activity` has emptied: closes both channels (the
    /// writer's with `.stop` after a failure), waits until their cleanup
    /// handlers have run — so the descriptors' file status flags are back —
    /// and throws the first failure, if any. After a failure the wait is
    /// bounded by ``stoppedCleanupWait``: a read or write blocked in the kernel
    /// on a silent peer cannot be stopped, and ends only when that peer writes,
    /// reads or closes; the run does not wait for it.
    ///
    /// The stop handlers are dropped on the way out: they hold the reader,
    /// the writer and closures that hold this control (the writer's
    /// completions, a `wake` that signals `slots`), a cycle that otherwise
    /// kept every successful run's channels, queues and control alive for
    /// the life of the process (LeakSanitizer, scripts/fuzz).
    func closeChannels(reader: ChunkReader, writer: (any PieceSink)?, cleanup: DispatchGroup) throws(WeirError) {
        defer { state.withLock { $0.stops.removeAll(); $0.cuts.removeAll() } }
        reader.close(stop: isFailed)
        writer?.close(stop: isFailed)
        if isFailed {
            _ = cleanup.wait(timeout: .now() + Self.stoppedCleanupWait)
        } else {
            cleanup.wait()
        }
        if let failure { throw failure }
    }

    /// How long a failed run waits for its channels' cleanup.
    static let stoppedCleanupWait = DispatchTimeInterval.milliseconds(250)

    /// The first failure, if any; after a cut, the cut's error.
    package var failure: WeirError? { state.withLock { $0.failure ?? $0.cut?.error } }

    /// Whether the run has failed.
    var isFailed: Bool { failure != nil }

    /// Starts `body` on a new thread of its own (not a GCD worker), so that it
    /// may block on semaphores; `activity` holds an entry until it returns.
    func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
        activity.enter()
        DedicatedThread.start(name: name) { [activity] in
            body()
            activity.leave()
        }
    }
}
