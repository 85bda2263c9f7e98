import CZstd
import Dispatch
import FoundationEssentials

/// Compresses one input descriptor into one output descriptor as a stream of
/// independent zstd frames, in parallel, in bounded memory.
///
/// Data flow, following one chunk:
///
///     input fd ─▶ ChunkReader: a regular file is mapped, one mapping per
///        │  chunk (MappedInput: no read() copy, no fresh buffer to fault
///        │  in); a pipe goes through a DispatchIO stream channel (queue
///        │  "weir.read") on a descriptor made blocking again, so libdispatch
///        │  never arms its epoll source (see ChunkReader); libdispatch fills
///        │  one buffer of a whole chunk and hands it over once (with a
///        │  progress display: 1 MiB buffers, joined without a copy)
///        ▼
///     reading thread (a Thread of its own): takes a slot, reads one chunk
///        │  of `chunkSize` bytes, numbers it, submits it
///        ▼
///     WorkerPool (concurrent queue "weir.compress", at most `threads` jobs,
///        │  one reusable ZSTD_CCtx each): a contiguous chunk is compressed in
///        │  place by ZSTD_compress2, a chunk of several regions by
///        │  ZSTD_compressStream2, into a pooled buffer → one frame with
///        │  Frame_Content_Size and checksum, wrapped in DispatchData (no
///        │  copy); the chunk is dropped before the frame goes on
///        ▼
///     OrderedWriter (DispatchIO stream channel, queue "weir.write"): frames
///        │  go out in chunk order, whatever order they finish in
///        ▼
///     output fd; when a frame is written its slot is signalled.
///
/// Bounds, and why:
/// - `chunksInFlight` slots (default threads + 1: one chunk per worker, one
///   read ahead): a chunk takes a slot before it is read
///   and gives it back when its frame is written. The reader can never get
///   more than that many chunks ahead, so memory is at most
///   `chunksInFlight × (chunkSize + compressBound(chunkSize))`, whatever the
///   input size, and a slow output (a pipe to a slow consumer) slows the
///   reader instead of filling memory.
/// - `threads` contexts and drain loops: compression never runs more jobs
///   than cores asked for, so workers do not oversubscribe the machine.
/// - Reads of exactly `chunkSize`: DispatchIO itself has no back-pressure.
///   A mapped chunk is unmapped when its job drops it, so mapped memory is
///   bounded by the same slots.
/// - Chunk size: `options.chunkSize` (8 MiB), cut smaller for a file with
///   fewer chunks than workers (``CompressionOptions/fitted(toInputSize:)``).
/// - A mapped file cut while being compressed reads zeros instead of
///   crashing (SIGBUS guard); the job checks ``ChunkReader/checkUnchanged()``
///   before its frame goes to the writer, so such zeros are never written.
///
/// Who owns what:
/// - the reading thread owns `index` and `bytesIn` (read by `run()` after
///   `activity` empties, which orders the accesses);
/// - the writer's queue owns the reorder buffer, `bytesOut` and `frames`;
/// - a chunk belongs to its job while compressed; its frame to the writer.
/// - `RunControl` holds the first failure behind a lock; a failure stops
///   both channels, drops queued frames and wakes the reading thread.
///
/// `run()` blocks its caller (the command line's main thread, or a thread of
/// the async API), never a GCD worker.
public final class CompressionPipeline: Sendable {
    private let input: Int32
    private let output: Int32
    private let inputName: String
    private let outputName: String
    private let options: CompressionOptions
    private let control: RunControl
    private let observer: ProgressObserver?

    /// Prepares a run. The descriptors remain the caller's to close.
    ///
    /// - Parameters:
    ///   - input: the descriptor to read (a file, a pipe, stdin).
    ///   - output: the descriptor to write.
    ///   - inputName: how errors name the input, such as a path or `(stdin)`.
    ///   - outputName: how errors name the output.
    ///   - options: level, threads, chunk size, checksum, in-flight bound.
    ///   - observer: told of bytes read and written, for a progress display.
    public init(input: Int32, output: Int32, inputName: String, outputName: String,
                options: CompressionOptions = CompressionOptions(), observer: ProgressObserver? = nil) {
        self.input = input
        self.output = output
        self.inputName = inputName
        self.outputName = outputName
        self.options = options
        self.observer = observer
        self.control = RunControl(slots: options.resolvedChunksInFlight)
    }

    /// Stops the run from another thread (a signal handler's queue): the
    /// channels are stopped and `run()` throws a `.cancelled` error.
    public func cancel() {
        control.fail(WeirError(.cancelled, path: inputName, operation: .compress, reason: "cancelled"))
    }

