import DequeModule
import Dispatch
import WeirFormats
import WeirSystem

/// Phase 2 of one frame decoded by blocks (``ParallelFrameDecoder``), off
/// the reading thread: each block is executed as soon as it and every
/// block before it are decoded, by the thread that finished the front
/// block's phase 1 (a worker, or the reading thread), which goes on with
/// the blocks decoded after it, as the one holder of the drain. No thread
/// is woken to execute: the frame's one sequential step runs where the
/// work just was, on whichever core is free. Each whole MiB of content is
/// then hashed (the frame's checksum) on a serial queue ("weir.frame-out")
/// and handed to the writer as DispatchData over the ring, no copy.
///
/// Back-pressure is the ring: a block is executed only when the bytes it
/// will overwrite were let go by the writer (``PieceRelease``); the thread
/// that lets a piece go takes the drain up again. So the pieces on their
/// way out take no slot of the run, and the writer holds at most the
/// ring's lag. A drain never blocks: it stops when the front block is not
/// decoded or the ring has no room.
///
/// Threads: the blocks in order, the records given back, the first
/// failure, which blocks are decoded and who holds the drain are under the
/// lock; the frame's execution state (``BlockFrame``'s phase 2 and ring,
/// the content made, the piece numbers) belongs to the drain's holder, and
/// to the reading thread once ``settle(help:)`` saw the drain let go with
/// nothing left.
final class FrameExecution: @unchecked Sendable {  // see "Threads", above
    /// The size of each piece of output: one libdispatch write gather.
    static let pieceSize = FrameStreamer.outputBufferSize

    private struct Shared: @unchecked Sendable {  // records: each with one thread at a time, as said above
        /// The blocks handed to phase 1 and not yet executed, in order.
        var order = Deque<BlockRecord>()
        /// Those of them decoded.
        var decoded = Set<ObjectIdentifier>()
        /// Records executed, for the reading thread to fill again.
        var free: [BlockRecord] = []
        var failure: WeirError?
        /// A thread holds the drain: a block decoded meanwhile needs no other.
        var draining = false
        /// The free records the reading thread waits for (0: it does not wait).
        var wanted = 0

        /// Nothing left to execute, and nobody executing: the drain's state is still.
        var settled: Bool { (order.isEmpty || failure != nil) && !draining }
        /// Whether the reading thread, waiting for `wanted` free records, may go on.
        var satisfied: Bool { free.count >= wanted || settled }
    }

    private let frame: BlockFrame
    private let session: DecodeSession
    private let out = DispatchQueue(label: "weir.frame-out")
    private let release = PieceRelease()
    private let shared = Locked(Shared())
    /// Signalled when the free records the reading thread waits for are
    /// there (``waitForFree(_:)``), and at a failure.
    private let progress = DispatchSemaphore(value: 0)

    // The drain's holder's.
    private var produced = 0
    private var pieceStart = 0
    private var number: Int

    /// - Parameter sequence: the output number of the frame's first piece.
    init(frame: BlockFrame, session: DecodeSession, sequence: Int) {
        self.frame = frame
        self.session = session
        self.number = sequence
    }

    /// A scanned block, handed to phase 1 after this.
    func append(_ record: BlockRecord) {
        shared.withLock { $0.order.append(record) }
    }

    /// Phase 1 of `record` is done (on any thread): when it is the front
    /// block and nobody holds the drain, this thread executes it and those
    /// decoded after it.
    func decoded(_ record: BlockRecord) {
        let take = shared.withLock { shared -> Bool in
            shared.decoded.insert(ObjectIdentifier(record))
            guard !shared.draining, shared.order.first === record else { return false }
            shared.draining = true
            return true
        }
        if take { drain() }
    }

    /// A piece let go (on the writer's side): the ring may have room for a
    /// front block that waited; this thread takes the drain up if nobody
    /// holds it. (A holder that found no room looks again under the lock
    /// after this release, so no room is missed.)
    private func ringFreed() {
        let take = shared.withLock { shared -> Bool in
            guard !shared.draining else { return false }
            shared.draining = true
            return true
        }
        if take { drain() }
    }

    /// A record executed, if any.
    func takeFree() -> BlockRecord? {
        shared.withLock { $0.free.popLast() }
    }

    /// The first block's error, if any.
    var failure: WeirError? {
        shared.withLock { $0.failure }
    }

    /// Waits until `count` records are free (or every block is executed,
    /// or one failed, or the run did): woken once for several blocks, not
    /// for each.
    func waitForFree(_ count: Int) {
        while true {
            let done = shared.withLock { shared -> Bool in
                shared.wanted = count
                if shared.satisfied { shared.wanted = 0 }
                return shared.wanted == 0
            }
            if done || session.control.failure != nil { return }
            _ = progress.wait(timeout: .now() + .milliseconds(50))
        }
    }

