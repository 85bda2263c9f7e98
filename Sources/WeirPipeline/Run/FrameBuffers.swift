import WeirSystem

/// The output buffers of ``DecompressionPipeline``, in size classes from
/// 1 MiB (``bufferSize(for:)``), each class a ``BufferPool`` of mapped buffers
/// reused without page faults. weir's own 8 MiB frames all use one class;
/// streamed output uses the 1 MiB class.
///
/// Every buffer counts in the ``ByteBudget`` from its mapping to its
/// unmapping, idle or not: a buffer that comes back (from the writer, through
/// libdispatch's asynchronous deallocator) keeps its bytes taken, and the
/// next frame of its class takes it instead of new bytes. So buffers in use
/// plus idle buffers never exceed the budget, and a buffer freed late only
/// delays the next frame. A frame short of room while buffers are idle that
/// it cannot use (another class, or more than the one it takes) unmaps them,
/// so bytes kept for reuse never keep a frame waiting for ever.
///
/// Threads: `take` and `reserve` (which may wait) are called on the reading
/// thread only, the one that adds to `pools` (behind a lock all the same: one
/// uncontended lock per frame, and the type is plainly Sendable); buffers
/// come back on any thread.
final class FrameBuffers: Sendable {
    /// The smallest class: one libdispatch write gather.
    static let smallest = 1 << 20

    /// What ``take(capacity:extra:)`` got.
    enum Taken {
        case buffer(UnsafeMutableRawPointer, BufferPool)
        /// The budget was cancelled (the run failed).
        case cancelled
        /// The buffer could not be mapped; nothing stays taken.
        case outOfMemory
    }

    private let budget: ByteBudget
    /// The bytes the pools have mapped (for tests of the bound).
    let tally = MappedTally()
    /// The pools by buffer size, made as frames need them.
    private let pools = Locked<[Int: BufferPool]>([:])

    init(budget: ByteBudget) { self.budget = budget }

    /// The size of the buffers that hold `capacity` bytes: powers of two
    /// from 1 MiB to 8 MiB, then multiples of ``largeStep``. A frame that
    /// does not declare its size (pzstd's) is given the most its blocks can
    /// hold, a little over 8 MiB for an 8 MiB chunk; the next power of two
    /// would double it past the parallel frame limit, and the frame would
    /// stream on one thread instead of being decoded beside the others.
    static func bufferSize(for capacity: Int) -> Int {
        var size = smallest
        while size < capacity, size < largeStep << 2 { size <<= 1 }
        if size >= capacity { return size }
        return (capacity + largeStep - 1) / largeStep * largeStep
    }

    /// The step between size classes above 8 MiB.
    static let largeStep = 2 << 20

    /// The pool whose buffers hold `capacity` bytes.
    func pool(for capacity: Int) -> BufferPool {
        let size = Self.bufferSize(for: capacity)
        let budget = self.budget
        let tally = self.tally
        return pools.withLock { pools in
            if let pool = pools[size] { return pool }
            let pool = BufferPool(size: size, keep: .max, tally: tally, onIdle: { budget.notify() })
            pools[size] = pool
            return pool
        }
    }

    /// A buffer of at least `capacity` bytes, with `extra` more bytes taken
    /// from the budget (the frame's compressed bytes); waits for room.
    func take(capacity: Int, extra: Int) -> Taken {
        let pool = pool(for: capacity)
        var buffer = pool.takeIdle()
        while true {
            let needed = extra + (buffer == nil ? pool.size : 0)
            switch budget.acquire(needed, unless: { self.anyIdle }) {
            case .taken:
                if let buffer { return .buffer(buffer, pool) }
                guard let mapped = pool.map() else {
                    budget.release(needed)
                    return .outOfMemory
                }
                return .buffer(mapped, pool)
            case .cancelled:
                if let buffer { pool.recycle(buffer) }
                return .cancelled
            case .interrupted:
                // Short of room while buffers are idle: one of this class
                // serves the frame; the others give their bytes back.
                if buffer == nil, let idle = pool.takeIdle() {
                    buffer = idle
                } else {
                    evictIdle()
                }
            }
        }
    }

    /// Takes `bytes` of the budget for memory that is not a buffer (a
    /// streaming decoder's window), unmapping idle buffers when short.
    /// Returns false when the budget was cancelled.
    func reserve(_ bytes: Int) -> Bool {
        while true {
            switch budget.acquire(bytes, unless: { self.anyIdle }) {
            case .taken: return true
            case .cancelled: return false
            case .interrupted: evictIdle()
            }
        }
    }

    /// Whether any class has an idle buffer.
    private var anyIdle: Bool {
        pools.withLock { $0.values.contains { $0.hasIdle } }
    }

    /// Unmaps every idle buffer, giving their bytes back to the budget.
    private func evictIdle() {
        for pool in pools.current.values {
            budget.release(pool.evictIdle())
        }
    }
}
