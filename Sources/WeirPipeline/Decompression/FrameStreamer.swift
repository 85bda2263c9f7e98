import Dispatch
import WeirFormats
import WeirSystem

/// Decodes one frame too large for the budget, or whose size is unknown
/// until it ends (the single frame of `zstd -T2`), by streaming on the
/// reading thread as its bytes arrive, into 1 MiB buffers that each go to
/// the writer as an output piece of their own, each holding one of the
/// run's slots until written (``OtherFormatStream/blocksInFlight``).
///
/// Its decoder's window counts in the budget while it streams (at most the
/// budget less one output buffer, so the frame can always go on); the
/// decoder is made for the frame and freed after it. Everything here runs
/// on the reading thread.
final class FrameStreamer {
    /// The size of each buffer of streamed output: one libdispatch write gather.
    static let outputBufferSize = 1 << 20

    private let session: DecodeSession
    private let buffers: BufferPool
    private var state: State?

    /// The frame being streamed.
    private struct State {
        let index: Int
        let start: Int
        /// Stream offset up to which its bytes went to the decoder.
        var fed: Int
        /// Its decoder, made for the frame and freed after it: libzstd's,
        /// or its blocks on all the workers.
        var decoder: Decoding
        var output: PooledOutput
        /// The bytes of the budget its decoder's buffers take.
        let decoderBytes: Int
    }

    /// How the frame is decoded: by libzstd on the reading thread, or by
    /// blocks on all the workers (``ParallelFrameDecoder``, issue 81).
    private enum Decoding {
        case stream(FrameDecoder)
        case blocks(ParallelFrameDecoder)

        var produced: Int {
            switch self {
            case .stream(let decoder): decoder.produced
            case .blocks(let decoder): decoder.produced
            }
        }
    }

    /// The buffers a streamed frame is decoded into, from the run's pool of
    /// 1 MiB: each taken when the last was sent (waiting for room in the
    /// budget), and sent as output piece `sequence` once full.
    private struct PooledOutput: DecoderOutput {
        let session: DecodeSession
        let buffers: BufferPool
        /// The buffer being filled, and how much of it is.
        var current: UnsafeMutableRawPointer?
        var filled = 0
        /// The next output piece number (the feeder's, lent for a call).
        var sequence = 0

        mutating func buffer() throws(WeirError) -> (UnsafeMutableRawBufferPointer, filled: Int) {
            if current == nil {
                current = try session.takeBuffer(capacity: buffers.size, extra: 0).0
                filled = 0
            }
            return (UnsafeMutableRawBufferPointer(start: current, count: buffers.size), filled)
        }

        mutating func decoded(upTo filled: Int) throws(WeirError) {
            self.filled = filled
            if filled == buffers.size { try send() }
        }

        /// Sends the current buffer, if it holds anything.
        mutating func send() throws(WeirError) {
            try session.input.checkUnchanged()
            guard let memory = current else { return }
            let count = filled
            current = nil
            filled = 0
            if count > 0 {
                // One of the run's few slots, as the other formats' serial blocks: a buffer or two ahead of
                // the writer keep both busy, and the rest of the budget would only pile up behind a slow output.
                guard let ticket = session.control.takeSlot() else {
                    buffers.recycle(memory)
                    throw session.control.failure ?? session.cancelled
                }
                session.send(memory, count: count, from: buffers, number: sequence, ticket: ticket)
                sequence += 1
            } else {
                buffers.recycle(memory)
            }
        }
    }

    private let pool: WorkerPool<DecodingWorker>

    init(session: DecodeSession, pool: WorkerPool<DecodingWorker>) {
        self.session = session
        self.pool = pool
        self.buffers = session.frameBuffers.pool(for: Self.outputBufferSize)
    }

    /// Whether a frame is being streamed.
    var isActive: Bool { state != nil }

    /// Where the frame being streamed starts, if any.
    var frameStart: Int? { state?.start }

