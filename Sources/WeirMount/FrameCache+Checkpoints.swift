import WeirFormats
import WeirSeekable
import WeirSystem

/// The reads of one large frame through its checkpoints (`weir mount` of a
/// `.tar.zst` that `zstd` wrote; docs/mount.md, "One frame from `zstd`"):
/// the cursors the cache keeps in the frame, and how a read picks one.
extension FrameCache {
    /// The decoders' places in the frame of ``checkpoints``
    /// (``readThroughCheckpoints(_:from:to:into:)``), each taken by one
    /// read at a time, at most ``maximumCursors``: those no read holds, and
    /// where the reads that hold the others will leave them (content
    /// offsets in the frame, by read).
    struct Cursors {
        var idle: [(cursor: FrameCursor, lastUse: UInt64)] = []
        var busy: [Int: Int] = [:]
        var nextRead = 0
        var count: Int { idle.count + busy.count }
    }

    /// How a read of the checkpointed frame gets a cursor.
    enum CursorChoice {
        /// The idle cursor at this index: it holds the read's start, or
        /// reaches it decoding less than a restore would.
        case idle(Int)
        /// A new cursor, restored from the checkpoint.
        case new
        /// The idle cursor at this index, least recently used, restored
        /// from the checkpoint in its place.
        case replace(Int)
        /// A cursor a read holds now will reach the start: wait for it; or
        /// no room for a cursor.
        case wait
    }

    /// The cursor for a read from `from` (a content offset in the frame),
    /// whose checkpoint is at `start`.
    private func choose(from: Int, start: Int, _ state: State) -> CursorChoice {
        let cursors = state.cursors
        // One that holds `from` in its ring, or is between the checkpoint and `from`: the least to decode.
        let reaching = cursors.idle.indices.filter { index in
            let cursor = cursors.idle[index].cursor
            return cursor.validFrom <= from && (from < cursor.produced || cursor.produced >= start)
        }
        if let best = reaching.max(by: { cursors.idle[$0].cursor.produced < cursors.idle[$1].cursor.produced }) {
            return .idle(best)
        }
        // The kernel's read-ahead asks the next pieces of a file on other threads at once: they follow the
        // read before them rather than each restore a cursor.
        if cursors.busy.values.contains(where: { $0 >= start && $0 <= from }) { return .wait }
        // The first cursor always: the checkpoints' memory is held for good, and a read never waits for itself.
        if cursors.count == 0 || cursors.count < Self.maximumCursors && fits(cursorNeed, state) { return .new }
        if let oldest = cursors.idle.indices.min(by: { cursors.idle[$0].lastUse < cursors.idle[$1].lastUse }) {
            return .replace(oldest)
        }
        return .wait
    }

    /// Copies the frame's content `from ..< to` (offsets in the reader's
    /// one frame) into `target` through a cursor: one that is there or
    /// before it (a reader going on), else one restored from the last
    /// checkpoint before `from`, which decodes at most an interval before
    /// the read's bytes. Waits for a cursor or for its room.
    ///
    /// - Throws: the decoder's errors of a damaged block (the cursor is
    ///   dropped: the next read restores one, and fails there again); an
    ///   index mismatch when the frame ends before `to`; the archive's
    ///   change, checked after the decode.
    func readThroughCheckpoints(_ checkpoints: FrameCheckpoints, from: Int, to: Int,
                                        into target: UnsafeMutableRawBufferPointer) throws(WeirError) {
        let checkpoint = checkpoints.checkpoint(before: from)
        let (taken, read) = state.withLock(when: {
            if case .wait = choose(from: from, start: checkpoint.produced, $0) { return false }
            return true
        }) { state -> (FrameCursor?, Int) in
            let read = state.cursors.nextRead
            let choice = choose(from: from, start: checkpoint.produced, state)
            state.cursors.nextRead += 1
            state.cursors.busy[read] = to
            switch choice {
            case .idle(let index):
                return (state.cursors.idle.remove(at: index).cursor, read)
            case .replace(let index):
                // Its room passes to the cursor restored in its place.
                state.cursors.idle.remove(at: index)
                return (nil, read)
            case .new, .wait:
                state.take(cursorNeed)
                return (nil, read)
            }
        }
        let cursor: FrameCursor
        do throws(WeirError) {
            if let taken {
                cursor = taken
            } else {
                cursor = try FrameCursor.restore(checkpoint, digests: checkpoints.digests, file: reader.file,
                                                 end: checkpoints.frame.upperBound) {
                    buffer throws(WeirError) in try checkpoints.fill(checkpoint, into: buffer)
                }
            }
            var at = from
            let before = cursor.produced
            defer { state.withLock { $0.decodedByCursors += cursor.produced - before } }
            while at < to {
                if at >= cursor.validFrom, at < cursor.produced {
                    let count = min(to, cursor.produced) - at
                    UnsafeMutableRawBufferPointer(rebasing: target[at - from ..< at - from + count])
                        .copyMemory(from: cursor.content(from: at, count: count))
                    at += count
                } else if try cursor.next() == nil {
                    throw reader.tableMismatch(reader.frames[0], listed: reader.count, decoded: cursor.produced)
                }
            }
            try decoded()
        } catch {
            state.withLock(broadcast: true) { state in
                state.cursors.busy[read] = nil
                state.used -= cursorNeed
            }
            throw error
        }
        state.withLock(broadcast: true) { state in
            state.cursors.busy[read] = nil
            state.clock += 1
            state.cursors.idle.append((cursor, state.clock))
        }
    }
}
