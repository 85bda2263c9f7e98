import WeirFormats
import WeirSystem

/// What the parts of one ``DecompressionPipeline`` run share: the input and
/// the output, the budget and the buffers it counts, the run's control and
/// its totals. The parts are the ``FrameFeeder`` (cutting the stream into
/// frames), the ``WholeFrameDecoder`` (frames decoded on the workers), the
/// ``FrameStreamer`` (a frame too large for the budget), the
/// ``OtherFormatStream`` (what is not zstd) with its ``WholeMemberDecoder``,
/// and the ``SeekTableCrossCheck``.
///
/// Every member is safe to use from any thread; the parts themselves say
/// which thread owns their own state.
package struct DecodeSession: Sendable {
    /// How errors name the input.
    let path: String
    let options: DecompressionOptions
    let control: RunControl
    let budget: ByteBudget
    let frameBuffers: FrameBuffers
    /// The reader and the writer (none when only testing).
    let run: PipelineRun
    /// Frames decoded.
    let frames: Locked<Int>
    /// Frames decoded by streaming rather than whole (for tests).
    let streamed: Locked<Int>
    let crossCheck: SeekTableCrossCheck
    /// The run's dictionary (`-D`), shared by every decoder.
    let dictionary: DecompressionDictionary?
    /// Tells a resumable output of the frames whose content is written.
    let frameLog: DecompressionCheckpointFeed?
    /// Tells the progress of the input decoded and of each frame.
    let tally: WorkTally
    /// The input comes as one mapped region, the whole file, and starts
    /// with another format: its members may be decoded in parallel
    /// (``OtherFormatStream``).
    let wholeInput: Bool
    /// The file's seek table lists more than one frame: its frames are
    /// independent chunks, decoded side by side whatever their size.
    let tableListsSeveral: Bool

    /// One more frame decoded.
    func frameDecoded() {
        frames.withLock { $0 += 1 }
        tally.frameDone()
    }

    /// An output buffer for `capacity` bytes, with `extra` more bytes of the
    /// budget held, waiting for room.
    func takeBuffer(capacity: Int, extra: Int) throws(WeirError) -> (UnsafeMutableRawPointer, BufferPool) {
        switch frameBuffers.take(capacity: capacity, extra: extra) {
        case .buffer(let memory, let pool):
            return (memory, pool)
        case .cancelled:
            throw control.failure ?? cancelled
        case .outOfMemory:
            throw WeirError.outOfMemory(path: path, operation: .decompress)
        }
    }

    /// The input, asked before any output is sent whether a mapped file was cut.
    var input: ChunkReader { run.reader }

    /// Sends `count` bytes of `buffer` (from `pool`) as output piece `number`;
    /// the buffer goes back to its pool once written (at once when only
    /// testing), and `ticket` is released then; with `keepsPages`, whole
    /// (``BufferPool/wrap(_:count:keepsPages:)``).
    func send(_ buffer: UnsafeMutableRawPointer, count: Int, from pool: BufferPool, number: Int, ticket: RunTicket,
              keepsPages: Bool = false) {
        if run.writer == nil {
            // Not through a DispatchData, whose deallocator would give the
            // buffer back later, on another queue, while the budget waits.
            pool.recycle(buffer)
            run.discard(number, count: count, ticket: ticket)
        } else {
            run.submit(number, pool.wrap(buffer, count: count, keepsPages: keepsPages), ticket: ticket)
        }
    }

    var cancelled: WeirError {
        WeirError.cancelled(path: path, operation: .decompress)
    }

    /// Adds the frame and its offset to an error from libzstd (its reason
    /// names them after the rest, unless it already names a frame).
    package static func located(_ error: WeirError, index: Int, offset: Int) -> WeirError {
        var error = error
        switch error.kind {
        case .corrupt, .checksumMismatch, .memoryLimit, .library, .notZstd, .truncated:
            error = error.located(frame: index, offset: offset, .trailing)
            if error.kind == .notZstd { error.kind = .corrupt }
        default:
            break
        }
        return error
    }

    /// Throws when a frame's header declares a content size that its blocks
    /// did not produce. libzstd's streaming decoder (1.5.4), which decodes a
    /// frame given in several pieces, skips that check when the last block
    /// is empty; its one-pass decoder makes it (found by the decoder fuzz target).
    func checkContentSize(_ boundary: FrameBoundary, produced: Int) throws(WeirError) {
        guard let declared = boundary.header.contentSize, declared != UInt64(produced) else { return }
        throw corrupt(index: boundary.index, offset: boundary.offset,
                      "declares \(declared) bytes of content but decodes to \(produced)")
    }

    /// Corrupt data in frame `index`, which starts at stream offset `offset`.
    func corrupt(index: Int, offset: Int, _ detail: String) -> WeirError {
        WeirError.corrupt(path: path, operation: .decompress, detail, frame: index, offset: offset)
    }
}
