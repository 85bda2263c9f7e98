import DequeModule
import Dispatch
import WeirFormats
import WeirSystem

/// One large zstd frame decoded on all the workers (issue 81): the frame
/// as `zstd` writes it, one frame however many threads made it, which
/// libzstd decodes on one core (``FrameStreamer`` keeps that path for `-T1`
/// and dictionaries).
///
/// The frame's blocks go through three steps (Sources/CZstdSplit,
/// ``BlockFrame``):
///
///     frame's bytes ─▶ reading thread: copied block by block into a
///        │  BlockRecord (at most recordCount in flight), scanned in order
///        ▼
///     WorkerPool (the run's "weir.decompress" workers, any order): phase 1,
///        │  each block's entropy decoding into its record — most of the work
///        ▼
///     reading thread, in order: phase 2 executes each block into the ring
///        │  (the window, and the content not yet written); while the oldest
///        │  block's phase 1 is still running, it decodes later blocks
///        │  itself rather than wait
///        ▼
///     serial queue "weir.frame-out": each 1 MiB of content hashed (the
///        │  frame's checksum) and sent to the writer as a DispatchData over
///        │  the ring, no copy
///        ▼
///     OrderedWriter; a piece written is released, and the ring may come
///     round to its bytes.
///
/// Bounds: the records (``recordCount(threads:)``) and the ring, the frame's
/// window plus ``lag`` (``footprint(windowSize:threads:)``, in the budget
/// while the frame streams). The reading thread waits for a record, for a
/// slot of the run (one per piece out, as the streamed frames' buffers), and
/// for the writer to release the bytes the ring comes round to.
///
/// Errors: a block the scan or phase 1 refuses fails when its turn comes in
/// phase 2, so the blocks before it are written first and nothing of it or
/// after it; the messages are libzstd's. Everything here runs on the
/// reading thread, except phase 1 and the pieces' way out.
final class ParallelFrameDecoder {
    /// The size of each piece of output: one libdispatch write gather.
    static let pieceSize = FrameStreamer.outputBufferSize
    /// The ring's bytes beyond the window and a block: the pieces the
    /// writer may hold (the run's slots), the one on its way out, the one
    /// being made.
    static let lag = (OtherFormatStream.blocksInFlight + 3) * pieceSize

    private let session: DecodeSession
    private let pool: WorkerPool<DecodingWorker>
    private let recordLimit: Int
    /// The blocks scanned and not yet taken for phase 1.
    private let queue: BlockQueue
    private let out = DispatchQueue(label: "weir.frame-out")

    /// Where the frame's bytes are: its header, its blocks, its checksum.
    private enum Stage {
        case header
        case blocks
        case checksum
        case ended
    }

    private var stage = Stage.header
    /// The frame header's bytes as they come (`headerSize` of them).
    private var headerBytes: [UInt8] = []
    private let headerSize: Int
    private var frame: BlockFrame?
    /// The block being filled, and those handed to phase 1, oldest first.
    private var filling: BlockRecord?
    private var inFlight = Deque<BlockRecord>()
    private var idle: [BlockRecord] = []
    private var made = 0
    /// The reading thread's own block decoder, made when it first helps.
    private var helper: BlockDecodingContext?
    private var checksumBytes: [UInt8] = []
    /// Content position where the piece being made starts.
    private var pieceStart = 0
    /// The pieces sent and not yet released by the writer.
    private let release = PieceRelease()

    /// Bytes of content decoded.
    private(set) var produced = 0
    /// Whether the frame ended: every block executed, its checksum checked.
    var ended: Bool { stage == .ended }

    /// - Parameter header: the frame's header, parsed (its bytes come with
    ///   the frame's).
    init(header: FrameHeader, session: DecodeSession, pool: WorkerPool<DecodingWorker>) {
        self.session = session
        self.pool = pool
        self.headerSize = header.headerSize
        self.recordLimit = Self.recordCount(threads: session.options.resolvedThreads)
        self.queue = BlockQueue(width: session.options.resolvedThreads - 1)
    }

    deinit {
        // After a failure a worker may still hold a record: each is retained
        // by its job and touches nothing else of the frame, but its block's
        // bytes are the record's, so wait for it.
        for record in inFlight { record.decoded.wait() }
    }

    /// Blocks between the scan and phase 2: enough to keep every worker
    /// busy while the reading thread executes (4 a worker), at most 16.
    static func recordCount(threads: Int) -> Int { min(16, max(4, 4 * threads)) }

