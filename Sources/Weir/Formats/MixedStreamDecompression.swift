import Dispatch

/// Decompresses an input that starts with a frame of another format than
/// zstd (.gz, .xz, .lzma, .lz4; zstd frames may follow), on one thread,
/// through the same channels as every pipeline:
///
///     input fd ─▶ ChunkReader (a mapped file, or a DispatchIO stream channel)
///        │  one read of `readSize` at a time, on the thread "weir.formats"
///        ▼
///     MixedStreamDecoder: each frame's library, by magic number; decoded
///        │  bytes in blocks of 1 MiB, each after taking one of `slots`
///        ▼
///     OrderedWriter (DispatchIO channel, queue "weir.write"), in order;
///        a written block gives its slot back.
///
/// A failure while decoding ends the run once the blocks decoded before it
/// are written (zstd writes them before it stops).
///
/// Bound: ``slots`` decoded blocks between decoding and written, and one
/// read; a slow consumer stops the decoder. A stream of another format is
/// decoded in order (its members' ends are only known by decoding them);
/// weir's own gzip members, lz4 frames and xz streams, in a mapped file,
/// decode in parallel (``GzipMemberScan``, ``Lz4FrameScan``,
/// ``XzStreamScan``), on the `threads` of `-T`.
final class MixedStreamDecompression: Sendable {
    static let slots = 4

    private let ends: StreamEnds
    private let options: DecompressionOptions
    private let operation: WeirError.Operation
    private let control = RunControl(slots: MixedStreamDecompression.slots)

    /// Prepares a run; the descriptors remain the caller's to close. With no
    /// output (`-t`), the decoded bytes are counted and dropped.
    init(input: Descriptor, output: PipelineOutput?, inputName: String, outputName: String,
         options: DecompressionOptions, observer: ProgressObserver?) {
        ends = StreamEnds(input: input, output: output, inputName: inputName, outputName: outputName,
                          observer: observer)
        self.options = options
        self.operation = output == nil ? .test : .decompress
    }

    /// Stops the run from another thread; `run()` throws `.cancelled`.
    func cancel() {
        control.fail(.cancelled(path: ends.inputName, operation: operation))
    }

    /// Decodes until the end of the input, a failure or ``cancel()``.
    func run() throws(WeirError) -> Statistics {
        let control = self.control
        let kind = ends.kind
        // A regular file is mapped whole, as one piece: ISA-L's inflate then
        // decodes it (MemberDecoder); its pages are read as they are touched.
        let whole = options.mapInput ? kind.size.flatMap { $0 > 0 ? $0 : nil } : nil
        // The progress follows the decoding: a member decoded, a step of
        // the serial decoder, not a read (a mapped file is one read).
        let tally = WorkTally(observer: ends.observer, stepDelay: options.stepDelayForTesting)
        let run = ends.run(
            control: control, kind: kind, readSize: whole ?? options.readSize,
            mapFiles: options.mapInput, sizesReadBuffers: options.sizesReadBuffers, sparse: options.sparse,
            tally: tally)
        let reader = run.reader
        let (options, inputName, operation) = (self.options, ends.inputName, self.operation)
        let totals = Locked((bytesIn: 0, frames: 0))
        let stopped = Locked(WeirError?.none)
        control.startThread(name: "weir.formats") {
            let decoder = MixedStreamDecoder(options: options, path: inputName, operation: operation,
                                             wholeInput: whole != nil)
            var index = 0
            let threads = whole == nil ? 1 : options.resolvedThreads
            let scan = GzipMemberScan(run: run, path: inputName, operation: operation, threads: threads,
                                      frameLimit: options.parallelFrameLimit)
            let lz4Scan = Lz4FrameScan(run: run, path: inputName, operation: operation, threads: threads,
                                       frameLimit: options.parallelFrameLimit)
            let xzScan = XzStreamScan(run: run, path: inputName, operation: operation, threads: threads,
                                      frameLimit: options.parallelFrameLimit,
                                      memoryLimit: options.windowLimit.bytes + (16 << 20))
            // A block goes out with a slot taken for it; none left means the
            // run failed, and the sentinel thrown here is not its failure.
            let emit = { (block: UnsafeRawBufferPointer) throws(WeirError) in
                guard let ticket = control.takeSlot() else { throw .cancelled(path: inputName, operation: operation) }
                run.submit(index, DispatchData(bytes: block), ticket: ticket)
                index += 1
            }
            do throws(WeirError) {
                while true {
                    let chunk = try reader.start().wait()
                    try reader.checkUnchanged()
                    var regions: [UnsafeRawBufferPointer] = []
                    chunk.data.enumerateBytes { region, _, _ in regions.append(UnsafeRawBufferPointer(region)) }
                    var skip = 0
                    if index == 0, regions.count == 1, decoder.position == 0 {
                        (skip, index) = scan.decode(chunk.data, region: regions[0], firstIndex: index)
                        if skip == 0 {
                            (skip, index) = lz4Scan.decode(chunk.data, region: regions[0], firstIndex: index)
                        }
                        if skip == 0 {
                            (skip, index) = xzScan.decode(chunk.data, region: regions[0], firstIndex: index)
                        }
                        decoder.position = skip
                        // Each member a scan handed out took one output index, from 0.
                        totals.withLock { $0.frames += index }  // the progress was told by each (MemberRun)
                    }
                    for region in regions {
                        // In steps when someone follows, each told once decoded.
                        let step = tally.isFollowed ? WorkTally.step : max(1, region.count)
                        for at in stride(from: skip, to: region.count, by: step) {
                            let piece = UnsafeRawBufferPointer(rebasing: region[at ..< min(region.count, at + step)])
                            try decoder.feed(piece, emit: emit)
                            tally.took(piece.count)
                        }
                        skip = 0
                    }
                    totals.withLock { $0.bytesIn += chunk.data.count }
                    if chunk.endOfInput { break }
                }
                try decoder.finish(emit: emit)
            } catch {
                stopped.withLock { $0 = error }
            }
            totals.withLock { $0.frames += decoder.frames }
            tally.frameDone(decoder.frames)
        }
        control.activity.wait()
        // What was decoded before a failure is written first, as zstd writes it.
        if let error = stopped.current { control.fail(error) }
        tally.settle(at: totals.current.bytesIn)
        var statistics = try run.end(bytesIn: totals.current.bytesIn)
        statistics.frames = totals.current.frames
        return statistics
    }
}