    /// Executes the blocks at the front while they are decoded and the
    /// ring has room, holding the drain; lets it go when it stops.
    private func drain() {
        while true {
            // The block and its wide copies land `ringSize` bytes after content the
            // writer may still hold: it waits for that to be let go (which drains again).
            let reach = produced + frame.blockMaximumSize + BlockFrame.wildCopy - frame.ringSize
            let stopped = session.control.failure != nil
            let (next, wake) = shared.withLock { shared -> (BlockRecord?, Bool) in
                // The room is read under the lock, after any release whose drain found it held.
                guard !stopped, shared.failure == nil, let first = shared.order.first,
                      shared.decoded.contains(ObjectIdentifier(first)), release.isReleased(before: reach) else {
                    shared.draining = false
                    return (nil, Self.wakes(&shared))
                }
                return (first, false)
            }
            if wake { progress.signal() }
            guard let record = next else { return }
            do throws(WeirError) {
                let content = try frame.execute(record)
                produced += content.count
                session.tally.consumed?(record.filled)
                while produced - pieceStart >= Self.pieceSize { try send(pieceStart + Self.pieceSize, hashed: false) }
                let wake = shared.withLock { shared -> Bool in
                    shared.order.removeFirst()
                    shared.decoded.remove(ObjectIdentifier(record))
                    shared.free.append(record)
                    return Self.wakes(&shared)
                }
                if wake { progress.signal() }
            } catch {
                shared.withLock { shared in
                    if shared.failure == nil { shared.failure = error }
                    shared.draining = false
                }
                progress.signal()
                return
            }
        }
    }

    /// Whether the reading thread waits for what it now has (and no longer waits).
    private static func wakes(_ shared: inout Shared) -> Bool {
        guard shared.wanted > 0, shared.satisfied else { return false }
        shared.wanted = 0
        return true
    }

    /// Sends the content from `pieceStart` to `end` as the next piece: on
    /// the "weir.frame-out" queue, in order, hashed (unless `hashed`) and
    /// handed to the writer as the ring's bytes. Pieces are whole MiB of
    /// the frame's content, as libzstd's streamed frames' buffers: a frame
    /// that fails writes what it would.
    private func send(_ end: Int, hashed: Bool) throws(WeirError) {
        guard end > pieceStart else { return }
        try session.input.checkUnchanged()
        let (start, piece, frame) = (pieceStart, number, self.frame)
        pieceStart = end
        number += 1
        release.sent(start)
        let ticket = session.control.ticket()
        out.async {
            let content = frame.content(from: start, count: end - start)
            if !hashed { frame.hash(content) }
            // The frame (its ring) lives until the writer lets the bytes go.
            let data = DispatchData(bytesNoCopy: content, deallocator: .custom(nil, {
                self.release.released(start)
                self.ringFreed()
            }))
            self.session.run.submit(piece, data, ticket: ticket)
        }
    }

    /// Waits until every block appended is executed, or one failed, the
    /// drain let go, and the pieces are on their way to the writer (`help`
    /// decodes a block no worker took yet, if any, rather than wait).
    ///
    /// - Throws: the first block's error; the run's failure.
    func settle(help: () -> Bool) throws(WeirError) {
        while !(shared.withLock { $0.settled }) {
            if let failure = session.control.failure { throw failure }
            if !help() { waitForFree(Int.max) }
        }
        out.sync {}
        if let failure { throw failure }
    }

    /// Every block is appended: waits for them to be executed (`help`
    /// decodes one, if any is left, rather than wait), checks that the
    /// frame is `complete` (its last block and checksum in) and its end,
    /// and sends the last piece.
    ///
    /// - Returns: the output number after the frame's last piece.
    /// - Throws: a block's error, the frame's (content size, checksum).
    func finish(checksum: [UInt8], help: () -> Bool, complete: () -> Bool) throws(WeirError) -> Int {
        try settle(help: help)
        guard complete() else {
            throw WeirError.corrupt(path: session.path, operation: .decompress, "the frame ends before its last block")
        }
        frame.hash(frame.content(from: pieceStart, count: produced - pieceStart))
        try checksum.withUnsafeBytes { bytes in
            Result { () throws(WeirError) in try frame.end(checksum: bytes) }
        }.get()
        try send(produced, hashed: true)
        return number
    }

    /// Content bytes executed (read once settled).
    var contentSize: Int { produced }
}
