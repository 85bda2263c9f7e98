import DequeModule
import WeirFormats
import WeirSystem

/// The blocks of a frame scanned and waiting for phase 1
/// (``ParallelFrameDecoder``), and how many workers take them.
///
/// Taking a block from here is what gives it to one thread: a worker's job
/// takes blocks until none is left, and so does the reading thread when
/// the records it would fill are all taken. At most `width` jobs run, the
/// run's workers (`-T`); a job ends when it finds no block, and the next
/// block pushed starts one again.
final class BlockQueue: Sendable {
    private struct State: @unchecked Sendable {  // records: each leaves, under the lock, to one thread
        var ready = Deque<BlockRecord>()
        var jobs = 0
    }

    private let state = Locked(State())
    private let width: Int

    init(width: Int) {
        self.width = max(1, width)
    }

    /// Queues a scanned block; true when a job should start to take it.
    func push(_ record: BlockRecord) -> Bool {
        state.withLock { state in
            state.ready.append(record)
            guard state.jobs < width else { return false }
            state.jobs += 1
            return true
        }
    }

    /// The next block for a job, or nil: the job then ends (counted here,
    /// under the same lock, so a block pushed after it finds a job to start).
    func takeForJob() -> BlockRecord? {
        state.withLock { state in
            guard let record = state.ready.popFirst() else {
                state.jobs -= 1
                return nil
            }
            return record
        }
    }

    /// The next block for the reading thread, or nil.
    func take() -> BlockRecord? {
        state.withLock { $0.ready.popFirst() }
    }
}
