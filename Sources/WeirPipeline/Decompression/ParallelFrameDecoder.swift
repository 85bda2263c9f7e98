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
///        │  BlockRecord (at most recordCount of them), scanned in order
///        ▼
///     WorkerPool (the run's "weir.decompress" workers, any order, BlockQueue):
///        │  phase 1, each block's entropy decoding — most of the work; the
///        │  reading thread decodes too when it waits for a record
///        ▼
///     FrameExecution: phase 2, each block executed into the ring (the
///        │  window, and the content not yet written) as soon as it and those
///        │  before it are decoded, by the thread that decoded the front one
///        ▼
///     serial queue "weir.frame-out": each 1 MiB of content hashed (the
///        │  frame's checksum) and sent to the writer as a DispatchData over
///        │  the ring, no copy
///        ▼
///     OrderedWriter; a piece written is let go, and the ring may come
///     round to its bytes.
///
/// Bounds: the records (``recordCount(threads:)``) and the ring, the frame's
/// window plus ``lag`` (``footprint(windowSize:threads:)``, in the budget
/// while the frame streams). The reading thread waits for a record; phase 2
/// waits for the writer to let go of the bytes the ring comes round to.
///
/// Errors: a block the scan or phase 1 refuses fails when its turn comes in
/// phase 2, so the blocks before it are written first and nothing of it or
/// after it; the messages are libzstd's. The state here is the reading
/// thread's.
final class ParallelFrameDecoder {
    /// The ring's bytes beyond the window and a block: the content the
    /// writer may hold (as many 1 MiB pieces as a streamed frame's slots)
    /// and the piece being made.
    static let lag = (OtherFormatStream.blocksInFlight + 1) * FrameExecution.pieceSize

    private let session: DecodeSession
    private let pool: WorkerPool<DecodingWorker>
    private let recordLimit: Int
    /// The blocks scanned and not yet taken for phase 1.
    private let queue: BlockQueue

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
    private var execution: FrameExecution?
    /// The block being filled.
    private var filling: BlockRecord?
    private var made = 0
    /// The reading thread's own block decoder, made when it first helps.
    private var helper: BlockDecodingContext?
    private var checksumBytes: [UInt8] = []

    /// Bytes of content decoded, once the frame ended.
    private(set) var produced = 0

    /// - Parameter header: the frame's header, parsed (its bytes come with
    ///   the frame's).
    init(header: FrameHeader, session: DecodeSession, pool: WorkerPool<DecodingWorker>) {
        self.session = session
        self.pool = pool
        self.headerSize = header.headerSize
        self.recordLimit = Self.recordCount(threads: session.options.resolvedThreads)
        self.queue = BlockQueue(width: session.options.resolvedThreads)
    }

    /// Blocks between the scan and phase 2: enough to keep every worker
    /// busy while the oldest is decoded (3 a worker, and 2), at most 12:
    /// each holds about 0.8 MiB.
    static func recordCount(threads: Int) -> Int { min(12, 2 + 3 * threads) }

