import DequeModule
import Dispatch
import WeirFormats
import WeirSystem

/// Phase 2 of one frame decoded by blocks (``ParallelFrameDecoder``), off
/// the reading thread: on a serial queue ("weir.frame-exec"), each block is
/// executed as soon as it and every block before it are decoded, whichever
/// thread decoded it, so the frame's one sequential step runs on whichever
/// core is free. Each whole MiB of content is then hashed (the frame's
/// checksum) on a second serial queue ("weir.frame-out") and handed to the
/// writer as DispatchData over the ring, no copy.
///
/// Back-pressure is the ring: a block is executed only when the bytes it
/// will overwrite were let go by the writer (``PieceRelease``); a piece let
/// go starts the queue again. So the pieces on their way out take no slot
/// of the run, and the writer holds at most the ring's lag.
///
/// Threads: the blocks in order, the records given back, the first failure
/// and which blocks are decoded are under the lock; the frame's execution
/// state (``BlockFrame``'s phase 2 and ring, the content made, the piece
/// numbers) belongs to the queue, and to the reading thread once
/// ``finish(checksum:sequence:)`` has drained it.
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
        /// A drain is queued or running: a block decoded meanwhile needs no other.
        var draining = false
        /// The free records the reading thread waits for (0: it does not wait).
        var wanted = 0

        /// Whether the reading thread, waiting for `wanted` free records, may go on.
        var satisfied: Bool { free.count >= wanted || order.isEmpty || failure != nil }
    }

    private let frame: BlockFrame
    private let session: DecodeSession
    private let queue = DispatchQueue(label: "weir.frame-exec")
    private let out = DispatchQueue(label: "weir.frame-out")
    private let release = PieceRelease()
    private let shared = Locked(Shared())
    /// Signalled when the free records the reading thread waits for are
    /// there (``waitForFree(_:)``), and at a failure.
    private let progress = DispatchSemaphore(value: 0)

    // The queue's.
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

    /// Phase 1 of `record` is done (on any thread).
    func decoded(_ record: BlockRecord) {
        // Only the front block can be executed: a drain is queued when it is
        // decoded, unless one is queued or running (it looks again before it ends).
        let start = shared.withLock { shared -> Bool in
            shared.decoded.insert(ObjectIdentifier(record))
            guard !shared.draining, shared.order.first === record else { return false }
            shared.draining = true
            return true
        }
        if start { queue.async { self.drain() } }
    }

    /// A piece let go: the ring may have room for a block that waited.
    /// Always a drain (about one a MiB): a drain that found no room may
    /// not have ended yet, and would not look again.
    private func ringFreed() {
        shared.withLock { $0.draining = true }
        queue.async { self.drain() }
    }

    /// A record executed, if any.
    func takeFree() -> BlockRecord? {
        shared.withLock { $0.free.popLast() }
    }

    /// Blocks not yet executed, and the first failure.
    var state: (pending: Int, failure: WeirError?) {
        shared.withLock { ($0.order.count, $0.failure) }
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
    /// ring has room; on the queue.
    private func drain() {
        while true {
            // The block and its wide copies land `ringSize` bytes after content the
            // writer may still hold: it waits for that to be let go (which drains again).
            let reach = produced + frame.blockMaximumSize + BlockFrame.wildCopy - frame.ringSize
            let room = release.isReleased(before: reach)
            let stopped = session.control.failure != nil
            let next = shared.withLock { shared -> BlockRecord? in
                guard !stopped, room, shared.failure == nil, let first = shared.order.first,
                      shared.decoded.contains(ObjectIdentifier(first)) else {
                    shared.draining = false
                    return nil
                }
                return first
            }
            guard let record = next else { return }
            do throws(WeirError) {
                let content = try frame.execute(record)
                produced += content.count
                session.tally.consumed?(record.filled)
                let wake = shared.withLock { shared -> Bool in
                    shared.order.removeFirst()
                    shared.decoded.remove(ObjectIdentifier(record))
                    shared.free.append(record)
                    guard shared.wanted > 0, shared.satisfied else { return false }
                    shared.wanted = 0
                    return true
                }
                if wake { progress.signal() }
                while produced - pieceStart >= Self.pieceSize { try send(pieceStart + Self.pieceSize, hashed: false) }
            } catch {
                shared.withLock { shared in if shared.failure == nil { shared.failure = error } }
                progress.signal()
                return
            }
        }
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

    /// Waits until every block appended is executed, or one failed, and
    /// its pieces are on their way to the writer (`help` decodes a block no
    /// worker took yet, if any, rather than wait).
    ///
    /// - Throws: the first block's error; the run's failure.
    func settle(help: () -> Bool) throws(WeirError) {
        while true {
            let (pending, failure) = state
            if failure != nil || pending == 0 { break }
            if let failure = session.control.failure { throw failure }
            if !help() { waitForFree(Int.max) }
        }
        queue.sync {}
        out.sync {}
        if let failure = state.failure { throw failure }
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

    /// Content bytes executed (the reading thread's view once finished).
    var contentSize: Int { queue.sync { produced } }
}
