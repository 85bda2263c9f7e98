import Dispatch
import Glibc

/// A ``PositionalSource`` read from its start to its end as a
/// ``ChunkReader``'s input: the object is cut into blocks, ``depth`` of
/// them fetched at once by threads of their own (for a remote object, that
/// many range requests in flight, each thread's on a connection it reuses),
/// and each read is served in order from the bytes that arrived: a block's
/// first bytes are handed out while the rest of it comes, so the reader
/// waits for the bytes it asks for, never for a whole block (a block
/// fetched beside the next ones, as the first is, would otherwise keep the
/// decoders waiting for its last byte). The decompression pipeline then
/// decodes a remote archive's frames in parallel as it decodes a mapped
/// file's.
///
/// Bounds, and why: a block is claimed only while fewer than ``depth``
/// blocks are held (being fetched, or fetched and not yet handed out
/// whole), so at most `depth` blocks of at most ``largestBlock`` are held
/// here whatever the object's size (more only for a read that spans more);
/// a block handed out lives on only in the pieces the pipeline holds
/// (slices of it, no copy), which its budget bounds as it bounds a mapped
/// file's pieces. Blocks are a fraction of the
/// object (``blockSize(forObjectOf:)``), so that a small object is fetched
/// in parallel too, and never above ``largestBlock``.
///
/// A failed block (the source's error, after its own retries) fails the
/// read waiting or the next one: the run stops, and nothing after the
/// bytes already handed out is handed out.
///
/// Threads: the fetching threads block in the source's reads and say under
/// the lock how far their block arrived (every ``arrivalStep`` bytes and at
/// its end), each writing only past what it said; the pipeline's reading
/// thread asks for reads
/// (``request(_:)``, never blocking). A read is served under the lock by
/// whichever of them completes what it waits for, and finished outside it.
/// ``stop()`` ends the reads; a fetch in progress ends on its own, its
/// block dropped, and its thread then stops.
package final class PositionalReadAhead: Sendable {
    /// Blocks held at once, and threads fetching them: enough requests in
    /// flight for a connection's latency to hide behind the others', few
    /// enough that the held bytes stay small beside the decoding's.
    package static let depth = 4
    /// The largest block: few requests for a large object (96 for the
    /// Linux tarball's 200 MB), each long beside its round trip; 4 MiB
    /// held 13 MB more at its peak for no speed on loopback
    /// (bench/results/LOG.md, 2026-11-28).
    package static let largestBlock = 2 << 20
    /// The smallest block, below which a request costs more than its bytes.
    static let smallestBlock = 128 << 10
    /// The bytes after which a fetching thread says how far its block
    /// arrived (the lock taken, a read waiting served): a fraction of a
    /// read of the pipeline.
    static let arrivalStep = 64 << 10

    /// A block claimed: its buffer, wrapped whole from the start so that
    /// its first bytes can be handed out (sliced) while the rest comes.
    private struct Block {
        var data: DispatchData
        /// The bytes at its start that arrived.
        var arrived = 0
    }

    private struct State {
        /// The next block to claim.
        var claimed = 0
        /// The first block still held (not yet handed out whole).
        var held = 0
        /// The blocks being fetched, or fetched and not yet handed out
        /// whole, by number.
        var blocks: [Int: Block] = [:]
        /// The first failure of a fetch.
        var failure: WeirError?
        /// The next byte to hand out.
        var position = 0
        /// The read waiting to be served.
        var read: PendingRead?
        /// The blocks up to which the read waiting needs: claimed even past
        /// the depth, so that a read longer than `depth` blocks is served.
        var needed = 0
        var started = false
        var stopped = false
    }

    private let source: any PositionalSource
    private let path: String
    private let size: Int
    private let block: Int
    private let blockCount: Int
    private let onBytes: @Sendable (Int) -> Void
    private let state = ConditionLock(State())
    /// The blocks' memory: mapped, and reused once a block's last slice
    /// goes (from the heap, blocks freed on the pipeline's threads would
    /// fragment the allocator's arenas, and memory grow with the object:
    /// ``BufferPool``).
    private let buffers: BufferPool

    /// Reads `source` (named `path` in errors) from its start; `onBytes`
    /// is told of each piece handed out.
    package init(source: any PositionalSource, path: String, onBytes: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.source = source
        self.path = path
        size = source.size
        block = Self.blockSize(forObjectOf: size)
        blockCount = (size + block - 1) / block
        buffers = BufferPool(size: block, keep: Self.depth)
        self.onBytes = onBytes
    }

    /// The block an object of `size` bytes is cut into: an eighth of it,
    /// so that `depth` requests run at once and as many wait, within
    /// ``smallestBlock`` ... ``largestBlock``, in whole 64 KiB.
    package static func blockSize(forObjectOf size: Int) -> Int {
        let share = (size / (2 * depth) + (64 << 10) - 1) & ~((64 << 10) - 1)
        return min(largestBlock, max(smallestBlock, share))
    }

    /// Serves `read` in order, once the blocks it covers arrived (fewer
    /// bytes than asked only at the object's end); the first request starts
    /// the fetching threads. One read at a time.
    package func request(_ read: PendingRead) {
        let (startsThreads, stopped) = state.withLock(broadcast: true) { state in
            if state.stopped { return (false, true) }
            precondition(state.read == nil, "one read at a time")
            state.read = read
            state.needed = (min(size, state.position + read.requested) + block - 1) / block
            defer { state.started = true }
            return (!state.started, false)
        }
        if stopped {
            read.finish(error: ECANCELED)
            return
        }
        if startsThreads {
            for _ in 0 ..< min(Self.depth, blockCount) {
                DedicatedThread.start(name: "weir-fetch") { [self] in fetchBlocks() }
            }
        }
        serveAndFinish()
    }

    /// Stops: the read waiting ends with ECANCELED, the blocks held are
    /// dropped, and the fetching threads stop after the fetch they are in.
    package func stop() {
        let read = state.withLock(broadcast: true) { state in
            state.stopped = true
            state.blocks = [:]
            defer { state.read = nil }
            return state.read
        }
        read?.finish(error: ECANCELED)
    }

    /// One fetching thread's loop: claims the next block while fewer than
    /// ``depth`` are held, fetches it (serving the read waiting as its bytes
    /// arrive), and serves the read waiting once it ends.
    private func fetchBlocks() {
        while true {
            let next: Int? = state.withLock(when: { state in
                state.stopped || state.failure != nil || state.claimed >= blockCount
                    || state.claimed < max(state.held + Self.depth, state.needed)
            }) { state in
                guard !state.stopped, state.failure == nil, state.claimed < blockCount else { return nil }
                defer { state.claimed += 1 }
                return state.claimed
            }
            guard let index = next else { return }
            if let failure = fetch(index) {
                state.withLock(broadcast: true) { state in
                    guard !state.stopped else { return }
                    state.blocks[index] = nil
                    state.failure = state.failure ?? failure
                }
            }
            serveAndFinish()
        }
    }

    /// Reads block `index` from the source into a buffer of ``buffers``,
    /// held in the state from the start and said to arrive as it does; the
    /// failure, if it fails.
    private func fetch(_ index: Int) -> WeirError? {
        let start = index * block
        let count = min(block, size - start)
        guard let buffer = buffers.take() else { return WeirError.system(ENOMEM, path: path, operation: .read) }
        // Back to the pool when the last slice of the block goes (this
        // thread's reference the last while it writes); its pages kept, as
        // the next block fills them.
        let data = buffers.wrap(buffer, count: count, keepsPages: true)
        let held = state.withLock { state in
            if !state.stopped { state.blocks[index] = Block(data: data) }
            return !state.stopped
        }
        guard held else { return nil }
        return withExtendedLifetime(data) { () -> WeirError? in
            var told = 0
            do throws(WeirError) {
                let got = try source.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: count),
                                          at: start) { arrived in
                    guard arrived >= told + Self.arrivalStep, arrived < count else { return }
                    told = arrived
                    serveAndFinish(arrived: arrived, of: index)
                }
                guard got == count else {
                    return WeirError.changedWhileRead(path: path, operation: .read, shrank: true)
                }
            } catch {
                return error
            }
            serveAndFinish(arrived: count, of: index)
            return nil
        }
    }

    /// Serves the read waiting if it can be (after block `index`'s first
    /// `arrived` bytes came, if given), then finishes it outside the lock.
    /// The fetching threads that wait to claim a block are woken only when
    /// a block was let go (not at every step of a block's arrival).
    private func serveAndFinish(arrived: Int? = nil, of index: Int = 0) {
        let (read, failure, letGo) = state.withLock { state in
            if let arrived { state.blocks[index]?.arrived = arrived }
            let held = state.held
            let (read, failure) = serve(&state)
            return (read, failure, state.held != held)
        }
        if letGo { state.withLock(broadcast: true) { _ in } }
        read?.finish(failure: failure)
    }

    /// Under the lock: the read waiting, its pieces appended, when the
    /// bytes it covers arrived (or the first failure, which it then
    /// carries); the blocks it handed out whole are let go.
    private func serve(_ state: inout State) -> (PendingRead?, WeirError?) {
        guard let read = state.read else { return (nil, nil) }
        if let failure = state.failure {
            state.read = nil
            return (read, failure)
        }
        let end = min(size, state.position + read.requested)
        if end > state.position {
            for index in state.position / block ... (end - 1) / block {
                guard let got = state.blocks[index], got.arrived >= min(end - index * block, got.data.count) else {
                    return (nil, nil)
                }
            }
        }
        while state.position < end {
            let index = state.position / block
            guard let data = state.blocks[index]?.data else { break }
            let from = state.position - index * block
            let upTo = min(data.count, end - index * block)
            let piece = from == 0 && upTo == data.count ? data : data.subdata(in: from ..< upTo)
            read.append(piece)
            onBytes(piece.count)
            state.position += upTo - from
            if upTo == data.count {
                state.blocks[index] = nil
                state.held = index + 1
            }
        }
        state.read = nil
        return (read, nil)
    }
}
