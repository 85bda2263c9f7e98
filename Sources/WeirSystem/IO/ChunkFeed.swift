import Dispatch
import Glibc

/// Bytes handed over in memory — the chunks of an async sequence, or one
/// block of data — that a ``ChunkReader`` reads as a channel reads a pipe,
/// without a kernel pipe or a thread in between.
///
/// Back-pressure: ``offer(_:)`` returns once its bytes are taken in and the
/// buffer is below `limit`, or a read is waiting for more; so at most
/// `max(limit, one read)` plus the last chunk offered are buffered, and a
/// pipeline that stops reading stops its feeder.
///
/// Threads: any; the state is behind one lock. A read is served (its pieces
/// appended) under the lock and finished outside it, and so is a waiting
/// feeder resumed.
package final class ChunkFeed: Sendable {
    private struct State {
        var pieces: [DispatchData] = []
        var buffered = 0
        var ended = false
        var stopped = false
        var read: PendingRead?
        var room: CheckedContinuation<Bool, Never>?
    }

    /// What a change of state lets go on, done outside the lock.
    private struct Wakeups {
        var read: PendingRead?
        var room: CheckedContinuation<Bool, Never>?
        var roomAnswer = true

        func run() {
            read?.finish()
            room?.resume(returning: roomAnswer)
        }
    }

    /// The bytes buffered before a feeder waits (when no read waits).
    let limit: Int
    private let state: Locked<State>

    /// An empty feed that chunks are offered to.
    package init(limit: Int) {
        self.limit = limit
        state = Locked(State())
    }

    /// A feed holding all of `contents`, already ended.
    package init(contents: DispatchData) {
        limit = contents.count
        state = Locked(State(pieces: [contents], buffered: contents.count, ended: true))
    }

    /// Takes `data` in, then waits until there is room for more. Returns
    /// false once the feed has stopped (the run reads no more) or ended.
    package func offer(_ data: DispatchData) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let wakeups = state.withLock { state -> Wakeups in
                guard !state.stopped, !state.ended else {
                    return Wakeups(room: continuation, roomAnswer: false)
                }
                state.pieces.append(data)
                state.buffered += data.count
                state.room = continuation
                return Self.serve(&state, limit: limit)
            }
            wakeups.run()
        }
    }

    /// The input ends here: a read waiting for more gets what is left.
    package func end() {
        state.withLock { state -> Wakeups in
            state.ended = true
            return Self.serve(&state, limit: limit)
        }.run()
    }

    /// Stops the feed: a waiting read fails with ECANCELED, a waiting feeder
    /// is told no, and buffered bytes are dropped.
    func stop() {
        let (read, room) = state.withLock { state in
            state.stopped = true
            state.pieces = []
            state.buffered = 0
            defer { state.read = nil; state.room = nil }
            return (state.read, state.room)
        }
        read?.finish(error: ECANCELED)
        room?.resume(returning: false)
    }

    /// Serves `read` as soon as `read.requested` bytes are buffered or the
    /// input has ended; one read at a time.
    func request(_ read: PendingRead) {
        let stopped = state.withLock { state -> Bool in
            if state.stopped { return true }
            precondition(state.read == nil, "one read at a time")
            state.read = read
            return false
        }
        if stopped {
            read.finish(error: ECANCELED)
            return
        }
        state.withLock { Self.serve(&$0, limit: limit) }.run()
    }

    /// Under the lock: serves the waiting read if it can be, and lets the
    /// waiting feeder go on if there is room.
    private static func serve(_ state: inout State, limit: Int) -> Wakeups {
        var wakeups = Wakeups()
        if let read = state.read, state.buffered >= read.requested || state.ended {
            var wanted = read.requested
            while wanted > 0, !state.pieces.isEmpty {
                let piece = state.pieces.removeFirst()
                if piece.count <= wanted {
                    read.append(piece)
                    wanted -= piece.count
                    state.buffered -= piece.count
                } else {
                    read.append(piece.subdata(in: 0..<wanted))
                    state.pieces.insert(piece.subdata(in: wanted..<piece.count), at: 0)
                    state.buffered -= wanted
                    wanted = 0
                }
            }
            state.read = nil
            wakeups.read = read
        }
        if state.room != nil, state.buffered < limit || state.read != nil {
            wakeups.room = state.room
            state.room = nil
        }
        return wakeups
    }
}
