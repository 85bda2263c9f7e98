import CZstd
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Decompresses any standard zstd stream — weir's own files, one frame or
/// many, skippable frames, pzstd files, concatenations — decoding independent
/// frames in parallel, in bounded memory, from a file or a pipe.
///
/// Data flow, following one frame:
///
///     input fd ─▶ ChunkReader: pieces of `readSize`, mapped from a regular
///        │  file (MappedInput) or read from a pipe by a DispatchIO stream
///        │  channel (queue "weir.read"); the next is started before the
///        │  current one is looked at, so reading overlaps everything else
///        ▼
///     reading thread (a Thread of its own): every piece goes through a
///        │  FrameScanner, which walks frame and block headers without
///        │  decoding and reports each frame as it ends; the frame's bytes
///        │  are a DispatchData subrange of the pieces (no copy)
///        ├─▶ a frame small enough: takes an output buffer of its bound
///        │   (FrameBuffers: an idle one, or a new mapping) and the room
///        │   for it and its compressed bytes in the ByteBudget, gets the
///        │   next output number, goes to the WorkerPool (concurrent queue
///        │   "weir.decompress", at most `threads` jobs, one reusable
///        │   ZSTD_DCtx each) and is decoded straight into its buffer: in
///        │   one pass, or region by region when it spans several pieces
///        │   (no copy to join them, no window buffer)
///        └─▶ a frame too large, or whose size is unknown until it ends
///            (a single `zstd -T2` frame of 1 GB): decoded by streaming on
///            the reading thread as its bytes arrive, into 1 MiB buffers
///            that each take an output number
///        ▼
///     OrderedWriter (DispatchIO stream channel, queue "weir.write"): output
///        │  pieces go out in number order, whatever order they finish in
///        ▼
///     output fd; a written piece's buffer goes back to its pool, idle,
///     its bytes still in the budget, for the next frame of its size.
///
/// Never trusting a declared size: a frame's buffer is the size its header
/// declares only when that is no more than its blocks can hold (block count
/// × Block_Maximum_Size, known once the scanner has seen the frame end), and
/// otherwise that bound; libzstd checks that the content fills it exactly.
/// A frame whose buffer (its bound rounded up to a size class) or compressed
/// bytes exceed ``DecompressionOptions/parallelFrameLimit`` streams instead.
///
/// The seek table: when the input is a regular file ending with one, its
/// entries are checked against the frames the scanner finds and decodes
/// (``SeekTableCheck``), but never used to cut frames: the scanner's
/// boundaries are, and every frame is checked by libzstd, so a wrong table
/// can never produce wrong output. A table that does not match its frames is
/// reported at the end of the run: in ``Statistics/warnings`` when decoding,
/// as a `.corrupt` error when only testing (no output).
///
/// Bounds, and why:
/// - the ByteBudget (``DecompressionOptions/inFlightBudget``: `-M` less a
///   reserve for what it does not count, below) holds the memory that grows
///   with the work in flight: the compressed bytes of frames handed out
///   until decoded, every output buffer from its mapping to its unmapping
///   (idle in its pool or freed late by libdispatch included), and a
///   streamed frame's decoder window. A slow consumer stops the reading
///   thread, which stops the reader. The parallel frame limit is half the
///   budget, so a frame decoded whole always fits.
/// - outside it: the parts of read pieces that frames in flight share (at
///   most one piece more than frames), the frame being read until it is
///   handed out (at most the parallel frame limit) and the next read, the
///   workers' contexts (no window: they decode into the frame's buffer),
///   the runtime.
/// - at most one frame in progress is buffered, and only up to the parallel
///   frame limit; beyond it, that frame streams and its bytes are let go
///   as soon as they are decoded.
/// - windows are capped by `-M`: every frame's header is checked against
///   ``WindowLimit`` before its first byte reaches a decoder, whichever path
///   it takes (libzstd skips its own check when it decodes in one pass).
///
/// Who owns what: the reading thread owns the scanner, the buffered bytes,
/// the streaming context and output numbering; workers own a frame while
/// decoding it; the writer's queue owns the reorder buffer; `totals` and the
/// first failure are behind locks.
public final class ParallelDecompressionPipeline: @unchecked Sendable {
    /// The size of each buffer of streamed output: one libdispatch write gather.
    static let outputBufferSize = 1 << 20