    /// Compresses until the end of the input, a failure or ``cancel()``.
    ///
    /// - Returns: what was done.
    /// - Throws: ``WeirError`` naming the file and the operation that failed.
    public func run() throws(WeirError) -> Statistics {
        let started = DispatchTime.now()
        let kind = InputKind.of(input)
        let options = self.options.fitted(toInputSize: kind.size ?? self.options.streamSize)
        let threads = options.resolvedThreads
        let control = self.control
        let inputName = self.inputName
        let observer = self.observer
        // One digested dictionary for every worker's context, made before
        // any channel opens.
        let dictionary = try options.dictionary.map { dictionary throws(WeirError) in
            try CompressionDictionary(dictionary, level: options.level, path: inputName)
        }
        let cleanup = DispatchGroup()
        let counters = Locked((bytesOut: 0, frames: 0))
        // The seek table: entries join it as frames are written, in file order.
        let seekTable = options.seekTable ? SeekTableRecorder(checksums: options.checksum, path: outputName) : nil

        let reader = ChunkReader(fd: input, path: inputName, kind: kind,
                                 chunkSize: options.chunkSize, mapFiles: options.resolvedMapInput, live: observer != nil, cleanup: cleanup,
                                 onBytes: { observer?.bytesRead($0) })
        let writer = OrderedWriter(
            fd: output, path: outputName, cleanup: cleanup,
            onFinished: { index, size in
                if size >= 0 {
                    seekTable?.written(index, size: size)
                    counters.withLock { $0.bytesOut += size; $0.frames += 1 }
                    observer?.bytesWritten(size)
                }
                control.slots.signal()
                control.activity.leave()
            },
            onError: { control.fail($0) })
        let buffers = BufferPool(size: Zstd.compressBound(options.largestChunk), keep: options.resolvedChunksInFlight)
        let pool = WorkerPool<CompressionContext>(
            width: threads, label: "weir.compress",
            makeContext: { () throws(WeirError) in
                try CompressionContext(level: options.level, checksum: options.checksum, contentSize: options.contentSize,
                                       windowLog: options.resolvedWindowLog, longDistance: options.longWindowLog != nil,
                                       dictionary: dictionary, path: inputName)
            },
            onContextFailure: { control.fail($0) })
        // After a failure, a slot wakes the reading thread if it waits for one.
        control.stopOnFailure(reader: reader, writer: writer) { control.slots.signal() }

        let bytesIn = Locked(0)
        control.startThread(name: "weir.reader") {
            var index = 0
            var chunker = options.rsyncable ? RsyncableChunker(chunkSize: options.chunkSize) : nil
            while true {
                control.slots.wait()
                if control.isFailed { control.slots.signal(); break }
                let chunk: (data: DispatchData, endOfInput: Bool)
                do throws(WeirError) {
                    if chunker != nil {
                        chunk = try chunker!.next { (length) throws(WeirError) in try reader.start(length: length).wait() }
                    } else {
                        chunk = try reader.start().wait()
                    }
                } catch {
                    control.fail(error)
                    control.slots.signal()
                    break
                }
                // An input whose size is a multiple of the chunk size ends
                // with an empty read: no empty frame for it, except for an
                // empty input, which becomes one empty frame as with zstd.
                if chunk.data.count == 0 && index > 0 {
                    control.slots.signal()
                    break
                }
                bytesIn.withLock { $0 += chunk.data.count }
                control.activity.enter()
                let number = index
                index += 1
                // Dropped as soon as it is compressed, before its frame goes
                // to the writer: the frame's write frees the slot the next
                // read takes, and that read's buffer can then reuse this one.
                var data: DispatchData? = chunk.data
                let count = chunk.data.count
                pool.submit { context in
                    guard let context, !control.isFailed else {
                        control.slots.signal()
                        control.activity.leave()
                        return
                    }
                    let capacity = buffers.size
                    guard let buffer = buffers.take() else {
                        control.fail(WeirError(.library, path: inputName, operation: .compress, reason: "out of memory"))
                        control.slots.signal()
                        control.activity.leave()
                        return
                    }
                    do throws(WeirError) {
                        let size = try context.compressFrame(
                            data ?? DispatchData.empty, into: UnsafeMutableRawBufferPointer(start: buffer, count: capacity),
                            path: inputName)
                        data = nil
                        try reader.checkUnchanged()
                        seekTable?.compressed(number, decompressedSize: count,
                                              frame: UnsafeRawBufferPointer(start: buffer, count: size))
                        writer.submit(number, buffers.wrap(buffer, count: size))
                    } catch {
                        buffers.recycle(buffer)
                        control.fail(error)
                        control.slots.signal()
                        control.activity.leave()
                    }
                }
                if chunk.endOfInput { break }
            }
        }

        control.activity.wait()
        if let seekTable, !control.isFailed {
            // After the last frame: the table, as one more piece.
            do throws(WeirError) {
                let table = try seekTable.encoded()
                control.activity.enter()
                writer.submit(seekTable.frameCount, table)
                control.activity.wait()
            } catch {
                control.fail(error)
            }
        }
        try control.closeChannels(reader: reader, writer: writer, cleanup: cleanup)

        var statistics = Statistics()
        statistics.bytesIn = bytesIn.current
        let written = counters.current
        statistics.bytesOut = written.bytesOut
        statistics.frames = written.frames - (seekTable == nil ? 0 : 1)
        statistics.threads = threads
        statistics.chunkBytes = options.chunkSize
        statistics.seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        return statistics
    }
}
