import Dispatch
import Glibc

/// One read of a ``ChunkReader`` in progress: the pieces that arrive for it,
/// then its end, handed to the one thread that waits for it.
///
/// Threads: whoever serves the read (the channel's queue, the mapping, a
/// ``ChunkFeed`` under its lock) owns it until ``finish(error:failure:)``
/// signals `done`; from then on the waiting thread does.
/// `@unchecked`: ownership passes from the server to the waiter through `done`.
final class PendingRead: @unchecked Sendable {
    private var pieces: [DispatchData] = []
    private var error: Int32 = 0
    private var failure: WeirError?
    /// The bytes that have arrived so far.
    private(set) var count = 0
    /// Signalled when the read ends.
    private let done = DispatchSemaphore(value: 0)
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
        pieces.append(data)
        count += data.count
    }

    /// Ends the read, with an errno value or a failure if it failed; by its
    /// server, once.
    func finish(error: Int32 = 0, failure: WeirError? = nil) {
        self.error = error
        self.failure = failure
        done.signal()
    }

    /// Blocks until the read ends, or until the reader is stopped; returns
    /// the bytes and whether the input ended. Call once, from a dedicated
    /// thread (never a GCD worker).
    func wait() throws(WeirError) -> (data: DispatchData, endOfInput: Bool) {
        let cancelled = WeirError.cancelled(path: path, operation: .read)
        while done.wait(timeout: .now() + .milliseconds(50)) == .timedOut {
            if stopped.current { throw cancelled }
        }
        if let failure { throw failure }
        if error == ECANCELED { throw cancelled }
        if error != 0 {
            throw WeirError.system(error, path: path, operation: .read)
        }
        // A channel may keep its handler, and so this read, a while after
        // the read ended: the chunk must not stay here with it.
        let data = DispatchData.concatenating(pieces)
        pieces = []
        return (data, count < requested)
    }
}