    private let input: Int32
    private let output: Int32?
    private let inputName: String
    private let outputName: String
    private let options: DecompressionOptions
    private let control: RunControl
    private let budget: ByteBudget
    private let frameBuffers: FrameBuffers
    private let observer: ProgressObserver?
    /// Frames decoded by streaming on the reading thread (for tests).
    private let streamed = Locked(0)

    /// Prepares a run. The descriptors remain the caller's to close.
    ///
    /// - Parameters:
    ///   - input: the compressed input (a file or a pipe).
    ///   - output: where the decompressed bytes go; nil only tests the input.
    ///   - inputName: how errors name the input.
    ///   - outputName: how errors name the output.
    ///   - options: checksum verification, memory limit, threads.
    ///   - observer: told of bytes read and written.
    public init(input: Int32, output: Int32?, inputName: String, outputName: String,
                options: DecompressionOptions = DecompressionOptions(), observer: ProgressObserver? = nil) {
        self.input = input
        self.output = output
        self.inputName = inputName
        self.outputName = outputName
        self.options = options
        self.observer = observer
        self.control = RunControl(slots: 1)
        self.budget = ByteBudget(limit: options.inFlightBudget)
        self.frameBuffers = FrameBuffers(budget: budget)
    }

    /// Stops the run from another thread; `run()` throws `.cancelled`.
    public func cancel() {
        control.fail(WeirError(.cancelled, path: inputName, operation: "decompress", reason: "cancelled"))
    }

    /// The most bytes the run held in its budget at once (for tests of the bound).
    var peakBytesInFlight: Int { budget.peak }

    /// The most bytes of output buffers mapped at once, idle ones included,
    /// counted apart from the budget (for tests of the bound).
    var peakBufferBytes: Int { frameBuffers.tally.peak }

    /// How many frames were decoded by streaming rather than whole.
    var framesStreamed: Int { streamed.current }

