import DequeModule
import Dispatch
import WeirSystem

/// The pieces of a ring's content sent to the writer and not yet let go
/// (``ParallelFrameDecoder``): the reading thread sends them in order and
/// waits before the ring comes round to one still held; the writer lets
/// them go, in any order, on its own queue.
final class PieceRelease: Sendable {
    /// Where each piece held starts, in the order sent, and those let go
    /// out of order (removed as the front reaches them).
    private struct Held: @unchecked Sendable {  // two collections, only under the lock
        var starts = Deque<Int>()
        var letGo = Set<Int>()
    }

    private let held = Locked(Held())
    private let change = DispatchSemaphore(value: 0)

    /// The piece from content position `start` was sent.
    func sent(_ start: Int) {
        held.withLock { $0.starts.append(start) }
    }

    /// The writer let the piece from `start` go.
    func released(_ start: Int) {
        held.withLock { held in
            held.letGo.insert(start)
            while let first = held.starts.first, held.letGo.remove(first) != nil { held.starts.removeFirst() }
        }
        change.signal()
    }

    /// Waits until no piece held starts before content position `position`.
    ///
    /// - Throws: the run's failure, if it fails meanwhile (a writer that
    ///   failed lets its pieces go, but not at once).
    func wait(until position: Int, control: RunControl) throws(WeirError) {
        while (held.withLock { $0.starts.first ?? Int.max }) < position {
            if let failure = control.failure { throw failure }
            _ = change.wait(timeout: .now() + .milliseconds(50))
        }
    }
}