    /// Starts streaming the frame `index` that begins at stream offset
    /// `start`, once its header is known and within the window limit.
    func begin(index: Int, start: Int, header: FrameHeader) throws(WeirError) {
        let options = session.options
        try options.windowLimit.check(header, index: index, offset: start, path: session.path)
        let byBlocks = ParallelFrameDecoder.takes(header, options: options)
        let threads = options.resolvedThreads
        let window = byBlocks ? ParallelFrameDecoder.footprint(windowSize: header.windowSize, threads: threads)
            : header.windowSize + 2 * UInt64(header.blockMaximumSize)
        let decoderBytes = Int(min(window, UInt64(max(0, session.budget.limit - buffers.size))))
        guard session.frameBuffers.reserve(decoderBytes) else { throw session.control.failure ?? session.cancelled }
        let decoder: Decoding
        if byBlocks {
            decoder = .blocks(ParallelFrameDecoder(header: header, session: session, pool: pool))
        } else {
            let context: DecompressionContext
            do throws(WeirError) {
                context = try DecompressionContext(windowLogMax: options.windowLimit.logMax,
                                                   verifyChecksum: options.verifyChecksum,
                                                   dictionary: session.dictionary, prefix: options.patchReference,
                                                   path: session.path)
                context.consumed = session.tally.consumed
            } catch {
                session.budget.release(decoderBytes)
                throw error
            }
            decoder = .stream(FrameDecoder(context: context, path: session.path))
        }
        state = State(index: index, start: start, fed: start, decoder: decoder,
                      output: PooledOutput(session: session, buffers: buffers), decoderBytes: decoderBytes)
    }

    /// Feeds the frame its next bytes (those from ``fed`` on), sending each
    /// buffer as it fills.
    func feed(_ data: DispatchData, sequence: inout Int) throws(WeirError) {
        guard var state else { return }
        state.output.sequence = sequence
        defer {
            sequence = state.output.sequence
            self.state = state
        }
        do throws(WeirError) {
            switch state.decoder {
            case .stream(var decoder):
                defer { state.decoder = .stream(decoder) }
                try decoder.decode(data, into: &state.output)
            case .blocks(let decoder):
                try decoder.feed(data, sequence: state.output.sequence)
            }
        } catch {
            throw DecodeSession.located(error, index: state.index, offset: state.start)
        }
        state.fed += data.count
    }

    /// Before an error found past the bytes fed (the stream cut, a later
    /// header damaged): the blocks fed so far are decoded and their whole
    /// pieces sent, as libzstd's streaming decoder has done with them by
    /// then; an error among them is the one thrown.
    func settle() throws(WeirError) {
        guard let state, case .blocks(let decoder) = state.decoder else { return }
        do throws(WeirError) {
            try decoder.settle()
        } catch {
            throw DecodeSession.located(error, index: state.index, offset: state.start)
        }
    }

    /// Stream offset up to which the frame was fed.
    var fed: Int? { state?.fed }

    /// Flushes the frame, checks that it ended where its blocks end, and
    /// sends the last buffer.
    func finish(boundary: FrameBoundary, expected: SeekTableCheck.Expectation?, sequence: inout Int) throws(WeirError) {
        guard var state else { return }
        state.output.sequence = sequence
        do throws(WeirError) {
            switch state.decoder {
            case .stream(var decoder):
                // What the decoder still holds, into a buffer that fills.
                defer { state.decoder = .stream(decoder) }
                if !decoder.ended {
                    try decoder.decode(UnsafeRawBufferPointer(start: nil, count: 0), into: &state.output)
                }
            case .blocks(let decoder):
                try decoder.finish(sequence: &state.output.sequence)
            }
        } catch {
            sequence = state.output.sequence
            self.state = state
            throw DecodeSession.located(error, index: state.index, offset: state.start)
        }
        try state.output.send()
        sequence = state.output.sequence
        self.state = nil
        session.budget.release(state.decoderBytes)
        session.streamed.withLock { $0 += 1 }
        if case .stream(let decoder) = state.decoder {
            do throws(WeirError) {
                try decoder.checkEnded()
            } catch {
                throw DecodeSession.located(error, index: boundary.index, offset: boundary.offset)
            }
        }
        try session.checkContentSize(boundary, produced: state.decoder.produced)
        session.crossCheck.frameDecoded(boundary, produced: state.decoder.produced, expected: expected)
        session.frameDecoded()
    }
}