    /// Decompresses until the end of the input, a failure or ``cancel()``.
    ///
    /// - Returns: what was done; `frames` counts the zstd frames decoded;
    ///   `warnings` says when the seek table does not match the frames.
    /// - Throws: ``WeirError``: not zstd, truncated, corrupt (naming the frame
    ///   and its offset), checksum mismatch, memory limit, read or write
    ///   failure; when testing (no output), `.corrupt` for a seek table that
    ///   does not match the frames, naming the entry and what differs.
    public func run() throws(WeirError) -> Statistics {
        let started = DispatchTime.now()
        let control = self.control
        let budget = self.budget
        let options = self.options
        let inputName = self.inputName
        let observer = self.observer
        let cleanup = DispatchGroup()
        let totals = Locked((bytesOut: 0, frames: 0))
        let kind = InputKind.of(input)
        // One digested dictionary for every decoder, made before any channel opens.
        let dictionary = try options.dictionary.map { dictionary throws(WeirError) in try DecompressionDictionary(dictionary) }

        let reader = ChunkReader(fd: input, path: inputName, kind: kind,
                                 chunkSize: options.readSize, mapFiles: options.mapInput, live: observer != nil, cleanup: cleanup,
                                 onBytes: { observer?.bytesRead($0) })
        let writer = output.map { fd in
            OrderedWriter(
                fd: fd, path: outputName, cleanup: cleanup,
                onFinished: { _, size in
                    // The buffer's bytes stay in the budget until it is back in its pool.
                    if size >= 0 {
                        totals.withLock { $0.bytesOut += size }
                        observer?.bytesWritten(size)
                    }
                    control.activity.leave()
                },
                onError: { control.fail($0) })
        }
        let pool = WorkerPool<DecompressionContext>(
            width: options.resolvedThreads, label: "weir.decompress",
            makeContext: { () throws(WeirError) in
                try DecompressionContext(windowLogMax: options.windowLimit.logMax,
                                         verifyChecksum: options.verifyChecksum, stableOutput: true,
                                         dictionary: dictionary, path: inputName)
            },
            onContextFailure: { control.fail($0) })
        control.stopOnFailure(reader: reader, writer: writer) { budget.cancel() }

        var tableCheck: SeekTableCheck?
        var streamBase = 0
        if case .regularFile(let size) = kind {
            streamBase = max(0, Int(lseek(input, 0, SEEK_CUR)))
            do throws(WeirError) {
                let table = try SeekTable.readEntries(from: input, fileSize: size, path: inputName)
                tableCheck = SeekTableCheck(table: table, readError: nil, fileSize: size, streamBase: streamBase)
            } catch {
                tableCheck = SeekTableCheck(table: nil, readError: error, fileSize: size, streamBase: streamBase)
            }
        }

        let bytesIn = Locked(0)
        let tableMismatch = Locked<SeekTableCheck.Mismatch?>(nil)
        let feeder = FrameFeeder(
            path: inputName, options: options, control: control, budget: budget, frameBuffers: frameBuffers,
            pool: pool, input: reader, writer: writer, totals: totals, streamed: streamed,
            tableCheck: tableCheck, streamBase: streamBase, tableMismatch: tableMismatch, dictionary: dictionary)
        control.startThread(name: "weir.decoder") {
            do throws(WeirError) {
                var pending = reader.start()
                while true {
                    let chunk = try pending.wait()
                    if !chunk.endOfInput { pending = reader.start() }
                    if let failure = control.failure { throw failure }
                    try feeder.consume(chunk.data)
                    if chunk.endOfInput { break }
                }
                try feeder.finish()
                bytesIn.withLock { $0 = feeder.bytesIn }
            } catch {
                // Zeros read from a file cut while mapped make any error; say what happened.
                do throws(WeirError) { try reader.checkUnchanged() } catch { control.fail(error) }
                control.fail(error)
            }
        }

        control.activity.wait()
        try control.closeChannels(reader: reader, writer: writer, cleanup: cleanup)

        var statistics = Statistics()
        let done = totals.current
        statistics.bytesIn = bytesIn.current
        statistics.bytesOut = done.bytesOut
        statistics.frames = done.frames
        statistics.threads = options.resolvedThreads
        statistics.seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        if let mismatch = tableMismatch.current {
            if output == nil {
                throw WeirError(.corrupt, path: inputName, operation: "test",
                                reason: "corrupt seek table: \(mismatch.detail)")
            }
            statistics.warnings.append("seek table does not match the frames; ignoring it (\(mismatch.detail))")
        }
        return statistics
    }
}

/// The reading thread's side of ``ParallelDecompressionPipeline``: scans the
/// pieces as they come, cuts them into frames, hands small frames to the
/// workers and streams large ones itself. Every method runs on the reading
/// thread; nothing here is touched elsewhere.
private final class FrameFeeder: @unchecked Sendable {
    let path: String
    let options: DecompressionOptions
    let control: RunControl
    let budget: ByteBudget
    let pool: WorkerPool<DecompressionContext>
    /// The input, asked before any output is sent whether a mapped file was cut.
    let input: ChunkReader
    let writer: OrderedWriter?
    let totals: Locked<(bytesOut: Int, frames: Int)>
    let streamed: Locked<Int>
    /// The seek table's check (regular files only), fed every frame found.
    var tableCheck: SeekTableCheck?
    /// The file offset of the stream's first byte, for the check's messages.
    let streamBase: Int
    /// The first way the seek table disagrees with the frames, from this
    /// thread or from the workers that learn a frame's decoded size.
    let tableMismatch: Locked<SeekTableCheck.Mismatch?>
    let frameLimit: Int
    /// The largest window a frame may use (`-M`, else libzstd's default 2²⁷).
    let windowLimit: WindowLimit
    let frameBuffers: FrameBuffers
    let streamBuffers: BufferPool
    /// The run's dictionary (`-D`), shared with the workers' decoders.
    let dictionary: DecompressionDictionary?

