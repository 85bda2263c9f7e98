import Dispatch
import WeirFormats
import WeirSystem
import WeirTar

/// The member index of one compression run (docs/members.md): decides from
/// the content's first block whether it is a tar stream, has it walked as
/// the chunks go by, and gives the index's frame at the end, for the
/// pipeline to write just before the seek table.
///
/// Two ways to walk, by where the chunks' bytes are:
/// - a file read through mappings: each worker walks the chunk it
///   compresses, step by step as libzstd reads it, while its pages are in
///   and in the cache (``TarSegment``: a walk that guesses where its first
///   header lies); the walks are put together in content order by whichever
///   worker hands in the next one (``TarStitcher``), which walks a chunk
///   again from the file where the guess was wrong. A walk on the reading
///   thread, before the compressor, mapped pages in ahead of it or made a
///   system call a header; a mapping of its own cost a `madvise` and its
///   TLB shootdowns every 256 KiB (2% of a -3 run's samples, issue 82);
/// - a pipe's chunks, in memory: the reading thread walks each chunk while
///   the workers compress it (``TarScanner``).
///
/// A resumed run's kept frames hold content this run does not read: their
/// part of the input is walked first, reading only its header blocks from
/// the input file, so the resumed output holds the same index, byte for
/// byte, as an uninterrupted run's.
///
/// Threads: ``start(first:mapped:)`` and ``read(_:number:)`` on the reading
/// thread, in chunk order; ``segment(number:offset:count:)``,
/// ``walked(_:number:)`` and ``stitch()`` on the workers;
/// ``finish(contentSize:failed:path:)`` on the thread that runs the
/// pipeline, once the frames are written.
final class MemberIndexRecorder: Sendable {
    private enum Scan {
        /// The first chunk has not been seen.
        case undecided
        /// No index: not a tar, or the walk could not go on.
        case none
        /// The reading thread walks the chunks.
        case sequential(TarScanner)
        /// The workers walk them, stitched in order.
        case stitched(TarStitcher)
    }

    private struct State: Sendable {
        var scan = Scan.undecided
        /// Whether the stitched walk ended (a tar's end, or not a tar after all): no more segments.
        var ended = false
        /// Segments handed in, by chunk number, not yet stitched.
        var waiting: [Int: TarSegment] = [:]
        /// The chunk whose segment is stitched next.
        var next = 0
        /// Whether a worker is stitching (it alone touches the stitcher).
        var stitching = false
    }

    private let state = ConditionLock(State())
    /// The index's compression level.
    private let level: Int
    /// The input's bytes a resumed run does not read (its kept frames'), and the input.
    private let kept: Int
    private let input: Descriptor?
    /// The input file's status when the run began: a file written to while
    /// it is compressed gets no index (a header walked again from the file
    /// may not be the one compressed).
    private let inputStatus: FileStatus?

    /// A recorder, or nil when this run writes no index. `kept` bytes of
    /// the content are a resumed run's kept frames, read back from `input`.
    init?(options: CompressionOptions, kept: Int = 0, input: PipelineInput) {
        guard options.memberIndex, options.seekTable, options.format == .zstd else { return nil }
        level = MemberIndex.level(forRunLevel: options.level)
        self.kept = kept
        if case .descriptor(let descriptor) = input { self.input = descriptor } else { self.input = nil }
        // A regular file's: a pipe's times move with every write to it.
        inputStatus = (try? self.input?.status()).flatMap { $0.isRegularFile ? $0 : nil }
        // Without its input at hand, a resumed run cannot walk the kept part.
        if kept > 0, self.input == nil { return nil }
    }

    /// On the reading thread, before the first chunk goes to the workers:
    /// whether the content is a tar (its first block, or the input's when
    /// frames were kept), and who walks it: the workers when the chunks
    /// are `mapped` from the input file, else the reading thread.
    func start(first: DispatchData, mapped: Bool) {
        let scan: Scan
        if kept > 0, let input {
            scan = resumed(input, mapped: mapped)
        } else if !TarScanner.startsTar(first) {
            scan = .none
        } else if mapped, input != nil {
            scan = .stitched(TarStitcher(level: level))
        } else {
            scan = .sequential(TarScanner(level: level))
        }
        state.withLock { $0.scan = scan }
    }

