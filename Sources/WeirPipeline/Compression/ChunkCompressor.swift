import Dispatch
import WeirFormats
import WeirSystem
import WeirTar

/// The workers' part of a compression run: one chunk into one frame.
struct ChunkCompressor: Sendable {
    let run: PipelineRun
    /// Frame buffers, one per chunk in flight.
    let buffers: BufferPool
    let seekTable: SeekTableRecorder?
    /// Under --adapt: told when a worker starts and ends a frame.
    let governor: LevelGovernor?
    /// Under --adapt with a dictionary: it digested for each level.
    let dictionaries: LeveledDictionaries?
    /// The run's options, for the window of a frame at a level of its own.
    let windowLogs: CompressionOptions
    let inputName: String
    /// The number of the run's first frame in the output (frames kept from
    /// an interrupted run come before it), for messages.
    let firstFrame: Int
    /// The frame whose bit a test flips before it is verified.
    let damagedFrame: Int?
    /// The window a streamed frame asks for, as zstd's would: `--zstd=wlog=`'s,
    /// else `--long`'s, else (nil) the level's.
    let streamedWindowLog: Int?
    /// zstd's `--size-hint` for a streamed frame.
    let streamedSizeHint: Int?
    /// The largest window the frames declare (``Statistics/windowLog``).
    let windowLog = Locked<Int?>(nil)
    /// A tar's member index, when the workers walk it (a mapped input's chunks).
    let members: MemberIndexRecorder?

    /// On a worker: compresses chunk `number`, which starts at input
    /// `offset`, at `level` under --adapt (dropped as soon as it is
    /// compressed and, with `verify`, checked), into a pooled buffer,
    /// `streamed` as zstd compresses standard input or else with its size
    /// (in another format: a member, `last` or not), and hands the frame to
    /// the writer with its ticket; after a failure, or without a context
    /// (one could not be made), drops it and releases the ticket.
    func compress(_ data: inout DispatchData?, number: Int, offset: Int, level: Int, streamed: Bool, last: Bool,
                  context: CompressionContext?,
                  ticket: RunTicket) {
        let control = run.control
        guard let context, !control.isFailed else { return ticket.release() }
        guard let buffer = buffers.take() else {
            control.fail(.outOfMemory(path: inputName, operation: .compress))
            return ticket.release()
        }
        let count = data?.count ?? 0
        governor?.workerStarted()
        defer { governor?.workerFinished(chunk: number) }
        do throws(WeirError) {
            if governor != nil {
                try context.setLevel(level, windowLog: windowLogs.windowLog(atLevel: level),
                                     dictionary: dictionaries?.at(level: level), path: inputName)
            }
            let output = UnsafeMutableRawBufferPointer(start: buffer, count: buffers.size)
            // The member index's walk of the chunk, from its bytes as the compressor reads them (a mapping's
            // pages are in, and go back a step behind); a chunk compressed otherwise is walked after it.
            let segment = members?.segment(number: number, offset: offset, count: count)
            var walked = false
            let read: ((UnsafeRawBufferPointer, Int) -> Void)? = segment.map { segment in
                { bytes, at in
                    walked = true
                    segment.feed(bytes, at: offset + at)
                }
            }
            let size: Int
            if let member = context.member {
                size = try member.encode(data ?? DispatchData.empty, into: output, last: last, path: inputName)
            } else if streamed {
                size = try context.compressStreamedFrame(data ?? DispatchData.empty, into: output,
                                                         windowLog: streamedWindowLog, sizeHint: streamedSizeHint,
                                                         path: inputName)
            } else {
                size = try context.compressFrame(data ?? DispatchData.empty, into: output, mapped: run.reader.isMapped,
                                                 path: inputName, read: read)
            }
            if let segment, !walked, let data {
                data.enumerateBytes { bytes, at, _ in segment.feed(UnsafeRawBufferPointer(bytes), at: offset + at) }
            }
            try run.reader.checkUnchanged()
            let frame = UnsafeRawBufferPointer(start: buffer, count: size)
            if let verifier = context.verifier {
                if number == damagedFrame {
                    FrameVerifier.damage(UnsafeMutableRawBufferPointer(start: buffer, count: size))
                }
                try verifier.check(frame, against: data ?? DispatchData.empty, frame: firstFrame + number,
                                   offset: offset, path: inputName)
            }
            data = nil
            if let log = FrameHeader(startOf: frame)?.windowLog {
                windowLog.withLock { $0 = max($0 ?? 0, log) }
            }
            seekTable?.compressed(number, decompressedSize: count, frame: frame)
            // Handed over before the frame: the run ends once the frames are written, the walks in by then.
            let stitches = segment.map { members?.walked($0, number: number) ?? false } ?? false
            run.submit(number, buffers.wrap(buffer, count: size), ticket: ticket)
            if stitches { members?.stitch() }
        } catch {
            buffers.recycle(buffer)
            control.fail(error)
            ticket.release()
        }
    }
}
