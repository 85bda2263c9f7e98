import CSupport
import Dispatch
import Glibc

/// Reads an input descriptor one bounded chunk at a time: pipes and other
/// streams (and regular files with `--no-mmap`) through a `DispatchIO` stream
/// channel, regular files by default as memory mappings (``MappedInput``),
/// a descriptor on a ``PositionalSource`` (a remote object) in blocks
/// fetched several at once (``PositionalReadAhead``), and bytes handed over
/// in memory from a ``ChunkFeed``.
///
/// Back-pressure: DispatchIO has none (an open-ended read keeps reading),
/// so the reader issues one read of one chunk when its caller — a pipeline
/// thread holding an in-flight slot — asks.
///
/// Water marks: high = low = the read's length, so libdispatch fills one
/// buffer of a whole chunk and hands it over once (``DispatchIOTuning``);
/// with a progress display (`live`), every ``liveDelivery`` bytes instead, so
/// a slow producer's bytes show as they come, joined without a copy.
///
/// Streams are read *blocking*: a barrier clears the `O_NONBLOCK` the channel
/// set, before the first read, so `read()` waits in the kernel and
/// libdispatch never arms its epoll read source (no poll round trips, no
/// `EPOLLHUP` use-after-free when the writer closes: docs/pipes.md). The
/// pipe is raised to 1 MiB. The price: a read blocked on a silent producer
/// cannot be stopped; a stopped reader stops *waiting* for it
/// (``PendingRead/wait()`` looks every 50 ms).
///
/// Threads: `start()` never blocks; the channel's handlers run on `queue`
/// (serial), which alone touches a ``PendingRead`` until its `done` semaphore
/// hands it back to the waiting thread. `PendingRead.wait()` blocks, so it is
/// only called from the pipeline's own threads, never from a GCD worker.
package final class ChunkReader: @unchecked Sendable {  // DispatchIO: thread-safe, not declared Sendable on Linux
    /// The capacity a pipe is given, so that one `read()` takes up to 1 MiB.
    static let pipeCapacity = 1 << 20
    /// The bytes after which a read in progress hands over what it has, when
    /// the bytes are watched as they arrive.
    static let liveDelivery = 1 << 20

    let path: String
    let chunkSize: Int
    private let source: Source
    private let onBytes: @Sendable (Int) -> Void
    /// Set by `close(stop: true)`; ends a wait for a read in progress.
    private let stopped = Locked(false)

    private enum Source {
        /// A stream or an unmapped file: one channel read per chunk.
        case channel(DispatchIO, DispatchQueue)
        case mapped(MappedInput)
        /// A positional source, read ahead in blocks.
        case positional(PositionalReadAhead)
        /// Bytes handed over in memory.
        case feed(ChunkFeed)
    }

    /// Maps `input` when it is a regular file and `mapFiles` is true, else
    /// opens a stream channel on it; errors name it as `input` does. The descriptor stays the caller's: neither
    /// closes it. For a channel, `cleanup` is entered now and left when the
    /// channel's cleanup handler has run (file status flags restored).
    ///
    /// - Parameters:
    ///   - live: deliver every ``liveDelivery`` bytes rather than once per
    ///     chunk, for a progress display.
    ///   - sizesReadBuffers: size libdispatch's (process-wide) read buffers
    ///     to this channel's deliveries (``DispatchIOTuning``).
    ///   - onBytes: called with the size of every piece read (for progress);
    ///     must be cheap.
    package init(
        input: Descriptor, kind: InputKind, chunkSize: Int, mapFiles: Bool = true, live: Bool = false,
        sizesReadBuffers: Bool = false, cleanup: DispatchGroup, onBytes: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.path = input.path
        self.chunkSize = chunkSize
        self.onBytes = onBytes
        if let positional = input.source {
            // No number to map or read: the source's reads, several at once.
            source = .positional(PositionalReadAhead(source: positional, path: input.path, onBytes: onBytes))
            return
        }
        if mapFiles, kind.size != nil, let mapped = MappedInput(input) {
            source = .mapped(mapped)
            return
        }
        let delivery = live ? min(chunkSize, Self.liveDelivery) : chunkSize
        if sizesReadBuffers { DispatchIOTuning.setReadBufferSize(delivery) }
        let queue = DispatchQueue(label: "weir.read")
        cleanup.enter()
        let channel = DispatchIO(type: .stream, fileDescriptor: input.fd, queue: queue) { _ in cleanup.leave() }
        channel.setLimit(lowWater: delivery)
        channel.setLimit(highWater: chunkSize)
        if kind.size == nil {
            _ = weir_grow_pipe(input.fd, Self.pipeCapacity)
            channel.barrier { BlockingMode.set(input) }
        }
        source = .channel(channel, queue)
    }

    /// Reads what `feed` is given, one chunk at a time, as from a pipe.
    package init(feed: ChunkFeed, path: String, chunkSize: Int) {
        self.path = path
        self.chunkSize = chunkSize
        self.onBytes = { _ in }
        source = .feed(feed)
    }

    /// Whether the input is mapped (a regular file) rather than read.
    package var isMapped: Bool {
        if case .mapped = source { return true }
        return false
    }

    /// Throws when a mapped file was cut, or a page of it could not be read
    /// from the disk, while its pieces were being read (those bytes read as
    /// zeros). Call after using a piece and before writing anything made
    /// from it.
    package func checkUnchanged() throws(WeirError) {
        if case .mapped(let mapped) = source, let failure = mapped.failure { throw failure }
    }

    /// Starts reading the next `length` bytes (default: one chunk). Does not
    /// block.
    package func start(length: Int? = nil) -> PendingRead {
        let pending = PendingRead(requested: length ?? chunkSize, path: path, stopped: stopped)
        switch source {
        case .mapped(let mapped):
            do throws(WeirError) {
                let data = try mapped.next(length: pending.requested)
                pending.append(data)
                if data.count > 0 { onBytes(data.count) }
                pending.finish()
            } catch {
                pending.finish(failure: error)
            }
        case .channel(let channel, let queue):
            let onBytes = self.onBytes
            channel.read(offset: 0, length: pending.requested, queue: queue) { done, data, error in
                if let data, data.count > 0 {
                    pending.append(data)
                    onBytes(data.count)
                }
                if done { pending.finish(error: error) }
            }
        case .positional(let readAhead):
            readAhead.request(pending)
        case .feed(let feed):
            feed.request(pending)
        }
        return pending
    }

    /// Closes the channel; with `stop`, reads in progress end with ECANCELED
    /// (a read blocked on a silent producer: its waiter stops waiting). A
    /// mapped file has nothing to close: its pieces unmap themselves.
    package func close(stop: Bool) {
        if stop { stopped.withLock { $0 = true } }
        switch source {
        case .channel(let channel, _):
            channel.close(flags: stop ? .stop : [])
        case .mapped:
            break
        case .positional(let readAhead):
            // No read follows a close: the fetching threads stop either way.
            readAhead.stop()
        case .feed(let feed):
            if stop { feed.stop() }
        }
    }
}
