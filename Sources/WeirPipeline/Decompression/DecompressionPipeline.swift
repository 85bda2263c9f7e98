import Dispatch
import FoundationEssentials
import Glibc
import SystemPackage
import WeirFiles
import WeirFormats
import WeirSystem

/// Decompresses any standard zstd stream — weir's own files, one frame or
/// many, skippable frames, pzstd files, concatenations — decoding independent
/// frames in parallel, in bounded memory, from a file or a pipe; and every
/// other input weir decodes: one that starts with gzip, xz, .lzma or lz4
/// (or has them after zstd frames) goes to an `OtherFormatStream`, whose
/// weir-written members of a mapped file decode on the same workers
/// (`WholeMemberDecoder`); with pass-through, an input of no format is
/// copied (`PassThroughCopy`). It is the one entry for `-d` and `-t`.
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
/// The parts, each in a file of this folder: `FrameFeeder` cuts the stream
/// into frames and numbers the output, `WholeFrameDecoder` decodes a frame
/// on a worker, `FrameStreamer` streams a frame too large for the budget,
/// `SeekTableCrossCheck` compares the frames with the seek table; what they
/// share is a `DecodeSession`. A frame whose buffer (its bound rounded up to
/// a size class) or compressed bytes exceed
/// ``DecompressionOptions/parallelFrameLimit`` streams.
///
/// The seek table of a regular file is checked, never used to cut frames:
/// a table that does not match is a warning in ``Statistics/warnings``
/// when decoding, a `.corrupt` error when only testing (no output) or
/// when the input is read by name (``NamedInputs``: a URL).
///
/// Bounds, and why:
/// - the ByteBudget (``DecompressionOptions/inFlightBudget``: `-M` less a
///   reserve for what it does not count, below) holds the memory that grows
///   with the work in flight: the compressed bytes of frames handed out
///   until decoded, every output buffer from its mapping to its unmapping
///   (idle in its pool or freed late by libdispatch included), and a
///   streamed frame's decoder window. A slow consumer stops the reading
///   thread, which stops the reader. The parallel frame limit is half the
///   budget, so a frame decoded whole always fits. Without `-M`, a frame
///   that declares more than 8 MiB raises both, once per size, to hold one
///   such frame per worker and one more (`budget(forFrame:)`, at most
///   256 MiB), when the input shows frames of that size (a seek table that
///   lists several, or the frame before it of the same size): weir's frames
///   from `-9` up are 32–64 MiB. One large frame, as `zstd FILE` writes it,
///   streams instead (issue 81).
/// - outside it: the parts of read pieces that frames in flight share (at
///   most one piece more than frames), the frame being read until it is
///   handed out (at most the parallel frame limit) and the next read, the
///   workers' contexts (no window: they decode into the frame's buffer),
///   the runtime.
/// - at most one frame in progress is buffered, and only up to the parallel
///   frame limit; beyond it, that frame streams and its bytes are let go
///   as soon as they are decoded.
/// - windows are capped by `-M`: every frame's header is checked against
///   `WindowLimit` before its first byte reaches a decoder, whichever path
///   it takes (libzstd skips its own check when it decodes in one pass).
///
/// Who owns what: the reading thread owns the scanner, the buffered bytes,
/// the streaming context and output numbering; workers own a frame while
/// decoding it; the writer's queue owns the reorder buffer; the frame count,
/// the bytes written (`PipelineRun`) and the first failure are behind locks.
package final class DecompressionPipeline: Sendable {
    /// No output only tests the input; with a partial output (resumable),
    /// each frame whose content is written is checkpointed.
    private let ends: PipelineEnds<PipelineOutput?>
    private let options: DecompressionOptions
    private let control: RunControl
    private let budget: ByteBudget
    private let frameBuffers: FrameBuffers
    /// Frames decoded by streaming on the reading thread (for tests).
    private let streamed = Locked(0)
    /// The copy of an input passed through unchanged, while it runs (``cancel()``).
    private let copy = Locked(PassThroughCopy?.none)

    /// Prepares a run. The descriptors remain the caller's to close.
    ///
    /// - Parameters:
    ///   - input: the compressed input (a file or a pipe).
    ///   - output: where the decompressed bytes go; nil only tests the input.
    ///   - inputName: how errors name the input.
    ///   - outputName: how errors name the output.
    ///   - options: checksum verification, memory limit, threads.
    ///   - observer: told of bytes read and written.
    package convenience init(input: FileDescriptor, output: FileDescriptor?, inputName: String, outputName: String,
                            options: DecompressionOptions = DecompressionOptions(), observer: ProgressObserver? = nil) {
        // The one conversion from swift-system's type to the engine's.
        self.init(input: .descriptor(Descriptor(input.rawValue, path: inputName)),
                  output: output.map { .descriptor(Descriptor($0.rawValue, path: outputName)) }, inputName: inputName,
                  outputName: outputName, options: options, observer: observer)
    }

    /// Prepares a run between any input and output (descriptors, or memory).
    ///
    /// With `partial`, the input's descriptor is at the end of the frames
    /// whose content it keeps, and the output's at the end of that content
    /// (``PartialOutput``); the seek table is checked from there on.
    package init(input: PipelineInput, output: PipelineOutput?, inputName: String, outputName: String,
                 options: DecompressionOptions, observer: ProgressObserver? = nil, partial: PartialOutput? = nil) {
        ends = PipelineEnds(input: input, output: output, inputName: inputName, outputName: outputName,
                            observer: observer, partial: partial)
        self.options = options
        // Slots bound the serial decoders' buffers: a streamed frame's, the other formats' (OtherFormatStream).
        self.control = RunControl(slots: OtherFormatStream.blocksInFlight)
        self.budget = ByteBudget(limit: options.inFlightBudget)
        self.frameBuffers = FrameBuffers(budget: budget)
    }

    /// Stops the run from another thread; `run()` throws `.cancelled`.
    package func cancel() {
        control.fail(.cancelled(path: ends.inputName, operation: .decompress))
        copy.withLock { $0 }?.cancel()
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
    /// - Throws: `WeirError`: not zstd, truncated, corrupt (naming the frame
    ///   and its offset), checksum mismatch, memory limit, read or write
    ///   failure; when testing (no output), `.corrupt` for a seek table that
    ///   does not match the frames, naming the entry and what differs.
    package func run() throws(WeirError) -> Statistics {
        let statistics: Statistics
        do throws(WeirError) {
            statistics = try decode()
        } catch {
            // What ended the input early (a URL's stream: NamedInputs), not the truncation it left.
            throw NamedInputs.failure(for: ends.inputName) ?? error
        }
        // An input read by name whose stream ended early may end where a
        // frame, a gzip member or a copied input could: never a success,
        // whatever the decoder made of it (its output is not committed).
        if let failure = NamedInputs.failure(for: ends.inputName) { throw failure }
        return statistics
    }

    /// ``run()``'s work: the input decoded, or copied through.
    private func decode() throws(WeirError) -> Statistics {
        let (input, output, inputName, outputName) = (ends.input, ends.output, ends.inputName, ends.outputName)
        let observer = ends.observer
        if case .descriptor(let file) = input, try Self.passesThrough(file, options: options) {
            return try passThrough(file)
        }
        let control = self.control
        let budget = self.budget
        let options = self.options
        let frames = Locked(0)
        let kind = input.kind
        // One digested dictionary for every decoder, made before any channel opens.
        let dictionary = try options.dictionary.map { dictionary throws(WeirError) in
            try DecompressionDictionary(dictionary)
        }

        // A written piece's buffer stays in the budget until it is back in
        // its pool; after a failure, cancelling the budget (or a slot) wakes the thread.
        let frameLog = ends.partial.map { DecompressionCheckpointFeed(partial: $0) }
        let whole = try wholeFile(kind)
        let run = PipelineRun(
            control: control, input: input, kind: kind, inputName: inputName, readSize: whole ?? options.readSize,
            mapFiles: options.mapInput, sizesReadBuffers: options.sizesReadBuffers, output: output,
            outputName: outputName, sparse: options.sparse,
            observer: observer, countsReads: false, onWritten: { frameLog?.pieceWritten($0, size: $1) },
            wake: {
                budget.cancel()
                control.slots.signal()
            })
        let reader = run.reader
        // The progress follows the decoding: each decoder tells of the
        // compressed bytes it took (a frame is read whole long before it is
        // decoded), the feeder of the bytes no decoder takes.
        let tally = WorkTally(observer: observer, stepDelay: options.stepDelayForTesting,
                              stepHold: options.stepHoldForTesting)
        let consumed = tally.consumed
        // One worker decodes a whole zstd frame, or a whole member of another format.
        let pool = WorkerPool<DecodingWorker>(
            width: options.resolvedThreads, label: "weir.decompress",
            makeContext: { () throws(WeirError) in
                let context = try DecompressionContext(windowLogMax: options.windowLimit.logMax,
                                                       verifyChecksum: options.verifyChecksum, stableOutput: true,
                                                       dictionary: dictionary, prefix: options.patchReference,
                                                       path: inputName)
                context.consumed = consumed
                return DecodingWorker(zstd: context, path: inputName)
            },
            onContextFailure: { control.fail($0) })

        var tableCheck: SeekTableCheck?
        var streamBase = 0
        var tableListsSeveral = false
        if case .regularFile(let size) = kind, let file = input.descriptor {
            streamBase = max(0, Int(lseek(file.fd, 0, SEEK_CUR)))
            do throws(WeirError) {
                let table = try SeekTable.decode(fileSize: size, path: inputName) { count, offset throws(WeirError) in
                    try file.read(count: count, at: offset, operation: .readSeekTable)
                }
                tableCheck = SeekTableCheck(table: table, readError: nil, fileSize: size, streamBase: streamBase)
                tableListsSeveral = (table?.entries.filter { $0.decompressedSize > 0 }.count ?? 0) > 1
            } catch {
                tableCheck = SeekTableCheck(table: nil, readError: error, fileSize: size, streamBase: streamBase)
            }
        }
        let crossCheck = SeekTableCrossCheck(tableCheck, streamBase: streamBase)

        let read = Locked((bytes: 0, windowLog: Int?.none))
        let stopped = Locked(WeirError?.none)
        let session = DecodeSession(path: inputName, options: options, control: control, budget: budget,
                                    frameBuffers: frameBuffers, run: run, frames: frames,
                                    streamed: streamed, crossCheck: crossCheck, dictionary: dictionary,
                                    frameLog: frameLog, tally: tally, wholeInput: whole != nil,
                                    tableListsSeveral: tableListsSeveral)
        control.startThread(name: "weir.decoder") {
            let feeder = FrameFeeder(session: session, pool: pool)
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
                read.withLock { $0 = (feeder.bytesIn, feeder.windowLog) }
            } catch {
                // Zeros read from a file cut while mapped make any error; say what
                // happened, with that error as the cause.
                do throws(WeirError) { try reader.checkUnchanged() } catch var changed {
                    changed.cause = error
                    control.fail(changed)
                }
                stopped.withLock { $0 = error }
            }
        }

        control.activity.wait()
        // The frames handed out before the reading thread failed are written
        // first, as zstd writes what it decoded before it stops.
        if let error = stopped.current { control.fail(error) }
        tally.settle(at: read.current.bytes)
        var statistics = try run.end(bytesIn: read.current.bytes)
        statistics.frames = frames.current
        statistics.windowLog = read.current.windowLog
        statistics.threads = options.resolvedThreads
        if let mismatch = crossCheck.mismatch {
            // An input read by name (a URL: NamedInputs) may have been
            // replaced between its requests without a validator that says so
            // (docs/remote.md): a table that stops matching is its only sign.
            if output == nil {
                throw WeirError.corruptSeekTable(path: inputName, operation: .test, mismatch.detail,
                                                 cause: mismatch.cause)
            }
            if NamedInputs.isRegistered(inputName) {
                throw WeirError.corruptSeekTable(path: inputName, operation: .read, mismatch.detail
                    + " (read in several requests: the object may have changed between them)", cause: mismatch.cause)
            }
            statistics.warnings.append("seek table does not match the frames; ignoring it (\(mismatch.detail))")
        }
        return statistics
    }

    /// The size of a regular file mapped whole, as one piece, from its
    /// start: one that starts with another format than zstd, whose members
    /// are then found and decoded in parallel (``OtherFormatStream``), and
    /// which ISA-L's inflate decodes whole (``MixedStreamDecoder``); its
    /// pages are read as they are touched. Nil for any other input.
    private func wholeFile(_ kind: InputKind) throws(WeirError) -> Int? {
        guard options.mapInput, ends.partial == nil, case .descriptor(let file) = ends.input,
              let size = kind.size, size > 0, lseek(file.fd, 0, SEEK_CUR) == 0,
              let first = try InputPeek.firstBytes(of: file, count: CompressedFormat.magicLength),
              let format = CompressedFormat.detect(first), format != .zstd else { return nil }
        return size
    }

    /// Whether `input` is copied through rather than decoded: pass-through
    /// is on and the input does not start with a zstd or skippable frame's
    /// magic number, nor another format's, as zstd 1.5.4 decides: an input
    /// of 1 to 3 bytes passes through; an empty one does not (it is refused
    /// as not zstd, as zstd refuses it). An input that cannot be looked at
    /// without reading it (a terminal, a device) is decoded.
    static func passesThrough(_ input: Descriptor, options: DecompressionOptions) throws(WeirError) -> Bool {
        guard options.passThrough, let first = try InputPeek.firstBytes(of: input, count: 4),
              !first.isEmpty else { return false }
        return !FrameHeader.startsFrame(first) && CompressedFormat.detect(first) == nil
    }

    /// Copies an input that is not compressed through unchanged (``PassThroughCopy``).
    private func passThrough(_ file: Descriptor) throws(WeirError) -> Statistics {
        let copy = PassThroughCopy(input: file, output: ends.output, inputName: ends.inputName,
                                   outputName: ends.outputName, options: options, observer: ends.observer)
        self.copy.withLock { $0 = copy }
        if control.failure != nil { copy.cancel() }
        return try copy.run()
    }
}