    private var scanner: FrameScanner
    /// Stream bytes not yet handed out, starting at stream offset `bufferStart`.
    private var buffer = DispatchData.empty
    private var bufferStart = 0
    /// The next output piece number for the writer.
    private var sequence = 0
    /// The frame being streamed, if any.
    private var stream: StreamState?
    /// Its decoder, made for it and freed after it (with its window buffer).
    private var streamContext: DecompressionContext?

    /// A frame decoded by streaming on this thread.
    private struct StreamState {
        let index: Int
        let start: Int
        /// Stream offset up to which its bytes went to the decoder.
        var fed: Int
        /// The last hint from libzstd: 0 once the frame is complete.
        var hint = 1
        var produced = 0
        /// The output buffer being filled, and how much of it is.
        var current: UnsafeMutableRawPointer?
        var filled = 0
        /// The bytes of the budget its decoder's buffers take.
        let decoderBytes: Int
    }

    init(path: String, options: DecompressionOptions, control: RunControl, budget: ByteBudget,
         frameBuffers: FrameBuffers, pool: WorkerPool<DecompressionContext>, input: ChunkReader,
         writer: OrderedWriter?, totals: Locked<(bytesOut: Int, frames: Int)>, streamed: Locked<Int>,
         tableCheck: SeekTableCheck?, streamBase: Int, tableMismatch: Locked<SeekTableCheck.Mismatch?>,
         dictionary: DecompressionDictionary?) {
        self.dictionary = dictionary
        self.input = input
        self.path = path
        self.options = options
        self.control = control
        self.budget = budget
        self.pool = pool
        self.writer = writer
        self.totals = totals
        self.streamed = streamed
        self.tableCheck = tableCheck
        self.streamBase = streamBase
        self.tableMismatch = tableMismatch
        self.frameLimit = options.parallelFrameLimit
        self.windowLimit = options.windowLimit
        self.frameBuffers = frameBuffers
        self.streamBuffers = frameBuffers.pool(for: ParallelDecompressionPipeline.outputBufferSize)
        self.scanner = FrameScanner(path: path, operation: "decompress")
    }

    /// Compressed bytes consumed.
    var bytesIn: Int { scanner.offset }

    /// Takes the next piece of the stream.
    func consume(_ piece: DispatchData) throws(WeirError) {
        let boundaries: [FrameBoundary]
        do throws(WeirError) {
            boundaries = try scanner.feed(piece)
        } catch where error.kind == .notZstd {
            // As zstd words it: the input does not start with a frame.
            throw WeirError(.notZstd, path: path, operation: "decompress", reason: "not in zstd format")
        }
        buffer.append(piece)
        for boundary in boundaries {
            try frameEnded(boundary)
        }
        if let start = scanner.currentFrameStart, let header = scanner.currentHeader, !header.isSkippable {
            if stream == nil {
                let declared = header.contentSize.map { $0 > UInt64(frameLimit) || !fitsWhole(Int($0)) } ?? false
                if declared || scanner.currentFrameBytes > frameLimit {
                    try beginStream(index: scanner.frameCount, start: start, header: header)
                }
            }
            if stream != nil { try feedStream(upTo: scanner.offset) }
        }
        // Keep only the bytes of the frame in progress not yet decoded.
        let keep = stream != nil ? scanner.offset : (scanner.currentFrameStart ?? scanner.offset)
        if keep > bufferStart {
            buffer = buffer.subdata(in: (keep - bufferStart) ..< buffer.count)
            bufferStart = keep
        }
    }

    /// Declares the end of the input.
    func finish() throws(WeirError) {
        try scanner.finish()
        tableCheck?.finish()
        if let mismatch = tableCheck?.mismatch { Self.record(mismatch, in: tableMismatch) }
        if scanner.offset == 0 {
            throw WeirError(.notZstd, path: path, operation: "decompress", reason: "not in zstd format (empty input)")
        }
    }