    /// The memory a frame decoded this way holds: the ring and the records.
    static func footprint(windowSize: UInt64, threads: Int) -> UInt64 {
        BlockFrame.ringBytes(windowSize: windowSize, lag: lag)
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
    /// pieces numbered from `sequence` on (``finish(sequence:)`` gives the
    /// number after the last).
    func feed(_ data: DispatchData, sequence: Int) throws(WeirError) {
        var failure: WeirError?
        data.enumerateBytes { region, _, stop in
            do throws(WeirError) {
                try feed(UnsafeRawBufferPointer(region), sequence: sequence)
            } catch {
                failure = error
                stop = true
            }
        }
        if let failure { throw failure }
    }

    private func feed(_ source: UnsafeRawBufferPointer, sequence: Int) throws(WeirError) {
        var rest = source
        while !rest.isEmpty {
            let taken: Int
            switch stage {
            case .header:
                taken = min(rest.count, headerSize - headerBytes.count)
                headerBytes.append(contentsOf: rest.prefix(taken))
                if headerBytes.count == headerSize { try start(sequence: sequence) }
            case .blocks:
                taken = try fill(rest)
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
    }

    /// As ``FrameDecoder`` words it.
    private var bytesAfterEnd: WeirError {
        WeirError.corrupt(path: path, operation: .decompress, "bytes after the end of the frame")
    }

    /// The header is in: the frame's state and ring; its first piece goes
    /// out as output number `sequence`.
    private func start(sequence: Int) throws(WeirError) {
        let verify = session.options.verifyChecksum
        frame = try headerBytes.withUnsafeBytes { bytes in
            Result { () throws(WeirError) in
                try BlockFrame(header: bytes, lag: Self.lag, verifyChecksum: verify, path: session.path)
            }
        }.get()
        if let frame { execution = FrameExecution(frame: frame, session: session, sequence: sequence) }
        session.tally.consumed?(headerSize)
        stage = .blocks
    }

    /// Copies bytes into the block being filled; a block complete is
    /// scanned and handed to phase 1.
    private func fill(_ source: UnsafeRawBufferPointer) throws(WeirError) -> Int {
        guard let frame, let execution else { return 0 }
        let record: BlockRecord
        if let filling {
            record = filling
        } else {
            record = try nextRecord(execution)
            filling = record
        }
        let taken = record.take(source, blockMaximum: frame.blockMaximumSize)
        guard record.isComplete else { return taken }
        filling = nil
        frame.scan(record)
        if frame.isLast(record) { stage = .checksum }
        let failed = record.status != 0
        execution.append(record)
        if queue.push(record) {
            let queue = self.queue
            pool.submit { worker in
                let context = try? worker?.blockContext()
                while let record = queue.takeForJob() {
                    if let context { context.decode(record) } else { BlockDecodingContext.fail(record) }
                    execution.decoded(record)
                }
            }
        }
        if failed {
            // The blocks before it go out, then its error.
            try execution.settle(help: { help(execution) })
        }
        return taken
    }

    /// A record for the next block: one executed, a new one while fewer
    /// than the limit exist, or, waiting for one executed, decoding the
    /// blocks no worker took yet rather than wait.
    private func nextRecord(_ execution: FrameExecution) throws(WeirError) -> BlockRecord {
        while true {
            if let failure = session.control.failure { throw failure }
            if let failure = execution.failure { throw failure }
            if let record = execution.takeFree() {
                record.reset()
                return record
            }
            if made < recordLimit {
                made += 1
                return try BlockRecord(path: path)
            }
            // Woken for a quarter of the records at once: fewer wake-ups, blocks handed out in bursts.
            if !help(execution) { execution.waitForFree(max(1, recordLimit / 4)) }
        }
    }

    /// Decodes a block no worker took yet, if any.
    private func help(_ execution: FrameExecution) -> Bool {
        guard let record = queue.take() else { return false }
        if let helper = try? ownContext() { helper.decode(record) } else { BlockDecodingContext.fail(record) }
        execution.decoded(record)
        return true
    }

    private func ownContext() throws(WeirError) -> BlockDecodingContext {
        if let helper { return helper }
        let made = try BlockDecodingContext(path: path)
        helper = made
        return made
    }

    /// Waits for every block fed so far to be executed and its whole
    /// pieces sent (``FrameStreamer/settle()``).
    ///
    /// - Throws: the first block's error.
    func settle() throws(WeirError) {
        guard let execution else { return }
        try execution.settle(help: { help(execution) })
    }

    /// The frame's bytes are all in: waits for every block to be executed,
    /// checks the frame's end and sends the last piece.
    ///
    /// - Throws: a block's error; libzstd's corruption error when the frame
    ///   stops before its last block or its checksum.
    func finish(sequence: inout Int) throws(WeirError) {
        guard stage != .ended else { return }
        guard let frame, let execution else {
            throw WeirError.corrupt(path: path, operation: .decompress, "the frame ends before its last block")
        }
        let next = try execution.finish(checksum: checksumBytes, help: { help(execution) }, complete: {
            stage == .checksum && frame.lastExecuted && (!frame.hasChecksum || checksumBytes.count == 4)
        })
        sequence = next
        produced = execution.contentSize
        session.tally.consumed?(checksumBytes.count)
        stage = .ended
    }
}
