import Dispatch
import WeirSystem

/// Chooses each chunk's compression level under `--adapt`, when the chunk
/// is handed to the workers, from how busy the workers and the writer were
/// since the last choice. Frames stay independent: a level is a frame's
/// own, set on the worker's context before the frame starts.
///
/// Three things bound a run: the input, the workers (CPU) and the output.
/// Only the workers' speed depends on the level, so:
/// - workers busy (at least ``busyShare`` of the time, every worker) and
///   the writer mostly idle: the CPU is the bottleneck → one level lower;
/// - workers idle (less than ``idleShare``): frames wait for the output
///   (every slot holds a frame the writer has not written, so no chunk can
///   be read) or chunks wait for the input; the CPU has time to spare →
///   one level higher;
/// - otherwise (both busy: balanced; or in between) the level stays.
/// A measure lasts at least ``shortestWindow``. A change waits until the
/// first chunk at the previous new level has been compressed: before that,
/// what is measured is still the old level (a chunk takes a slot, so
/// `threads + 1` chunks are always in flight), and changing on it
/// overshoots; for the same reason nothing changes before the first chunk
/// is done (the workers were being started). Higher is taken only on two
/// measures in a row: raising past what the CPU keeps up with costs more
/// than staying a little low. Levels go one step at a time (two down on
/// a plain signal), skip 0 (as zstd's), within the range asked for.
///
/// The writer's share is the time at least one write was in flight in the
/// output channel (`OrderedWriter`'s DispatchIO completions), not the
/// frames waiting for an earlier one to be compressed.
///
/// Threads: every method may be called from any thread (the reading thread
/// chooses, workers and the writer's queue report); the state is behind
/// one lock, held for a few arithmetic operations.
final class LevelGovernor: Sendable {
    /// The share of the workers' time above which the workers are the bottleneck.
    static let busyShare = 0.9
    /// The share of the workers' time below which they wait for the input or output.
    static let idleShare = 0.8
    /// The writer's share above which the output is busy too (no lower level).
    static let writerBusyShare = 0.5
    /// Workers busy at least this share and the writer below
    /// ``writerIdleShare``: two levels lower at once.
    static let saturatedShare = 0.97
    /// The writer's share below which the output waits for nothing.
    static let writerIdleShare = 0.05
    /// The shortest measure a choice is made on, in nanoseconds: a consumer
    /// that drains in bursts (`pv -L`) leaves short windows of a chunk or
    /// two where the workers look busy and the writer idle, between longer
    /// ones where nothing moves; the choice must see both, so a measure
    /// spans more than one of `pv -L`'s periods, as zstd's --adapt does
    /// (bench/results/2026-11-27-comment-numbers.md, "--adapt").
    static let shortestWindow: UInt64 = 150_000_000

    private struct State {
        var level: Int
        var lowest: Int
        var highest: Int
        var busyWorkers = 0
        var writing = false
        var last: UInt64
        var windowStart: UInt64
        var workerTime = 0.0
        var writerTime = 0.0
        /// The chunk whose end allows the next choice: the first chunk at
        /// the last new level, or at the start any chunk (before one is
        /// compressed, the workers were being started, not waiting).
        var awaited: Int? = 0
        /// The last measure asked for a higher level (not yet taken).
        var raiseAsked = false
    }

    let range: ClosedRange<Int>
    private let workers: Int
    private let started: UInt64
    private let clock: @Sendable () -> UInt64
    private let state: Locked<State>
    private let onChange: @Sendable (LevelChange) -> Void