    /// The bytes of the stream from `start` to `end` (both still buffered).
    private func slice(_ start: Int, _ end: Int) -> DispatchData {
        buffer.subdata(in: (start - bufferStart) ..< (end - bufferStart))
    }

    /// Acts on a frame the scanner has seen end.
    private func frameEnded(_ boundary: FrameBoundary) throws(WeirError) {
        let expected = checkTable(boundary)
        if boundary.header.isSkippable { return }
        if let stream, stream.start == boundary.offset {
            try feedStream(upTo: boundary.end)
            try finishStream(boundary: boundary, expected: expected)
            return
        }
        let bound = boundary.blockCount * boundary.header.blockMaximumSize
        if let declared = boundary.header.contentSize, declared > UInt64(bound) {
            throw Self.corrupt(path: path, boundary: boundary,
                               "declares \(declared) bytes of content, more than its \(boundary.blockCount) "
                               + "blocks can hold (\(bound))")
        }
        let capacity = boundary.header.contentSize.map { Int($0) } ?? bound
        if !fitsWhole(capacity) || boundary.compressedSize > frameLimit {
            try beginStream(index: boundary.index, start: boundary.offset, header: boundary.header)
            try feedStream(upTo: boundary.end)
            try finishStream(boundary: boundary, expected: expected)
            return
        }
        try windowLimit.check(boundary.header, index: boundary.index, offset: boundary.offset, path: path)
        try submit(boundary, data: slice(boundary.offset, boundary.end), capacity: capacity, expected: expected)
    }

    /// Whether a frame of `capacity` decoded bytes gets a buffer of its own:
    /// when the buffer (its size class) is within the parallel frame limit.
    private func fitsWhole(_ capacity: Int) -> Bool {
        FrameBuffers.bufferSize(for: capacity) <= frameLimit
    }

    /// Checks a frame against the seek table; returns the content size its
    /// entry lists when that is known only once the frame is decoded.
    private func checkTable(_ boundary: FrameBoundary) -> SeekTableCheck.Expectation? {
        guard tableCheck?.mismatch == nil else { return nil }
        let expected = tableCheck?.frameFound(boundary)
        if let mismatch = tableCheck?.mismatch { Self.record(mismatch, in: tableMismatch) }
        return expected
    }

    /// Keeps `mismatch` if it comes before the one kept so far (or is the first).
    static func record(_ mismatch: SeekTableCheck.Mismatch, in kept: Locked<SeekTableCheck.Mismatch?>) {
        kept.withLock { current in
            if current.map({ mismatch.precedes($0) }) ?? true { current = mismatch }
        }
    }

    /// Records a frame that decoded to another size than its table entry lists.
    private static func checkDecodedSize(_ produced: Int, expected: SeekTableCheck.Expectation?, boundary: FrameBoundary,
                                         streamBase: Int, in kept: Locked<SeekTableCheck.Mismatch?>) {
        guard let expected, expected.size != produced else { return }
        record(SeekTableCheck.decodedSize(entry: expected.entry, listed: expected.size, frame: boundary,
                                          streamBase: streamBase, decoded: produced), in: kept)
    }

    /// Hands one whole frame to the workers, with a buffer of its own taken
    /// here (waiting for room in the budget) and its compressed bytes counted
    /// until it is decoded.
    private func submit(_ boundary: FrameBoundary, data: DispatchData, capacity: Int,
                        expected: SeekTableCheck.Expectation?) throws(WeirError) {
        let compressed = boundary.compressedSize
        let (buffer, buffers) = try takeBuffer(capacity: capacity, extra: compressed)
        control.activity.enter()
        let number = sequence
        sequence += 1
        let (control, budget, writer, totals, input) = (self.control, self.budget, self.writer, self.totals, self.input)
        let (streamBase, tableMismatch) = (self.streamBase, self.tableMismatch)
        pool.submit { context in
            guard let context, !control.isFailed else {
                buffers.recycle(buffer)
                budget.release(compressed)
                control.activity.leave()
                return
            }
            do throws(WeirError) {
                let produced = try Self.decodeWhole(data, context: context,
                                                    into: UnsafeMutableRawBufferPointer(start: buffer, count: capacity))
                budget.release(compressed)
                try input.checkUnchanged()
                Self.checkDecodedSize(produced, expected: expected, boundary: boundary, streamBase: streamBase,
                                      in: tableMismatch)
                totals.withLock { $0.frames += 1 }
                if let writer {
                    writer.submit(number, buffers.wrap(buffer, count: produced))
                } else {
                    totals.withLock { $0.bytesOut += produced }
                    buffers.recycle(buffer)
                    control.activity.leave()
                }
            } catch {
                buffers.recycle(buffer)
                control.fail(Self.located(error, index: boundary.index, offset: boundary.offset))
                budget.release(compressed)
                control.activity.leave()
            }
        }
    }

