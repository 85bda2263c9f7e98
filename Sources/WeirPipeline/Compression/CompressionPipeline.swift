import Dispatch
import FoundationEssentials
import Glibc
import SystemPackage
import WeirFiles
import WeirFormats
import WeirSystem
import WeirTar

/// Compresses one input into one output as a stream of independent zstd
/// frames, in parallel, in bounded memory. Input and output are descriptors,
/// or, for the library's streams, a `ChunkFeed` and a `StreamSink`; the
/// run's reader, writer, counters and end are a `PipelineRun`.
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
///        │  one reusable ZSTD_CCtx each), ChunkCompressor: a contiguous
///        │  chunk is compressed in place by ZSTD_compress2 (a mapped one
///        │  in 256 KiB steps, its pages behind the window given back), a
///        │  chunk of several regions by ZSTD_compressStream2, into a pooled buffer
///        │  → one frame with Frame_Content_Size and checksum, wrapped in
///        │  DispatchData (no copy); with `verify`, the frame is decoded into
///        │  the worker's own buffer and compared with the chunk; the chunk
///        │  is dropped before the frame goes on
///        ▼
///     OrderedWriter (DispatchIO stream channel, queue "weir.write"): frames
///        │  go out in chunk order, whatever order they finish in
///        ▼
///     output fd; when a frame is written, PipelineRun releases its ticket.
///
/// Bounds, and why:
/// - `chunksInFlight` slots (default threads + 1: one chunk per worker, one
///   read ahead): a chunk takes a slot (a `RunTicket`) before it is read,
///   and the ticket is released once its frame is written, or where the
///   chunk is dropped after a failure. The reader can never get
///   more than that many chunks ahead, so memory is at most
///   `chunksInFlight × (chunkSize + compressBound(chunkSize))`, whatever the
///   input size, and a slow output (a pipe to a slow consumer) slows the
///   reader instead of filling memory. The chunk grows with the level, and
///   that bound with it: at -T2, 48 MiB at level 3, 192 MiB at -9, 384 MiB at
///   -19 of buffers (docs/design.md, "Frames sized by level").
/// - With `verify`, one more chunk-sized buffer per worker, kept by its
///   context (FrameVerifier): the decoded frame, compared in place.
/// - `threads` contexts and drain loops: compression never runs more jobs
///   than cores asked for, so workers do not oversubscribe the machine.
/// - Reads of exactly `chunkSize`: DispatchIO itself has no back-pressure.
///   A mapped chunk is unmapped when its job drops it, so mapped memory is
///   bounded by the same slots; while it is compressed, only its window and
///   two steps stay mapped in (`CompressionContext`, `MappedInput`).
/// - Chunk size: `options.chunkSize` (by level: 8 MiB up to level 6 and
///   `--fast`, 16 MiB at 7–8, 32 MiB at 9–16, 64 MiB at 17–19, 256–512 MiB
///   at 20–22: ``CompressionOptions/defaultChunkSize(level:)``), cut
///   smaller for a file with fewer chunks than workers
///   (``CompressionOptions/fitted(toInputSize:)``).
/// - A mapped file cut while being compressed reads zeros instead of
///   crashing (SIGBUS guard); the job checks `ChunkReader.checkUnchanged()`
///   before its frame goes to the writer, so such zeros are never written.
///
/// Who owns what:
/// - the reading thread owns `index`; `bytesIn` is behind a lock, read by
///   `run()` once `activity` has emptied;
/// - the writer's queue owns the reorder buffer; the frame count and the
///   bytes written (`PipelineRun`) are behind locks;
/// - a chunk belongs to its job while compressed; its frame to the writer.
/// - `RunControl` holds the first failure behind a lock; a failure stops
///   both channels, drops queued frames and wakes the reading thread.
///
/// `run()` blocks its caller (the command line's main thread, or a thread of
/// the async API), never a GCD worker.
package final class CompressionPipeline: Sendable {
    /// With a partial output (resumable), its kept frames open the seek
    /// table, and each frame written is checkpointed.
    private let ends: PipelineEnds<PipelineOutput>
    private let options: CompressionOptions
    private let control: RunControl

    /// Prepares a run. The descriptors remain the caller's to close.
    ///
    /// - Parameters:
    ///   - input: the descriptor to read (a file, a pipe, stdin).
    ///   - output: the descriptor to write.
    ///   - inputName: how errors name the input, such as a path or `(stdin)`.
    ///   - outputName: how errors name the output.
    ///   - options: level, threads, chunk size, checksum, in-flight bound.
    ///   - observer: told of bytes read and written, for a progress display.
    package convenience init(input: FileDescriptor, output: FileDescriptor, inputName: String, outputName: String,
                            options: CompressionOptions = CompressionOptions(), observer: ProgressObserver? = nil) {
        // The one conversion from swift-system's type to the engine's.
        self.init(input: .descriptor(Descriptor(input.rawValue, path: inputName)),
                  output: .descriptor(Descriptor(output.rawValue, path: outputName)), inputName: inputName,
                  outputName: outputName, options: options, observer: observer)
    }

    /// Prepares a run between any input and output (descriptors, or memory).
    ///
    /// With `partial`, the input's descriptor is at the offset its kept
    /// frames end at, and the output's at their end (``PartialOutput``).
    package init(input: PipelineInput, output: PipelineOutput, inputName: String, outputName: String,
                 options: CompressionOptions, observer: ProgressObserver? = nil, partial: PartialOutput? = nil) {
        ends = PipelineEnds(input: input, output: output, inputName: inputName, outputName: outputName,
                            observer: observer, partial: partial)
        self.options = options
        self.control = RunControl(slots: options.resolvedChunksInFlight)
    }

    /// What a worker's context tells of the input it took: the observer's
    /// count, then the tests' delay and hold; nil when nobody follows the run.
    private static func consumed(observer: ProgressObserver?, stepDelay: Double?,
                                 stepHold: String?) -> (@Sendable (Int) -> Void)? {
        guard let observer else { return nil }
        guard (stepDelay ?? 0) > 0 || stepHold != nil else { return { observer.bytesRead($0) } }
        let microseconds = UInt32(min(max(stepDelay ?? 0, 0), 60) * 1e6)
        return { count in
            observer.bytesRead(count)
            if microseconds > 0 { usleep(microseconds) }
            StepHold.wait(whileExists: stepHold)
        }
    }

    /// Stops the run from another thread (a signal handler's queue): the
    /// channels are stopped and `run()` throws a `.cancelled` error.
    package func cancel() {
        control.fail(.cancelled(path: ends.inputName, operation: .compress))
    }

    /// Compresses until the end of the input, a failure or ``cancel()``.
    ///
    /// - Returns: what was done.
    /// - Throws: `WeirError` naming the file and the operation that failed.
    package func run() throws(WeirError) -> Statistics {
        let (input, output, inputName, outputName) = (ends.input, ends.output, ends.inputName, ends.outputName)
        let kind = input.kind
        let options = self.options.fitted(toInputSize: kind.size ?? self.options.streamSize)
        // A .lzma file is one stream: one worker encodes its chunks in order.
        let threads = options.format == .lzma ? 1 : options.resolvedThreads
        let control = self.control
        // One digested dictionary for every worker's context, made before
        // any channel opens.
        let dictionary = try options.dictionary.map { dictionary throws(WeirError) in
            try CompressionDictionary(dictionary, level: options.level, path: inputName)
        }
        // The seek table: entries join it as frames are written, in file order.
        let partial = ends.partial
        let firstFrame = partial?.keptEntries.count ?? 0
        let seekTable = options.seekTable && options.format == .zstd
            ? SeekTableRecorder(checksums: options.checksum, path: outputName, kept: partial?.keptEntries ?? []) : nil
        let frames = Locked(0)
        let members = seekTable == nil ? nil
            : MemberIndexRecorder(options: options, kept: partial?.keptBytes.input ?? 0, input: input)
        // --adapt (zstd frames): each chunk's level, chosen as it goes to the workers.
        let observer = ends.observer
        let governor = options.adaptiveLevels.flatMap { range in
            options.format == .zstd
                ? LevelGovernor(level: options.level, range: range, workers: threads,
                                onChange: { observer?.levelChanged?($0) })
                : nil
        }
        var writerBusy: (@Sendable (Bool) -> Void)?
        if let governor { writerBusy = { busy in governor.writerBusy(busy) } }
        // A frame's ticket (its slot) is released by the run once the frame
        // is written; after a failure, a slot wakes the reading thread if it
        // waits for one.
        let run = PipelineRun(
            control: control, input: input, kind: kind, inputName: inputName, readSize: options.chunkSize,
            mapFiles: options.resolvedMapInput,
            sizesReadBuffers: options.sizesReadBuffers, output: output, outputName: outputName, observer: observer,
            countsReads: false,
            onWritten: { index, size in
                if size >= 0 {
                    if let entry = seekTable?.written(index, size: size) { partial?.written(entry) }
                    frames.withLock { $0 += 1 }
                    observer?.frameWritten()
                }
            },
            wake: { control.slots.signal() },
            onWriterBusy: writerBusy)
        let reader = run.reader
        let pool = WorkerPool<CompressionContext>(
            width: threads, label: "weir.compress",
            makeContext: { () throws(WeirError) in
                let context = try CompressionContext(
                    level: options.level, checksum: options.checksum, contentSize: options.contentSize,
                    windowLog: options.resolvedWindowLog, longDistance: options.longWindowLog != nil,
                    dictionary: dictionary, dictionaryID: options.dictionaryID, parameters: options.parameters,
                    path: inputName)
                if options.format != .zstd {
                    context.member = try MemberEncoder(format: options.format, level: options.level, path: inputName)
                }
                if let reference = options.patchReference {
                    context.prefix = reference
                    if options.patchWorkers > 0 { try context.setWorkers(options.patchWorkers, path: inputName) }
                }
                // The progress follows the compression, not the reading: at
                // -19 two 64 MiB chunks are read at once and compressed for
                // seconds. The observer's read count is the input taken.
                if let consumed = Self.consumed(observer: observer, stepDelay: options.stepDelayForTesting,
                                                   stepHold: options.stepHoldForTesting) {
                    context.consumed = consumed
                    context.member?.consumed = consumed
                }
                if options.verify {
                    context.verifier = try FrameVerifier(dictionary: options.dictionary, path: inputName)
                }
                return context
            },
            onContextFailure: { control.fail($0) })
        var dictionaries: LeveledDictionaries?
        if governor != nil, let source = options.dictionary, let dictionary {
            dictionaries = LeveledDictionaries(source, first: dictionary, level: options.level, path: inputName)
        }
        let compressor = ChunkCompressor(
            run: run, buffers: BufferPool(size: options.format == .zstd ? Zstd.compressBound(options.largestChunk)
                                      : MemberEncoder.bound(format: options.format, size: options.largestChunk),
                                          keep: options.resolvedChunksInFlight),
            seekTable: seekTable, governor: governor,
            dictionaries: dictionaries,
            windowLogs: options, inputName: inputName, firstFrame: firstFrame,
            damagedFrame: options.verify ? options.damagedFrameForTesting : nil,
            streamedWindowLog: options.parameters.windowLog ?? options.longWindowLog,
            streamedSizeHint: options.streamedSizeHint, members: members)

        let bytesIn = Locked(0)
        let keptInput = partial?.keptBytes.input ?? 0
        control.startThread(name: "weir.reader") {
            var index = 0
            var chunker = options.rsyncable ? RsyncableChunker(chunkSize: options.chunkSize) : nil
            while let ticket = control.takeSlot() {
                let chunk: (data: DispatchData, endOfInput: Bool)
                do throws(WeirError) {
                    if let next = try chunker?.next({ (length) throws(WeirError) in
                        try reader.start(length: length).wait()
                    }) {
                        chunk = next
                    } else {
                        chunk = try reader.start().wait()
                    }
                } catch {
                    control.fail(error)
                    ticket.release()
                    break
                }
                // An input whose size is a multiple of the chunk size ends
                // with an empty read: no empty frame for it, except for an
                // empty input, which becomes one empty frame as with zstd.
                // (.lzma: that empty chunk ends the stream.)
                if chunk.data.count == 0 && index + firstFrame > 0 && options.format != .lzma {
                    ticket.release()
                    break
                }
                let offset = keptInput + bytesIn.withLock { total in
                    defer { total += chunk.data.count }
                    return total
                }
                let number = index
                index += 1
                if let delay = options.frameDelayForTesting, delay > 0 { usleep(UInt32(min(delay, 60) * 1e6)) }
                // Dropped as soon as it is compressed, before its frame goes
                // to the writer: the frame's write frees the slot the next
                // read takes, and that read's buffer can then reuse this one.
                var data: DispatchData? = chunk.data
                // The whole input in one frame: streamed if asked (zstd's frame).
                let streamed = options.streamsSoleFrame && number == 0 && chunk.endOfInput
                let last = chunk.endOfInput || chunk.data.count == 0
                let level = governor?.level(forChunk: number, offset: offset) ?? options.level
                // Whether the content is a tar, and who walks it, before a worker asks.
                if number == 0 { members?.start(first: chunk.data, mapped: reader.isMapped) }
                pool.submit { context in
                    compressor.compress(&data, number: number, offset: offset, level: level, streamed: streamed,
                                        last: last, context: context, ticket: ticket)
                }
                // A chunk in memory is walked here while it is compressed, not
                // before: the chunk goes to the workers as soon as it is read.
                members?.read(chunk.data, number: number)
                if last { break }
            }
        }

        control.activity.wait()
        // After the last frame: the member index of a tar, then the table, as
        // pieces of their own. The table when there is something to seek or
        // an index to find (a single frame is read from its start anyway, and
        // zstd's output of a small input is then byte for byte weir's).
        // The index's pieces past its first are not frames (the count of frames and the table's piece number).
        var extraPieces = 0
        if let members, let seekTable {
            extraPieces = max(0, writeMemberIndex(members, contentSize: keptInput + bytesIn.current, run: run,
                                                  seekTable: seekTable, piece: frames.current) - 1)
        }
        let writesTable = seekTable.map { $0.frameCount > 1 } ?? false
        if let seekTable, writesTable, !control.isFailed {
            do throws(WeirError) {
                let table = try seekTable.encoded()
                // The next piece of this run: the kept frames are not its pieces.
                run.submit(frames.current, table, ticket: control.ticket())
                control.activity.wait()
            } catch {
                control.fail(error)
            }
        }
        var statistics = try run.end(bytesIn: bytesIn.current)
        statistics.frames = frames.current - (writesTable ? 1 : 0) - (seekTable?.skippableCount ?? 0) - extraPieces
        // A patch: libzstd's own workers do the work of the one pipeline worker.
        statistics.threads = options.patchReference != nil ? max(1, options.patchWorkers) : threads
        statistics.chunkBytes = options.chunkSize
        statistics.windowLog = compressor.windowLog.current
        statistics.levels = governor?.levelsUsed
        return statistics
    }

    /// Writes the member index's skippable frame (when the content was a
    /// whole tar) as piece `piece`, after the last frame, and lists it in
    /// the seek table (an entry of no content); a failure fails the run, as
    /// the table's own write would.
    /// Returns the pieces it wrote (more than one for a large index).
    private func writeMemberIndex(_ members: MemberIndexRecorder, contentSize: Int, run: PipelineRun,
                                  seekTable: SeekTableRecorder, piece: Int) -> Int {
        do throws(WeirError) {
            guard let index = try members.finish(contentSize: contentSize, failed: control.isFailed,
                                                 path: ends.outputName) else { return 0 }
            // A large index comes back from its spill file a piece at a time,
            // each written before the next is read: its memory stays bounded.
            var pieces = 0
            let path = ends.outputName
            try index.frame.forEachPiece(size: MemberIndex.spillBound, path: path) { bytes throws(WeirError) in
                run.submit(piece + pieces, bytes.withUnsafeBytes { DispatchData(bytes: $0) }, ticket: control.ticket())
                pieces += 1
                control.activity.wait()
                if control.isFailed { throw WeirError.cancelled(path: ends.outputName, operation: .writeMemberIndex) }
            }
            try seekTable.skippable(size: index.frame.count)
            return pieces
        } catch {
            control.fail(error)
            return 0
        }
    }
}
