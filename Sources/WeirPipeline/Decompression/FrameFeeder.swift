import Dispatch
import Glibc
import WeirFormats
import WeirSystem

/// Cuts the compressed stream into frames as its pieces arrive and decides
/// where each goes: a frame whose output buffer and compressed bytes fit
/// within the parallel frame limit to the ``WholeFrameDecoder``; a larger
/// one to the ``FrameStreamer`` as soon as that is known: from its header
/// when it declares its size, from its blocks or its bytes so far when it
/// does not. Numbers the output pieces in stream order.
///
/// The budget grows for a frame that declares more than it holds only when
/// the input shows frames of that size (issue 81): the file's seek table
/// lists several, or the frame before it declared the same size, as weir's
/// frames from `-9` do. One large frame as `zstd FILE` writes it streams
/// from its header on, in its window and 1 MiB buffers: decoded whole, it
/// was held in one buffer of its size before its first byte went out, and
/// there is no other frame to decode beside it (docs/decompression.md,
/// "One frame from zstd", has the peaks).
///
/// A frame's buffer is the size its header declares only when that is no
/// more than its blocks can hold (block count × Block_Maximum_Size, known
/// once the scanner saw the frame end), otherwise that bound; libzstd checks
/// that the content fills it exactly. Every method runs on the reading
/// thread, which owns all state here.
final class FrameFeeder {
    private let session: DecodeSession
    private let whole: WholeFrameDecoder
    private let streamer: FrameStreamer
    private var frameLimit: Int
    private var scanner: FrameScanner
    /// Stream bytes not yet handed out, starting at stream offset `bufferStart`.
    private var buffer = DispatchData.empty
    private var bufferStart = 0
    /// The next output piece number for the writer.
    private var sequence = 0
    /// The frame whose header last grew the budget (each is looked at once).
    private var grownAt: Int?
    /// The content size the last zstd frame that ended declared, if any.
    private var lastDeclared: UInt64?
    /// The largest ``FrameHeader/windowLog`` of the zstd frames seen.
    private(set) var windowLog: Int?
    /// What follows the zstd frames when it is another format (or, with
    /// pass-through, anything): from there on, every piece goes to it.
    private var tail: OtherFormatStream?

    private let pool: WorkerPool<DecodingWorker>

    init(session: DecodeSession, pool: WorkerPool<DecodingWorker>) {
        self.session = session
        self.pool = pool
        self.whole = WholeFrameDecoder(session: session, pool: pool)
        self.streamer = FrameStreamer(session: session, pool: pool)
        self.frameLimit = session.options.parallelFrameLimit
        self.scanner = FrameScanner(path: session.path, operation: .decompress)
        scanner.tailPolicy = session.options.passThrough ? .anything : .otherFormats
    }

    /// Compressed bytes consumed.
    var bytesIn: Int { scanner.offset + (tail?.bytesIn ?? 0) }

    /// Takes the next piece of the stream.
    func consume(_ piece: DispatchData) throws(WeirError) {
        if let tail { return try tail.feed(piece, sequence: &sequence) }
        let boundaries: [FrameBoundary]
        do throws(WeirError) {
            boundaries = try scanner.feed(piece)
        } catch where error.kind == .notZstd {
            // As zstd words it: the input does not start with a frame.
            throw WeirError.notZstd(path: session.path, operation: .decompress)
        } catch {
            // The whole frames before the damage, in this piece too, go to
            // the output before the error (zstd writes them); so do the blocks
            // of a streamed frame fed so far, or their own error first.
            buffer.append(piece)
            for boundary in scanner.endedBeforeFailure { try frameEnded(boundary) }
            try streamer.settle()
            throw error
        }
        buffer.append(piece)
        for boundary in boundaries {
            try frameEnded(boundary)
        }
        if let start = scanner.tailStart { return try startTail(at: start) }
        if let start = scanner.currentFrameStart, let header = scanner.currentHeader, !header.isSkippable {
            if !streamer.isActive {
                if let size = header.contentSize, growsBudget(forFrame: size) {
                    grow(forFrame: size, index: scanner.frameCount)
                }
                // Streamed as soon as it cannot be decoded whole: its declared size, or (declaring none) the
                // content its blocks so far can hold, or its compressed bytes, past the parallel frame limit.
                let declared = header.contentSize.map { $0 > UInt64(frameLimit) || !fitsWhole(Int($0)) } ?? false
                let bound = header.contentSize == nil && !fitsWhole(scanner.currentContentBound)
                if declared || bound || scanner.currentFrameBytes > frameLimit {
                    try streamer.begin(index: scanner.frameCount, start: start, header: header)
                }
            }
            try feedStreamer(upTo: scanner.offset)
        }
        // Keep only the bytes of the frame in progress not yet decoded.
        let keep = streamer.isActive ? scanner.offset : (scanner.currentFrameStart ?? scanner.offset)
        if keep > bufferStart {
            buffer = buffer.subdata(in: (keep - bufferStart) ..< buffer.count)
            bufferStart = keep
        }
    }