    /// - Parameters:
    ///   - level: the first chunk's level, put in `range`.
    ///   - range: the levels allowed.
    ///   - workers: the run's workers.
    ///   - clock: nanoseconds (tests give their own).
    ///   - onChange: called on the choosing thread with each change.
    init(level: Int, range: ClosedRange<Int>, workers: Int,
         clock: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds },
         onChange: @escaping @Sendable (LevelChange) -> Void = { _ in }) {
        let first = Self.step(min(max(level, range.lowerBound), range.upperBound), by: 0, in: range)
        self.range = range
        self.workers = max(1, workers)
        self.clock = clock
        self.onChange = onChange
        let now = clock()
        started = now
        state = Locked(State(level: first, lowest: first, highest: first, last: now, windowStart: now))
    }

    /// `level` moved by `delta` (-2…1) within `range`, skipping 0 as
    /// zstd does (level 0 means the default level to libzstd).
    static func step(_ level: Int, by delta: Int, in range: ClosedRange<Int>) -> Int {
        let next = min(max(level + delta, range.lowerBound), range.upperBound)
        guard next == 0 else { return next }
        let away = delta < 0 ? -1 : 1
        if range.contains(away) { return away }
        return range.contains(-away) ? -away : next
    }

    /// The step the shares since the last choice call for: -2, -1, 0 or 1.
    static func decision(workerShare: Double, writerShare: Double) -> Int {
        if workerShare < idleShare { return 1 }
        if workerShare >= saturatedShare && writerShare < writerIdleShare { return -2 }
        if workerShare >= busyShare && writerShare < writerBusyShare { return -1 }
        return 0
    }

    /// On the reading thread: the level of chunk `index`, which starts at
    /// input `offset`; may change it from the last chunk's.
    func level(forChunk index: Int, offset: Int) -> Int {
        let now = clock()
        let change: LevelChange? = state.withLock { state in
            advance(&state, to: now)
            let window = now - state.windowStart
            guard window >= Self.shortestWindow else { return nil }
            let workerShare = state.workerTime / (Double(window) * Double(workers))
            let writerShare = state.writerTime / Double(window)
            let delta = Self.decision(workerShare: workerShare, writerShare: writerShare)
            // A change waits for the last one's effect (the measure goes on).
            if delta != 0 && state.awaited != nil { return nil }
            state.windowStart = now
            state.workerTime = 0
            state.writerTime = 0
            // Higher only on a second measure in a row that asks for it.
            let confirmed = delta <= 0 || state.raiseAsked
            state.raiseAsked = delta > 0 && !confirmed
            let next = Self.step(state.level, by: confirmed ? delta : 0, in: range)
            guard next != state.level else { return nil }
            defer { state.level = next }
            state.awaited = index
            state.lowest = min(state.lowest, next)
            state.highest = max(state.highest, next)
            return LevelChange(from: state.level, to: next, inputOffset: offset,
                               seconds: Double(now - started) / 1e9)
        }
        if let change { onChange(change) }
        return state.withLock { $0.level }
    }

    /// On a worker: it starts compressing a chunk.
    func workerStarted() {
        let now = clock()
        state.withLock { state in
            advance(&state, to: now)
            state.busyWorkers += 1
        }
    }

    /// On a worker: it is done with chunk `index`. The measure restarts
    /// when that chunk was the first at a new level.
    func workerFinished(chunk index: Int) {
        let now = clock()
        state.withLock { state in
            advance(&state, to: now)
            state.busyWorkers -= 1
            if let awaited = state.awaited, index >= awaited {
                state.awaited = nil
                state.windowStart = now
                state.workerTime = 0
                state.writerTime = 0
            }
        }
    }

    /// On the writer's queue: whether writes are in flight in the channel.
    func writerBusy(_ busy: Bool) {
        let now = clock()
        state.withLock { state in
            advance(&state, to: now)
            state.writing = busy
        }
    }

    /// The lowest and highest levels chosen so far.
    var levelsUsed: ClosedRange<Int> {
        state.withLock { $0.lowest...$0.highest }
    }

    /// Adds the time since the last event to the busy totals.
    private func advance(_ state: inout State, to now: UInt64) {
        let elapsed = Double(now &- state.last)
        state.workerTime += elapsed * Double(state.busyWorkers)
        if state.writing { state.writerTime += elapsed }
        state.last = now
    }
}
