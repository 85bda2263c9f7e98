import Dispatch
import Glibc
import CSupport

/// Writes numbered pieces of output through a `DispatchIO` channel in the
/// order of their numbers, whatever order they arrive in: early pieces wait
/// in `pending`, and piece `next` goes to the channel as soon as it is there.
/// A stream channel performs its writes in the order they were queued, so
/// bytes reach the descriptor in number order.
///
/// - Water marks unbounded: a piece of one region goes out in one `write()`
///   with no gathering copy, and the handler runs once per piece.
/// - To a regular file, a piece is cut (no copy) into writes of at most
///   ``maxWrite``, placed ``writePhase`` past each multiple of it: large or
///   aligned writes were several times slower into the page cache on the
///   benchmark VM (docs/design.md, "Write size and placement").
/// - To a pipe or socket, a timer polls the descriptor every 50 ms while
///   writes are pending and turns `POLLERR`/`POLLHUP` into EPIPE: on Linux,
///   libdispatch spins on a bare `EPOLLERR` when the reader goes away while
///   the pipe is full, and the write would never end (docs/design.md).
/// - Sparse (`--sparse`, a regular file not opened for appending): a random
///   access channel writes only the data ranges of each piece
///   (``SparseLayout``), each at its offset, so zero blocks become holes;
///   ``close(stop:)`` sets the final length with `ftruncate`.
///
/// Threads: everything runs on `queue` (serial), which owns `pending`,
/// `next`, `failed`, `lastKept`, `inFlight`, `position` and `writeBackFrom`; the channel's handlers and
/// the timer run on it too.
///
/// Sendable by hand: DispatchIO and DispatchSource; mutable state on serial `queue`.
package final class OrderedWriter: @unchecked Sendable {
    /// The most bytes per `write()` (see the type's comment).
    static let maxWrite = 128 << 10
    /// Where writes to a regular file are cut, past each multiple of
    /// ``maxWrite`` (see the type's comment).
    static let writePhase = 4 << 10

    /// How many bytes written to a file that will be synced make the kernel
    /// start their writeback (see ``init(output:sparse:writeBack:cleanup:onFinished:onError:)``).
    static let writeBackStep = 32 << 20
    let path: String
    private let channel: DispatchIO
    private let queue: DispatchQueue
    private var pending: [Int: DispatchData] = [:]
    private var next = 0
    private var failed = false
    /// Pieces after this one are dropped (``abandon(after:)``).
    private var lastKept = Int.max
    private var inFlight = 0
    private let output: Descriptor
    private var hangupTimer: DispatchSourceTimer?
    /// The most bytes per channel write: ``maxWrite`` for a regular file.
    private let writeLimit: Int
    /// The file offset after the bytes handed to the channel so far (regular
    /// files: where the next write lands). On `queue`.
    private var position = 0
    /// The block size holes are made of, when writing sparsely; nil otherwise.
    private let sparseBlock: Int?
    /// The file offset when the channel was created, which a random-access
    /// channel's offsets count from.
    private let base: Int
    /// Where the writeback not yet asked for begins, when it is started as
    /// the file is written; nil otherwise. On `queue`.
    private var writeBackFrom: Int?
    /// Called on `queue` when piece `index` of `size` bytes has been written,
    /// or, after a failure, when it has been dropped (`size` is then -1).
    private let onFinished: @Sendable (_ index: Int, _ size: Int) -> Void
    /// Called on `queue` once, with the first write error.
    private let onError: @Sendable (WeirError) -> Void
    /// Called on `queue` when `inFlight` leaves 0 (true) and comes back to it.
    private let onBusy: (@Sendable (Bool) -> Void)?

    /// Opens a stream channel on `output`; the descriptor stays the caller's.
    /// `onBusy` hears when writes start and stop being in flight.
    /// `cleanup` is entered now and left when the channel's cleanup handler
    /// has run.
    /// With `sparse`, a regular file (not opened for appending) is written
    /// with holes where the output has blocks of zeros. With `writeBack`, a
    /// regular file that will be synced when complete: every
    /// ``writeBackStep`` bytes, `sync_file_range` starts writing them to
    /// disk, so the disk works while the pipeline does and the final sync
    /// finds little left (the kernel alone would wait until gigabytes are
    /// dirty, then the sync waits for all of them).
    package init(output: Descriptor, sparse: Bool = false, writeBack: Bool = false, cleanup: DispatchGroup,
         onFinished: @escaping @Sendable (Int, Int) -> Void,
         onError: @escaping @Sendable (WeirError) -> Void, onBusy: (@Sendable (Bool) -> Void)? = nil) {
        let fd = output.fd
        self.onBusy = onBusy
        self.output = output
        self.path = output.path
        self.onFinished = onFinished
        self.onError = onError
        let queue = DispatchQueue(label: "weir.write")
        self.queue = queue
        let status = try? output.status()
        let regular = status?.isRegularFile == true
        writeLimit = regular ? Self.maxWrite : Int.max
        position = max(0, Int(lseek(fd, 0, SEEK_CUR)))
        base = position
        writeBackFrom = writeBack && regular ? position : nil
        if sparse, let status, regular, fcntl(fd, F_GETFL) & O_APPEND == 0 {
            sparseBlock = min(1 << 20, max(512, status.blockSize))
        } else {
            sparseBlock = nil
        }
        cleanup.enter()
        channel = DispatchIO(type: sparseBlock == nil ? .stream : .random, fileDescriptor: fd, queue: queue) { _ in
            cleanup.leave()
        }
        channel.setLimit(highWater: Int.max)
        channel.setLimit(lowWater: Int.max)
        if let status, status.isFIFO || status.isSocket {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(
                deadline: .now() + .milliseconds(50), repeating: .milliseconds(50), leeway: .milliseconds(20))
            timer.setEventHandler { [weak self] in self?.checkHangup() }
            timer.activate()
            hangupTimer = timer
        }
    }

    deinit {
        hangupTimer?.cancel()
    }

    /// On `queue`: fails the pending writes if the reading end has gone.
    private func checkHangup() {
        guard inFlight > 0, !failed else { return }
        var entry = pollfd(fd: output.fd, events: 0, revents: 0)
        guard poll(&entry, 1, 0) == 1, entry.revents & Int16(POLLERR | POLLHUP) != 0 else { return }
        fail(WeirError.system(EPIPE, path: path, operation: .write))
        channel.close(flags: .stop)
    }

    /// On `queue`: records the first failure and drops what is not written.
    private func fail(_ error: WeirError) {
        guard !failed else { return }
        failed = true
        drop(after: -1)
        onError(error)
    }

    /// Hands piece `index` to the writer. Every index from 0 up must be
    /// submitted exactly once. Callable from any thread.
    package func submit(_ index: Int, _ data: DispatchData) {
        queue.async { [self] in
            if failed || index > lastKept {
                onFinished(index, -1)
                return
            }
            pending[index] = data
            while let piece = pending.removeValue(forKey: next) {
                write(index: next, piece)
                next += 1
            }
        }
    }

    /// Drops every piece not yet written, and any that arrives later.
    /// Called (on any thread) when the run fails elsewhere.
    package func abandon() {
        queue.async { [self] in
            failed = true
            drop(after: -1)
        }
    }

    package func abandon(after index: Int) {
        queue.async { [self] in drop(after: index) }
    }

    /// On `queue`: drops the pieces after `index` that wait, and any that
    /// arrives later.
    private func drop(after index: Int) {
        lastKept = min(lastKept, index)
        for dropped in pending.keys.filter({ $0 > lastKept }) {
            pending.removeValue(forKey: dropped)
            onFinished(dropped, -1)
        }
    }

    /// The writes of one piece: the stream channel performs them in order,
    /// so the piece is written when the last one is. On `queue` only.
    private final class PieceWrites {
        var remaining: Int
        var error: Int32 = 0
        init(_ count: Int) { remaining = count }
    }

    private func write(index: Int, _ data: DispatchData) {
        let size = data.count
        inFlight += 1
        let pieceStart = position
        if inFlight == 1 { onBusy?(true) }
        // An empty piece is still one (empty) write, except when sparse: a
        // piece of zeros then has no write at all.
        let ranges = sparseBlock == nil ? cuts(size) : sparseCuts(data)
        if ranges.isEmpty {
            inFlight -= 1
            if inFlight == 0 { onBusy?(false) }
            onFinished(index, size)
            return
        }
        nonisolated(unsafe) let writes = PieceWrites(ranges.count)
        for range in ranges {
            let part = range == 0..<size ? data : data.subdata(in: range)
            // A stream channel ignores the offset; a random one (sparse)
            // counts it from `base`.
            let offset = sparseBlock == nil ? 0 : off_t(pieceStart + range.lowerBound - base)
            channel.write(offset: offset, data: part, queue: queue) { [self] done, _, error in
                guard done else { return }
                if error != 0 && writes.error == 0 { writes.error = error }
                writes.remaining -= 1
                guard writes.remaining == 0 else { return }
                inFlight -= 1
                if inFlight == 0 { onBusy?(false) }
                if writes.error == ECANCELED {
                    fail(.cancelled(path: path, operation: .write))
                } else if writes.error != 0 {
                    fail(WeirError.system(writes.error, path: path, operation: .write))
                }
                if writes.error == 0, let from = writeBackFrom, pieceStart + size - from >= Self.writeBackStep {
                    // Only a hint: a failed write shows in the final sync.
                    _ = weir_start_writeback(output.fd, Int64(from), Int64(pieceStart + size - from))
                    writeBackFrom = pieceStart + size
                }
                onFinished(index, writes.error == 0 ? size : -1)
            }
        }
    }

    /// The ranges of a piece of `size` bytes that go out in one `write()`
    /// each: the whole piece, except to a regular file, where the piece is
    /// cut at the file offsets k × ``maxWrite`` + ``writePhase``. On `queue`.
    func cuts(_ size: Int) -> [Range<Int>] {
        guard writeLimit != Int.max, size > 0 else { return [0..<size] }
        let ranges = cut(0..<size, pieceStart: position)
        position += size
        return ranges
    }

    /// The ranges of a piece to write sparsely: its data ranges
    /// (``SparseLayout``, region by region, joined where they meet), each cut
    /// as ``cuts(_:)`` cuts; none for a piece of zeros. On `queue`.
    func sparseCuts(_ data: DispatchData) -> [Range<Int>] {
        guard let block = sparseBlock else { return cuts(data.count) }
        let pieceStart = position
        var ranges: [Range<Int>] = []
        data.enumerateBytes { buffer, offset, _ in
            let found = SparseLayout.dataRanges(UnsafeRawBufferPointer(buffer), fileOffset: pieceStart + offset,
                                                blockSize: block)
            for range in found {
                let shifted = (range.lowerBound + offset)..<(range.upperBound + offset)
                if let last = ranges.last, last.upperBound == shifted.lowerBound {
                    ranges[ranges.count - 1] = last.lowerBound..<shifted.upperBound
                } else {
                    ranges.append(shifted)
                }
            }
        }
        position += data.count
        return ranges.flatMap { cut($0, pieceStart: pieceStart) }
    }

    /// `range` of a piece that starts at file offset `pieceStart`, cut at
    /// the file offsets k × ``maxWrite`` + ``writePhase``.
    private func cut(_ range: Range<Int>, pieceStart: Int) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start = range.lowerBound
        while start < range.upperBound {
            let phase = ((pieceStart + start - Self.writePhase) % writeLimit + writeLimit) % writeLimit
            let end = min(range.upperBound, start + writeLimit - phase)
            ranges.append(start..<end)
            start = end
        }
        return ranges
    }

    /// Closes the channel; with `stop`, writes in progress end with ECANCELED.
    /// Without `stop` (every piece written), a sparse file is first given
    /// its full length, which a trailing hole leaves short; a failure to do
    /// so fails the writer.
    package func close(stop: Bool) {
        if !stop, sparseBlock != nil {
            queue.sync {
                if !failed, ftruncate(output.fd, off_t(position)) != 0 {
                    fail(WeirError.system(errno, path: path, operation: .truncate))
                }
            }
        }
        channel.close(flags: stop ? .stop : [])
        queue.async { [self] in
            hangupTimer?.cancel()
            hangupTimer = nil
        }
    }
}
