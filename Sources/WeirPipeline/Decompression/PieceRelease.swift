import DequeModule
import WeirSystem

/// The pieces of a ring's content sent to the writer and not yet let go
/// (``FrameExecution``): phase 2 sends them in order and does not let the
/// ring come round to one still held; the writer lets them go, in any
/// order, on its own queue.
final class PieceRelease: Sendable {
    /// Where each piece held starts, in the order sent, and those let go
    /// out of order (removed as the front reaches them).
    private struct Held: @unchecked Sendable {  // two collections, only under the lock
        var starts = Deque<Int>()
        var letGo = Set<Int>()
    }

    private let held = Locked(Held())

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
    }

    /// Whether no piece held starts before content position `position`.
    func isReleased(before position: Int) -> Bool {
        (held.withLock { $0.starts.first ?? Int.max }) >= position
    }
}
