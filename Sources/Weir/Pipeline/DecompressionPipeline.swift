import CZstd
import Dispatch
import FoundationEssentials

/// Decompresses any standard zstd stream — one frame or many, skippable
/// frames, pzstd files, concatenated `.zst` files — from one descriptor to
/// another, with reading, decoding and writing overlapped.
///
/// Data flow:
///
///     input fd ─▶ ChunkReader (DispatchIO stream channel, queue "weir.read")
///        │  reads of `readSize`; the next read is started before the
///        │  current one is decoded, so reading overlaps decoding
///        ▼
///     decoding thread (a Thread of its own, one ZSTD_DCtx): each region of
///        │  the read goes through ZSTD_decompressStream into pooled 1 MiB
///        │  buffers (wrapped in DispatchData without a copy)
///        ▼
///     OrderedWriter (DispatchIO stream channel, queue "weir.write")
///        ▼
///     output fd; a written buffer gives its output slot back.
///
/// Bounds, and why:
/// - two reads at most (the one decoded and the one prefetched): input
///   memory is `2 × readSize`.
/// - `outputSlots` (8 buffers of 1 MiB) between the decoder and the output:
///   a slow consumer stops the decoder, which stops the reader, so memory
///   stays flat; the decoder takes a slot before it fills a buffer.
/// - the window a frame may ask for is capped by `memoryLimit`: a
///   ``FrameScanner`` reads each piece's frame headers before libzstd sees
///   the piece, and ``WindowLimit`` refuses a frame asking for more, so a
///   hostile header cannot make it allocate without bound (libzstd's own
///   `ZSTD_d_windowLogMax` is skipped for frames it decodes in one pass).
///   The scanner only advises: when it finds bad data it stops, and libzstd
///   reports the damage where it meets it.
///
/// Who owns what: the decoding thread owns the context, the buffer being
/// filled and the offsets; the writer's queue owns `bytesOut`; `RunControl`
/// holds the first failure.
public final class DecompressionPipeline: @unchecked Sendable {
    /// The size of each output buffer: one libdispatch write gather.
    static let outputBufferSize = 1 << 20
    /// Output buffers queued for writing before the decoder waits.
    static let outputSlots = 8

    private let input: Int32
    private let output: Int32?
    private let inputName: String
    private let outputName: String
    private let options: DecompressionOptions
    private let control: RunControl
    private let observer: ProgressObserver?

    /// Prepares a run. The descriptors remain the caller's to close.
    ///
    /// - Parameters:
    ///   - input: the compressed input.
    ///   - output: where the decompressed bytes go; nil only tests the input.
    ///   - inputName: how errors name the input.
    ///   - outputName: how errors name the output.
    ///   - options: checksum verification, memory limit.
    ///   - observer: told of bytes read and written.
    public init(input: Int32, output: Int32?, inputName: String, outputName: String,
                options: DecompressionOptions = DecompressionOptions(), observer: ProgressObserver? = nil) {
        self.input = input
        self.output = output
        self.inputName = inputName
        self.outputName = outputName
        self.options = options
        self.observer = observer
        self.control = RunControl(slots: Self.outputSlots)
    }

    /// Stops the run from another thread; `run()` throws `.cancelled`.
    public func cancel() {
        control.fail(WeirError(.cancelled, path: inputName, operation: "decompress", reason: "cancelled"))
    }