    /// Whether a frame that declares `size` bytes may grow the budget to be
    /// decoded whole: when the input shows frames of that size, independent
    /// chunks decoded side by side (its seek table lists several, or the
    /// frame before it declared the same size, as weir's frames from `-9`).
    /// Otherwise, past the parallel frame limit, it streams (issue 81).
    private func growsBudget(forFrame size: UInt64) -> Bool {
        session.tableListsSeveral || lastDeclared == size
    }

    /// Raises the budget for a frame larger than the default budget holds,
    /// before it is read whole, so that frames of that size decode side by
    /// side (``DecompressionOptions/budget(forFrame:)``); it never shrinks.
    private func grow(forFrame contentSize: UInt64, index: Int) {
        guard index != grownAt else { return }
        grownAt = index
        guard contentSize <= UInt64(Int.max),
            let grown = session.options.budget(forFrame: Int(contentSize)), grown > session.budget.limit
        else { return }
        session.budget.raise(to: grown)
        frameLimit = max(frameLimit, DecompressionOptions.parallelFrameLimit(budget: grown))
    }

    /// Hands the rest of the stream, from `start` on, to an ``OtherFormatStream``.
    private func startTail(at start: Int) throws(WeirError) {
        let rest = slice(start, bufferStart + buffer.count)
        (buffer, bufferStart) = (.empty, bufferStart + buffer.count)
        let tail = OtherFormatStream(session: session, pool: pool, start: start)
        self.tail = tail
        try tail.feed(rest, sequence: &sequence)
    }

    /// Declares the end of the input.
    func finish() throws(WeirError) {
        do throws(WeirError) {
            try scanner.finish()
        } catch {
            // A frame cut short: the blocks it streamed go out first, or their own error.
            try streamer.settle()
            throw error
        }
        if tail == nil, let start = scanner.tailStart { try startTail(at: start) }
        try tail?.finish(sequence: &sequence)
        session.crossCheck.finish()
        if scanner.offset == 0 && tail == nil {
            throw WeirError.notZstd(path: session.path, operation: .decompress, "empty input")
        }
    }

    /// The bytes of the stream from `start` to `end` (both still buffered).
    private func slice(_ start: Int, _ end: Int) -> DispatchData {
        buffer.subdata(in: (start - bufferStart) ..< (end - bufferStart))
    }

    /// Gives the streamed frame, if any, its bytes up to stream offset `end`.
    private func feedStreamer(upTo end: Int) throws(WeirError) {
        guard let fed = streamer.fed, end > fed else { return }
        try streamer.feed(slice(fed, end), sequence: &sequence)
    }

    /// Acts on a frame the scanner has seen end.
    private func frameEnded(_ boundary: FrameBoundary) throws(WeirError) {
        let expected = session.crossCheck.frameFound(boundary)
        if boundary.header.isSkippable {
            session.tally.took(boundary.compressedSize)  // no decoder takes it
            session.frameLog?.skippable(size: boundary.compressedSize)
            return
        }
        if let delay = session.options.frameDelayForTesting, delay > 0 { usleep(UInt32(min(delay, 60) * 1e6)) }
        defer { lastDeclared = boundary.header.contentSize }
        windowLog = max(windowLog ?? 0, boundary.header.windowLog)
        if streamer.frameStart == boundary.offset {
            try feedStreamer(upTo: boundary.end)
            try streamer.finish(boundary: boundary, expected: expected, sequence: &sequence)
            return handedOut(boundary)
        }
        let bound = boundary.contentBound
        if let declared = boundary.header.contentSize, declared > UInt64(bound) {
            throw session.corrupt(index: boundary.index, offset: boundary.offset,
                                  "declares \(declared) bytes of content, more than its \(boundary.blockCount) "
                                  + "blocks can hold (\(bound))")
        }
        let capacity = boundary.header.contentSize.map { Int($0) } ?? bound
        if let declared = boundary.header.contentSize, growsBudget(forFrame: declared) {
            grow(forFrame: declared, index: boundary.index)
        }
        if !fitsWhole(capacity) || boundary.compressedSize > frameLimit {
            try streamer.begin(index: boundary.index, start: boundary.offset, header: boundary.header)
            try feedStreamer(upTo: boundary.end)
            try streamer.finish(boundary: boundary, expected: expected, sequence: &sequence)
            return handedOut(boundary)
        }
        try session.options.windowLimit.check(boundary.header, index: boundary.index, offset: boundary.offset,
                                              path: session.path)
        // Told before its one piece is sent, which may be written at once.
        session.frameLog?.frame(compressedSize: boundary.compressedSize, checksum: boundary.contentChecksum,
                                end: sequence + 1)
        try whole.submit(boundary, data: slice(boundary.offset, boundary.end), capacity: capacity,
                         expected: expected, number: sequence)
        sequence += 1
    }

    /// Tells the frame log of a streamed frame whose pieces are all sent.
    private func handedOut(_ boundary: FrameBoundary) {
        session.frameLog?.frame(compressedSize: boundary.compressedSize, checksum: boundary.contentChecksum,
                                end: sequence)
    }

    /// Whether a frame of `capacity` decoded bytes gets a buffer of its own:
    /// when the buffer (its size class) is within the parallel frame limit.
    private func fitsWhole(_ capacity: Int) -> Bool {
        FrameBuffers.bufferSize(for: capacity) <= frameLimit
    }
}