    /// An output buffer for `capacity` bytes and `extra` more bytes of the
    /// budget, waiting for room.
    private func takeBuffer(capacity: Int, extra: Int) throws(WeirError) -> (UnsafeMutableRawPointer, BufferPool) {
        switch frameBuffers.take(capacity: capacity, extra: extra) {
        case .buffer(let memory, let pool):
            return (memory, pool)
        case .cancelled:
            throw control.failure ?? Self.cancelled(path)
        case .outOfMemory:
            throw WeirError(.library, path: path, operation: "decompress", reason: "out of memory")
        }
    }

    /// Decodes one whole frame (on a worker) straight into its buffer: in one
    /// pass when its bytes are one region, region by region when they span
    /// several read pieces (no copy to join them).
    private static func decodeWhole(_ data: DispatchData, context: DecompressionContext,
                                    into destination: UnsafeMutableRawBufferPointer) throws(WeirError) -> Int {
        var regions = 0
        data.enumerateBytes { _, _, stop in
            regions += 1
            if regions > 1 { stop = true }
        }
        if regions > 1 { return try context.decompressFrame(pieces: data, into: destination) }
        var result: Result<Int, WeirError> = .success(0)
        let count = data.count
        data.withUnsafeBytes { (bytes: UnsafePointer<UInt8>) in
            do throws(WeirError) {
                result = .success(try context.decompressFrame(UnsafeRawBufferPointer(start: bytes, count: count),
                                                              into: destination))
            } catch {
                result = .failure(error)
            }
        }
        return try result.get()
    }

    // MARK: Streaming

    /// Starts streaming the frame `index` that begins at `start`, once its
    /// header is known and within the window limit. Its decoder's window and
    /// input buffers count in the budget while it streams (at most the
    /// budget less one output buffer, so that the frame can always go on).
    private func beginStream(index: Int, start: Int, header: FrameHeader) throws(WeirError) {
        try windowLimit.check(header, index: index, offset: start, path: path)
        let window = header.windowSize + 2 * UInt64(header.blockMaximumSize)
        let decoderBytes = Int(min(window, UInt64(max(0, budget.limit - streamBuffers.size))))
        guard frameBuffers.reserve(decoderBytes) else { throw control.failure ?? Self.cancelled(path) }
        do throws(WeirError) {
            streamContext = try DecompressionContext(windowLogMax: options.windowLimit.logMax,
                                                     verifyChecksum: options.verifyChecksum, dictionary: dictionary, path: path)
        } catch {
            budget.release(decoderBytes)
            throw error
        }
        stream = StreamState(index: index, start: start, fed: start, decoderBytes: decoderBytes)
    }

    /// Feeds the streamed frame its bytes up to stream offset `end`.
    private func feedStream(upTo end: Int) throws(WeirError) {
        guard var state = stream, let context = streamContext, end > state.fed else { return }
        let data = slice(state.fed, end)
        var failure: WeirError?
        data.enumerateBytes { region, _, stop in
            var input = ZSTD_inBuffer(src: region.baseAddress, size: region.count, pos: 0)
            while input.pos < input.size {
                do throws(WeirError) {
                    if state.hint == 0 {
                        throw Self.corrupt(path: path, index: state.index, offset: state.start,
                                           "ends before its last block (at offset \(state.fed + input.pos))")
                    }
                    var output = try outputBuffer(&state)
                    let before = output.pos
                    state.hint = try context.decompress(&input, &output)
                    state.produced += output.pos - before
                    state.filled = output.pos
                    if state.filled == ParallelDecompressionPipeline.outputBufferSize { try sendStreamBuffer(&state) }
                } catch {
                    failure = Self.located(error, index: state.index, offset: state.start)
                    stop = true
                    return
                }
            }
            state.fed += region.count
        }
        stream = state
        if let failure { throw failure }
    }

