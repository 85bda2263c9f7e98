import Dispatch

/// Decodes one frame too large for the budget, or whose size is unknown
/// until it ends (the single frame of `zstd -T2`), by streaming on the
/// reading thread as its bytes arrive, into 1 MiB buffers that each go to
/// the writer as an output piece of their own.
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
    private var context: DecompressionContext?

    /// The frame being streamed.
    private struct State {
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

    init(session: DecodeSession) {
        self.session = session
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
        let window = header.windowSize + 2 * UInt64(header.blockMaximumSize)
        let decoderBytes = Int(min(window, UInt64(max(0, session.budget.limit - buffers.size))))
        guard session.frameBuffers.reserve(decoderBytes) else { throw session.control.failure ?? session.cancelled }
        do throws(WeirError) {
            context = try DecompressionContext(windowLogMax: options.windowLimit.logMax,
                                               verifyChecksum: options.verifyChecksum,
                                               dictionary: session.dictionary, path: session.path)
        } catch {
            session.budget.release(decoderBytes)
            throw error
        }
        state = State(index: index, start: start, fed: start, decoderBytes: decoderBytes)
    }

    /// Feeds the frame its next bytes (those from ``fed`` on), sending each
    /// buffer as it fills.
    func feed(_ data: DispatchData, sequence: inout Int) throws(WeirError) {
        guard var state, let context else { return }
        var failure: WeirError?
        data.enumerateBytes { region, _, stop in
            let source = UnsafeRawBufferPointer(region)
            var consumed = 0
            while consumed < source.count {
                do throws(WeirError) {
                    if state.hint == 0 {
                        throw session.corrupt(index: state.index, offset: state.start,
                                              "ends before its last block (at offset \(state.fed + consumed))")
                    }
                    try decode(source, consumed: &consumed, context: context, state: &state, sequence: &sequence)
                } catch {
                    failure = DecodeSession.located(error, index: state.index, offset: state.start)
                    stop = true
                    return
                }
            }
            state.fed += region.count
        }
        self.state = state
        if let failure { throw failure }
    }

    /// Stream offset up to which the frame was fed.
    var fed: Int? { state?.fed }

    /// Flushes the frame, checks that it ended where its blocks end, and
    /// sends the last buffer.
    func finish(boundary: FrameBoundary, expected: SeekTableCheck.Expectation?, sequence: inout Int) throws(WeirError) {
        guard var state, let context else { return }
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        while state.hint != 0 {
            let before = state.produced
            var consumed = 0
            do throws(WeirError) {
                try decode(empty, consumed: &consumed, context: context, state: &state, sequence: &sequence)
            } catch {
                self.state = state
                throw DecodeSession.located(error, index: state.index, offset: state.start)
            }
            if state.produced == before && state.hint != 0 { break }
        }
        try send(&state, sequence: &sequence)
        self.state = nil
        self.context = nil
        session.budget.release(state.decoderBytes)
        session.streamed.withLock { $0 += 1 }
        if state.hint != 0 {
            throw session.corrupt(index: boundary.index, offset: boundary.offset,
                                  "ends before the decoder has its last block")
        }
        try session.checkContentSize(boundary, produced: state.produced)
        session.crossCheck.frameDecoded(boundary, produced: state.produced, expected: expected)
        session.frames.withLock { $0 += 1 }
    }

    /// One call of the decoder into the current buffer (taken when none is
    /// being filled, waiting for room in the budget); sends it when full.
    private func decode(_ source: UnsafeRawBufferPointer, consumed: inout Int, context: DecompressionContext,
                        state: inout State, sequence: inout Int) throws(WeirError) {
        if state.current == nil {
            state.current = try session.takeBuffer(capacity: buffers.size, extra: 0).0
            state.filled = 0
        }
        let before = state.filled
        state.hint = try context.decompressStream(
            source, consumed: &consumed,
            into: UnsafeMutableRawBufferPointer(start: state.current, count: buffers.size), filled: &state.filled)
        state.produced += state.filled - before
        if state.filled == buffers.size { try send(&state, sequence: &sequence) }
    }

    /// Sends the current buffer, if it holds anything.
    private func send(_ state: inout State, sequence: inout Int) throws(WeirError) {
        try session.input.checkUnchanged()
        guard let memory = state.current else { return }
        let filled = state.filled
        state.current = nil
        state.filled = 0
        if filled > 0 {
            session.send(memory, count: filled, from: buffers, number: sequence, ticket: session.control.ticket())
            sequence += 1
        } else {
            buffers.recycle(memory)
        }
    }
}