    /// Decompresses until the end of the input, a failure or ``cancel()``.
    ///
    /// - Returns: what was done; `frames` counts the frames decoded.
    /// - Throws: ``WeirError``: not zstd, truncated, corrupt, checksum
    ///   mismatch, memory limit, read or write failure.
    public func run() throws(WeirError) -> Statistics {
        let started = DispatchTime.now()
        let control = self.control
        let options = self.options
        let inputName = self.inputName
        let observer = self.observer
        let cleanup = DispatchGroup()
        let bytesOut = Locked(0)

        let reader = ChunkReader(fd: input, path: inputName, kind: InputKind.of(input),
                                 chunkSize: options.readSize, mapFiles: false, live: observer != nil, cleanup: cleanup,
                                 onBytes: { observer?.bytesRead($0) })
        let writer = output.map { fd in
            OrderedWriter(
                fd: fd, path: outputName, cleanup: cleanup,
                onFinished: { _, size in
                    if size >= 0 {
                        bytesOut.withLock { $0 += size }
                        observer?.bytesWritten(size)
                    }
                    control.slots.signal()
                    control.activity.leave()
                },
                onError: { control.fail($0) })
        }
        control.stopOnFailure(reader: reader, writer: writer) { control.slots.signal() }

        let result = Locked((bytesIn: 0, frames: 0))
        control.startThread(name: "weir.decoder") {
            do throws(WeirError) {
                let dictionary = try options.dictionary.map { dictionary throws(WeirError) in
                    try DecompressionDictionary(dictionary)
                }
                let context = try DecompressionContext(windowLogMax: options.windowLimit.logMax,
                                                       verifyChecksum: options.verifyChecksum, dictionary: dictionary,
                                                       path: inputName)
                var sink = OutputSink(control: control, writer: writer, testedBytes: bytesOut,
                                      buffers: BufferPool(size: Self.outputBufferSize, keep: Self.outputSlots))
                let decoded = try Self.decode(reader: reader, context: context, sink: &sink,
                                              control: control, limit: options.windowLimit, path: inputName)
                sink.flush()
                result.withLock { $0 = decoded }
            } catch {
                control.fail(error)
            }
        }

        control.activity.wait()
        try control.closeChannels(reader: reader, writer: writer, cleanup: cleanup)

        var statistics = Statistics()
        let decoded = result.current
        statistics.bytesIn = decoded.bytesIn
        statistics.frames = decoded.frames
        statistics.bytesOut = bytesOut.current
        statistics.threads = 1
        statistics.seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        return statistics
    }

    /// The decoding loop, on the decoding thread.
    private static func decode(reader: ChunkReader, context: DecompressionContext, sink: inout OutputSink,
                               control: RunControl, limit: WindowLimit,
                               path: String) throws(WeirError) -> (bytesIn: Int, frames: Int) {
        var headers: FrameScanner? = FrameScanner(path: path, operation: "decompress")
        var pending = reader.start()
        var consumed = 0          // input bytes fed to libzstd so far
        var frames = 0
        var frameOpen = false     // inside a frame (the last call did not return 0)
        var failure: WeirError?
        while true {
            let chunk = try pending.wait()
            if !chunk.endOfInput { pending = reader.start() }
            if control.isFailed { throw control.failure! }
            try checkWindows(chunk.data, scanner: &headers, limit: limit, path: path)
            chunk.data.enumerateBytes { region, _, stop in
                var input = ZSTD_inBuffer(src: region.baseAddress, size: region.count, pos: 0)
                while input.pos < input.size {
                    let before = input.pos
                    do throws(WeirError) {
                        guard let buffer = sink.buffer() else { stop = true; return }
                        var output = buffer
                        let hint = try context.decompress(&input, &output)
                        sink.advance(to: output.pos)
                        if hint == 0 { frames += 1; frameOpen = false } else { frameOpen = true }
                    } catch {
                        failure = located(error, offset: consumed, atFrameStart: !frameOpen && consumed > 0)
                        stop = true
                        return
                    }
                    consumed += input.pos - before
                }
            }
            if let failure { throw failure }
            if control.isFailed { throw control.failure! }
            if chunk.endOfInput { break }
        }
        // Flush what the context still holds (it stops when a buffer is full).
        while frameOpen {
            guard let buffer = sink.buffer() else { break }
            var output = buffer
            var empty = ZSTD_inBuffer(src: nil, size: 0, pos: 0)
            let hint = try context.decompress(&empty, &output)
            let produced = output.pos - buffer.pos
            sink.advance(to: output.pos)
            if hint == 0 { frames += 1; frameOpen = false; break }
            if produced == 0 { break }
        }
        if frameOpen {
            throw WeirError(.truncated, path: path, operation: "decompress",
                            reason: "truncated input: the last frame ends early (at offset \(consumed))")
        }
        if consumed == 0 {
            throw WeirError(.notZstd, path: path, operation: "decompress", reason: "not in zstd format (empty input)")
        }
        return (consumed, frames)
    }