    /// Flushes the streamed frame, checks it ended where its blocks end, and
    /// sends the last buffer.
    private func finishStream(boundary: FrameBoundary, expected: SeekTableCheck.Expectation?) throws(WeirError) {
        guard var state = stream, let context = streamContext else { return }
        while state.hint != 0 {
            var output = try outputBuffer(&state)
            let before = output.pos
            var empty = ZSTD_inBuffer(src: nil, size: 0, pos: 0)
            do throws(WeirError) {
                state.hint = try context.decompress(&empty, &output)
            } catch {
                stream = state
                throw Self.located(error, index: state.index, offset: state.start)
            }
            state.produced += output.pos - before
            state.filled = output.pos
            if state.filled == ParallelDecompressionPipeline.outputBufferSize { try sendStreamBuffer(&state) }
            if output.pos == before && state.hint != 0 { break }
        }
        try sendStreamBuffer(&state)
        stream = nil
        streamContext = nil
        budget.release(state.decoderBytes)
        streamed.withLock { $0 += 1 }
        if state.hint != 0 {
            throw Self.corrupt(path: path, boundary: boundary, "ends before the decoder has its last block")
        }
        Self.checkDecodedSize(state.produced, expected: expected, boundary: boundary, streamBase: streamBase,
                              in: tableMismatch)
        totals.withLock { $0.frames += 1 }
    }

    /// The buffer to decode into: a 1 MiB buffer, taken when none is being
    /// filled (waiting for room in the budget).
    private func outputBuffer(_ state: inout StreamState) throws(WeirError) -> ZSTD_outBuffer {
        if state.current == nil {
            state.current = try takeBuffer(capacity: streamBuffers.size, extra: 0).0
            state.filled = 0
        }
        return ZSTD_outBuffer(dst: state.current, size: streamBuffers.size, pos: state.filled)
    }

    /// Sends the streamed frame's current buffer, if it holds anything.
    private func sendStreamBuffer(_ state: inout StreamState) throws(WeirError) {
        try input.checkUnchanged()
        guard let memory = state.current else { return }
        let filled = state.filled
        state.current = nil
        state.filled = 0
        if filled > 0, let writer {
            control.activity.enter()
            writer.submit(sequence, streamBuffers.wrap(memory, count: filled))
            sequence += 1
        } else {
            if filled > 0 { totals.withLock { $0.bytesOut += filled } }
            streamBuffers.recycle(memory)
        }
    }

    // MARK: Errors

    private static func cancelled(_ path: String) -> WeirError {
        WeirError(.cancelled, path: path, operation: "decompress", reason: "cancelled")
    }

    /// Adds the frame and its offset to an error from libzstd.
    static func located(_ error: WeirError, index: Int, offset: Int) -> WeirError {
        var error = error
        switch error.kind {
        case .corrupt, .checksumMismatch, .memoryLimit, .library, .notZstd, .truncated:
            if !error.reason.contains("(frame ") { error.reason += " (frame \(index), at offset \(offset))" }
            if error.kind == .notZstd { error.kind = .corrupt }
        default:
            break
        }
        return error
    }

    private static func corrupt(path: String, boundary: FrameBoundary, _ detail: String) -> WeirError {
        corrupt(path: path, index: boundary.index, offset: boundary.offset, detail)
    }

    private static func corrupt(path: String, index: Int, offset: Int, _ detail: String) -> WeirError {
        WeirError(.corrupt, path: path, operation: "decompress",
                  reason: "corrupt data: frame \(index) at offset \(offset) \(detail)")
    }
}