    /// The memory a frame decoded this way holds: the ring and the records.
    static func footprint(windowSize: UInt64, threads: Int) -> UInt64 {
        windowSize + UInt64(BlockRecord.inputCapacity + lag + 64 << 10)
            + UInt64(recordCount(threads: threads) * BlockRecord.footprint)
    }

    /// Whether a frame goes this way rather than through libzstd: a run of
    /// several workers, no dictionary (named by the frame or given: `-D`,
    /// `--patch-from`), which libzstd alone decodes.
    static func takes(_ header: FrameHeader, options: DecompressionOptions) -> Bool {
        options.resolvedThreads > 1 && header.dictionaryID == 0 && options.dictionary == nil
            && options.patchReference == nil
    }

    private var path: String { session.path }

    /// Takes the frame's next bytes; the content decoded goes out in
    /// pieces numbered from `sequence` on.
    func feed(_ data: DispatchData, sequence: inout Int) throws(WeirError) {
        var failure: WeirError?
        var number = sequence
        data.enumerateBytes { region, _, stop in
            do throws(WeirError) {
                try feed(UnsafeRawBufferPointer(region), sequence: &number)
            } catch {
                failure = error
                stop = true
            }
        }
        sequence = number
        if let failure { throw failure }
    }

    private func feed(_ source: UnsafeRawBufferPointer, sequence: inout Int) throws(WeirError) {
        var rest = source
        while !rest.isEmpty {
            let taken: Int
            switch stage {
            case .header:
                taken = min(rest.count, headerSize - headerBytes.count)
                headerBytes.append(contentsOf: rest.prefix(taken))
                if headerBytes.count == headerSize { try start() }
            case .blocks:
                taken = try fill(rest, sequence: &sequence)
            case .checksum:
                let wanted = (frame?.hasChecksum == true ? 4 : 0) - checksumBytes.count
                if wanted == 0 { throw bytesAfterEnd }
                taken = min(rest.count, wanted)
                checksumBytes.append(contentsOf: rest.prefix(taken))
            case .ended:
                throw bytesAfterEnd
            }
            rest = UnsafeRawBufferPointer(rebasing: rest[taken...])
        }
        try executeDecoded(sequence: &sequence)
    }

    /// As ``FrameDecoder`` words it.
    private var bytesAfterEnd: WeirError {
        WeirError.corrupt(path: path, operation: .decompress, "bytes after the end of the frame")
    }

    /// The header is in: the frame's state and ring.
    private func start() throws(WeirError) {
        let verify = session.options.verifyChecksum
        frame = try headerBytes.withUnsafeBytes { bytes in
            Result { () throws(WeirError) in
                try BlockFrame(header: bytes, lag: Self.lag, verifyChecksum: verify, path: session.path)
            }
        }.get()
        session.tally.consumed?(headerSize)
        stage = .blocks
    }

    /// Copies bytes into the block being filled; a block complete is
    /// scanned and handed to phase 1.
    private func fill(_ source: UnsafeRawBufferPointer, sequence: inout Int) throws(WeirError) -> Int {
        guard let frame else { return 0 }
        let record: BlockRecord
        if let filling {
            record = filling
        } else {
            record = try nextRecord(sequence: &sequence)
            filling = record
        }
        let taken = record.take(source, blockMaximum: frame.blockMaximumSize)
        guard record.isComplete else { return taken }
        filling = nil
        frame.scan(record)
        let last = frame.isLast(record)
        let failed = record.status != 0
        inFlight.append(record)
        if queue.push(record) {
            let queue = self.queue
            pool.submit { worker in
                let context = try? worker?.blockContext()
                while let record = queue.takeForJob() {
                    if let context { context.decode(record) } else { BlockDecodingContext.fail(record) }
                }
            }
        }
        // The blocks before it, then its error.
        if failed { try executeAll(sequence: &sequence) }
        if last { stage = .checksum }
        return taken
    }

    /// A record for the next block: an idle one, a new one while fewer than
    /// the limit exist, or the oldest in flight once executed.
    private func nextRecord(sequence: inout Int) throws(WeirError) -> BlockRecord {
        if let record = idle.popLast() {
            record.reset()
            return record
        }
        if made < recordLimit {
            made += 1
            return try BlockRecord(path: path)
        }
        try executeOldest(sequence: &sequence)
        return try nextRecord(sequence: &sequence)
    }