    /// Checks the window of every frame whose header is in `piece`, before
    /// libzstd decodes it. A scanner that meets bad data is dropped (nil):
    /// libzstd then reports the damage itself, in its own words.
    private static func checkWindows(_ piece: DispatchData, scanner: inout FrameScanner?, limit: WindowLimit,
                                     path: String) throws(WeirError) {
        guard var scanning = scanner else { return }
        scanner = nil
        let ended: [FrameBoundary]
        do throws(WeirError) { ended = try scanning.feed(piece) } catch { return }
        for frame in ended {
            try limit.check(frame.header, index: frame.index, offset: frame.offset, path: path)
        }
        if let header = scanning.currentHeader, let start = scanning.currentFrameStart {
            try limit.check(header, index: scanning.frameCount, offset: start, path: path)
        }
        scanner = scanning
    }

    /// Rewords a libzstd error with the offset where the data went wrong.
    private static func located(_ error: WeirError, offset: Int, atFrameStart: Bool) -> WeirError {
        var error = error
        switch error.kind {
        case .notZstd where atFrameStart:
            error.kind = .corrupt
            error.reason = "unknown frame header at offset \(offset) (data after the last frame is not zstd)"
        case .corrupt, .checksumMismatch, .memoryLimit:
            error.reason += " (near offset \(offset))"
        default:
            break
        }
        return error
    }
}

/// The decoder's output side: fills 1 MiB buffers and hands full ones to the
/// writer, taking an output slot before each new buffer. With no writer
/// (`--test`), buffers are reused and only counted.
private struct OutputSink {
    let control: RunControl
    let writer: OrderedWriter?
    let testedBytes: Locked<Int>
    let buffers: BufferPool
    private var current: UnsafeMutableRawPointer?
    private var filled = 0
    private var index = 0

    init(control: RunControl, writer: OrderedWriter?, testedBytes: Locked<Int>, buffers: BufferPool) {
        self.control = control
        self.writer = writer
        self.testedBytes = testedBytes
        self.buffers = buffers
    }

    /// The buffer to decode into, as a `ZSTD_outBuffer` positioned after the
    /// bytes already in it; nil when the run has failed.
    mutating func buffer() -> ZSTD_outBuffer? {
        if current == nil {
            if writer != nil {
                control.slots.wait()
                if control.isFailed { control.slots.signal(); return nil }
            }
            guard let memory = buffers.take() else {
                control.fail(WeirError(.library, path: "(memory)", operation: "decompress", reason: "out of memory"))
                return nil
            }
            current = memory
            filled = 0
        }
        return ZSTD_outBuffer(dst: current, size: DecompressionPipeline.outputBufferSize, pos: filled)
    }

    /// Records that the buffer now holds `position` bytes; sends it when full.
    mutating func advance(to position: Int) {
        filled = position
        if filled == DecompressionPipeline.outputBufferSize { flush() }
    }

    /// Sends the current buffer, if it holds anything.
    mutating func flush() {
        guard let memory = current else { return }
        guard filled > 0 else {
            buffers.recycle(memory)
            current = nil
            if writer != nil { control.slots.signal() }
            return
        }
        if let writer {
            control.activity.enter()
            writer.submit(index, buffers.wrap(memory, count: filled))
            index += 1
        } else {
            testedBytes.withLock { $0 += filled }
            buffers.recycle(memory)
        }
        current = nil
        filled = 0
    }
}
