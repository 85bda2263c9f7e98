import Dispatch
import Glibc

/// One read of a ``ChunkReader`` in progress: the pieces that arrive for it,
/// then its end, handed to the one thread that waits for it.
///
/// Threads: whoever serves the read (the channel's queue, the mapping, a
/// ``ChunkFeed`` under its lock) appends and finishes it; the one thread that
/// waits takes the pieces once it has ended. The state is a
/// ``ConditionLock``'s all the same (a few uncontended locks per chunk), so
/// the type is plainly Sendable, and the end wakes the waiter through it.
package final class PendingRead: Sendable {
    private struct State {
        var pieces: [DispatchData] = []
        var error: Int32 = 0
        var failure: WeirError?
        var count = 0
        var ended = false
    }

    private let state = ConditionLock(State())
    /// The bytes asked for; fewer means the input ended.
    let requested: Int
    private let path: String
    private let stopped: Locked<Bool>

    init(requested: Int, path: String, stopped: Locked<Bool>) {
        self.requested = requested
        self.path = path
        self.stopped = stopped
    }

    /// Adds bytes that arrived for this read; by its server, before `finish`.
    func append(_ data: DispatchData) {
        guard data.count > 0 else { return }
        state.withLock { state in
            state.pieces.append(data)
            state.count += data.count
        }
    }

    /// Ends the read, with an errno value or a failure if it failed; by its
    /// server, once.
    func finish(error: Int32 = 0, failure: WeirError? = nil) {
        state.withLock(broadcast: true) { state in
            state.error = error
            state.failure = failure
            state.ended = true
        }
    }

    /// Blocks until the read ends, or until the reader is stopped; returns
    /// the bytes and whether the input ended. Call once, from a dedicated
    /// thread (never a GCD worker).
    package func wait() throws(WeirError) -> (data: DispatchData, endOfInput: Bool) {
        let cancelled = WeirError.cancelled(path: path, operation: .read)
        var ended: State?
        repeat {
            ended = state.withLock(when: { $0.ended }, until: .now() + .milliseconds(50)) { state in
                guard state.ended else { return nil }
                // A channel may keep its handler, and so this read, a while
                // after the read ended: the chunk must not stay here with it.
                defer { state.pieces = [] }
                return state
            }
        } while ended == nil && !stopped.current
        guard let ended else { throw cancelled }
        if let failure = ended.failure { throw failure }
        if ended.error == ECANCELED { throw cancelled }
        if ended.error != 0 {
            throw WeirError.system(ended.error, path: path, operation: .read)
        }
        return (DispatchData.concatenating(ended.pieces), ended.count < requested)
    }
}