    /// The scan of a resumed run: its kept part walked from the input.
    private func resumed(_ input: Descriptor, mapped: Bool) -> Scan {
        do throws(WeirError) {
            let head = try input.read(count: 512, at: 0, operation: .readMemberIndex)
            guard head.withUnsafeBytes({ TarScanner.startsTar($0) }) else { return .none }
            if mapped {
                let stitcher = TarStitcher(level: level)
                let walk = TarSegment(chunkStart: 0, chunkEnd: kept, start: 0)
                try walk.walk(upTo: kept) { (at, buffer) throws(WeirError) in
                    try input.read(into: buffer, at: at, operation: .readMemberIndex)
                }
                walk.end()
                try stitcher.take(walk, read: read)
                return .stitched(stitcher)
            }
            let scan = TarScanner(level: level)
            try scan.feed(upTo: kept) { (at, buffer) throws(WeirError) in
                try input.read(into: buffer, at: at, operation: .readMemberIndex)
            }
            return .sequential(scan)
        } catch {
            return .none
        }
    }

    /// On the reading thread: chunk `number` of the content, in memory (a
    /// pipe's), walked while the workers compress it. A mapped chunk is
    /// its worker's to walk: nothing to do here.
    func read(_ chunk: DispatchData, number: Int) {
        guard case .sequential(let scan) = state.withLock({ $0.scan }), scan.isScanning else { return }
        scan.feed(chunk)
    }

    /// On a worker, before chunk `number` (the content's `offset ..<
    /// offset + count`) is compressed: the walk of its share, to feed as
    /// libzstd reads it; nil when the workers walk nothing (not a tar, a
    /// pipe's chunks, a walk that ended).
    func segment(number: Int, offset: Int, count: Int) -> TarSegment? {
        let wanted = state.withLock { state in
            if case .stitched = state.scan { return !state.ended }
            return false
        }
        guard wanted, count > 0 else { return nil }
        return TarSegment(chunkStart: offset, chunkEnd: offset + count, start: offset == 0 ? 0 : nil)
    }

    /// On the worker, once chunk `number` is compressed and before its
    /// frame goes to the writer: its `segment`, for the stitch. True when
    /// this worker is to stitch (``stitch()``, after handing its frame on):
    /// no other is.
    func walked(_ segment: TarSegment, number: Int) -> Bool {
        segment.end()
        return state.withLock { state in
            guard case .stitched = state.scan, !state.ended else { return false }
            state.waiting[number] = segment
            guard !state.stitching, state.waiting[state.next] != nil else { return false }
            state.stitching = true
            return true
        }
    }

    /// On the worker that ``walked(_:number:)`` chose: stitches the
    /// segments handed in, in order, as long as the next one is there.
    func stitch() {
        while true {
            let next: (TarStitcher, TarSegment)? = state.withLock(broadcast: true) { state in
                if case .stitched(let stitcher) = state.scan, !stitcher.isWalking { state.ended = true }
                guard case .stitched(let stitcher) = state.scan, !state.ended,
                      let segment = state.waiting.removeValue(forKey: state.next) else {
                    state.stitching = false
                    if state.ended { state.waiting = [:] }
                    return nil
                }
                state.next += 1
                return (stitcher, segment)
            }
            guard let (stitcher, segment) = next else { return }
            do throws(WeirError) {
                try stitcher.take(segment, read: read)
            } catch {
                state.withLock { state in
                    state.scan = .none
                    state.waiting = [:]
                }
            }
        }
    }

    /// The input's bytes at `offset` into `buffer` (a walk from the file).
    private func read(_ offset: Int, _ buffer: UnsafeMutableRawBufferPointer) throws(WeirError) -> Int {
        guard let input else { return 0 }
        return try input.read(into: buffer, at: offset, operation: .readMemberIndex)
    }

    /// The index's frame for a content of `contentSize` bytes; nil when it
    /// is not a whole tar, or the run failed. Waits for a stitch under way.
    ///
    /// - Throws: ``WeirError`` when libzstd fails to compress the index.
    func finish(contentSize: Int, failed: Bool, path: String) throws(WeirError) -> TarScanner.Found? {
        var scan = state.withLock(when: { !$0.stitching }) { $0.scan }
        guard !failed else { return nil }
        // A resumed run whose kept frames hold all of the content reads no chunk: its kept part is walked here.
        if case .undecided = scan, kept > 0, kept == contentSize, let input { scan = resumed(input, mapped: false) }
        if let input, let inputStatus {
            guard let now = try? input.status(), !inputStatus.mayHaveChanged(by: now) else { return nil }
        }
        switch scan {
        case .sequential(let scanner): return try scanner.finish(contentSize: contentSize, path: path)
        case .stitched(let stitcher): return try stitcher.finish(contentSize: contentSize, path: path)
        case .undecided, .none: return nil
        }
    }
}