    /// Executes the blocks in flight whose phase 1 is done, in order.
    private func executeDecoded(sequence: inout Int) throws(WeirError) {
        while let oldest = inFlight.first, oldest.decoded.wait(timeout: .now()) == .success {
            try execute(oldest, sequence: &sequence)
        }
    }

    /// Executes every block in flight, waiting for each.
    private func executeAll(sequence: inout Int) throws(WeirError) {
        while !inFlight.isEmpty { try executeOldest(sequence: &sequence) }
    }

    /// Executes the oldest block in flight; while its phase 1 runs on a
    /// worker, the reading thread decodes the next blocks no worker took
    /// yet (``BlockQueue``), rather than wait.
    private func executeOldest(sequence: inout Int) throws(WeirError) {
        guard let oldest = inFlight.first else { return }
        if let helper = try? ownContext() {
            while oldest.decoded.wait(timeout: .now()) != .success {
                guard let record = queue.take() else {
                    oldest.decoded.wait()
                    break
                }
                helper.decode(record)
            }
            oldest.decoded.signal()
        }
        oldest.decoded.wait()
        try execute(oldest, sequence: &sequence)
    }

    private func ownContext() throws(WeirError) -> BlockDecodingContext {
        if let helper { return helper }
        let made = try BlockDecodingContext(path: path)
        helper = made
        return made
    }

    /// Phase 2 of the oldest block in flight, its phase 1 done; each
    /// 1 MiB of content goes out as it is made.
    private func execute(_ record: BlockRecord, sequence: inout Int) throws(WeirError) {
        inFlight.removeFirst()
        guard let frame else { return }
        // The block and its wide copies land `ringSize` bytes after content
        // the writer may still hold: wait until it lets that go.
        let reach = produced + frame.blockMaximumSize + BlockFrame.wildCopy - frame.ringSize
        try release.wait(until: reach, control: session.control)
        let content = try frame.execute(record)
        produced += content.count
        session.tally.consumed?(record.filled)
        idle.append(record)
        while produced - pieceStart >= Self.pieceSize {
            try send(pieceStart + Self.pieceSize, hashed: false, sequence: &sequence)
        }
    }

    /// Sends the content from `pieceStart` to `end` as the next piece: on
    /// the "weir.frame-out" queue, in order, hashed (unless `hashed`) and
    /// handed to the writer as the ring's bytes. Pieces are whole MiB of
    /// the frame's content, as libzstd's streamed frames' buffers: a frame
    /// that fails writes what it would.
    private func send(_ end: Int, hashed: Bool, sequence: inout Int) throws(WeirError) {
        guard let frame, end > pieceStart else { return }
        try session.input.checkUnchanged()
        guard let ticket = session.control.takeSlot() else { throw session.control.failure ?? session.cancelled }
        let (start, number) = (pieceStart, sequence)
        pieceStart = end
        sequence += 1
        release.sent(start)
        let (session, release) = (self.session, self.release)
        out.async {
            let content = frame.content(from: start, count: end - start)
            if !hashed { frame.hash(content) }
            // The frame (its ring) lives until the writer lets the bytes go.
            let data = DispatchData(bytesNoCopy: content, deallocator: .custom(nil, {
                withExtendedLifetime(frame) { release.released(start) }
            }))
            session.run.submit(number, data, ticket: ticket)
        }
    }

    /// The frame's bytes are all in: executes what is left, checks the
    /// frame's end and sends the last piece.
    ///
    /// - Throws: a block's error; libzstd's corruption error when the frame
    ///   stops before its last block or its checksum.
    func finish(sequence: inout Int) throws(WeirError) {
        guard stage != .ended else { return }
        try executeAll(sequence: &sequence)
        guard let frame, stage == .checksum, frame.lastExecuted,
              !frame.hasChecksum || checksumBytes.count == 4 else {
            throw WeirError.corrupt(path: path, operation: .decompress, "the frame ends before its last block")
        }
        // The checksum is checked before the last piece goes out, as
        // libzstd's streaming decoder fails before its last buffer is sent.
        out.sync {}
        frame.hash(frame.content(from: pieceStart, count: produced - pieceStart))
        try checksumBytes.withUnsafeBytes { bytes in
            Result { () throws(WeirError) in try frame.end(checksum: bytes) }
        }.get()
        try send(produced, hashed: true, sequence: &sequence)
        session.tally.consumed?(checksumBytes.count)
        stage = .ended
    }
}
