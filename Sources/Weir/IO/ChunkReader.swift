import CSupport
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Reads an input descriptor one bounded chunk at a time: pipes and other
/// streams through a `DispatchIO` stream channel, regular files (by default)
/// as memory mappings (``MappedInput``).
///
/// DispatchIO has no back-pressure of its own: an open-ended read keeps
/// reading however slow the consumer is. So the reader reads at most one
/// chunk, and the next only when its caller asks for it; the caller (a
/// dedicated thread of the pipeline) decides when, after taking an in-flight
/// slot.
///
/// Pipes, terminals and sockets are read *paced*: the reading thread waits
/// with `poll()` until the descriptor is readable, asks the kernel how many
/// bytes are buffered (`FIONREAD`) and issues a channel read of exactly that
/// many (at most what the chunk still needs), until the chunk is full or the
/// input ends. libdispatch's read then never meets `EAGAIN`, so it never arms
/// its epoll read source. That source is what crashes: when the writer of a
/// pipe closes it while the source is armed, epoll reports `EPOLLHUP`, and
/// libdispatch (up to Swift 6.3, `src/event/event_epoll.c` and
/// `_dispatch_source_invoke2`) acknowledges the hang-up by unregistering the
/// source on its target queue, a worker thread, which frees the epoll
/// "muxnote" while the manager thread is still walking it in
/// `_dispatch_event_merge_fd`, or is inserting into the same hash bucket. The
/// result is a use-after-free, a SEGV in `_dispatch_event_loop_drain`: under
/// ThreadSanitizer in 7 of 8 runs of the stream tests before pacing (the
/// race swift-subprocess issue 47 and SourceKit-LSP hit), rarely but
/// possibly without it. Pacing costs one `poll` and one `ioctl` per read,
/// and the pipe's capacity is raised to 1 MiB (`F_SETPIPE_SZ`) so that a fast
/// producer fills reads of up to 1 MiB, the size of libdispatch's own buffer.
/// Each read is a channel operation and three or four thread hand-offs, so a
/// pipe still filling is given up to 2 ms (4 × 0.5 ms, while it grows) to
/// gather ``gatherTarget`` bytes. Measured, 1.5 GB from a generator (`while
/// cat; done | head -c`) through the pipe, 3 alternating runs: reads of a
/// median 128 KiB without the wait, 928 KiB with it; weir's CPU 4.98–6.82 s
/// → 4.43–5.43 s, wall 3.42–5.22 s → 3.31–4.25 s.
/// A descriptor that cannot tell its buffered bytes (a device such as
/// `/dev/zero`, which never blocks) is read a chunk at a time.
///
/// Water marks: low = high = `chunkSize` on every channel. A channel read is
/// then reported once, when it is done, with its ~1 MiB regions (libdispatch
/// reads at most 1 MiB per syscall), and each buffer it allocates is filled:
/// a lower mark made libdispatch hand over partly used 1 MiB buffers, and
/// memory grew with the input (64 KiB mark: 78.9 → 93.3 MiB from 1 to 10 GB
/// through a pipe).
///
/// Regular files are mapped instead because each libdispatch read lands in a
/// fresh buffer that the kernel must zero, fault in and copy into: measured,
/// that was 20% of the CPU of a compression (see ``MappedInput``).
///
/// Threads: `start()` never blocks and may be called from any thread; the
/// channel's handlers run on `queue` (serial), which alone touches a
/// ``PendingRead`` while one of its channel reads is in progress; its
/// `done` semaphore hands it back. `PendingRead.wait()` blocks its caller
/// (in `poll` and on `done`), so it is only called from the pipeline's own
/// threads, never from a GCD worker. `stopped` is shared, under its lock.
final class ChunkReader: @unchecked Sendable {
    /// The capacity a paced pipe is given: libdispatch's read buffer size.
    static let pipeCapacity = 1 << 20
    /// How many buffered bytes a paced read waits a little for.
    static let gatherTarget = 512 << 10

    let path: String
    let chunkSize: Int
    private let source: Source
    private let onBytes: @Sendable (Int) -> Void
    /// Set by `close(stop: true)`; ends a paced read waiting in `poll`.
    private let stopped = Locked(false)

    private enum Source {
        /// A regular file or a device: one channel read per chunk.
        case channel(DispatchIO, DispatchQueue)
        /// A pipe, terminal or socket: channel reads of what is buffered.
        case paced(DispatchIO, DispatchQueue, fd: Int32)
        case mapped(MappedInput)
    }

    /// Maps `fd` when it is a regular file and `mapFiles` is true, else opens
    /// a stream channel on it. The descriptor stays the caller's: neither
    /// closes it. For a channel, `cleanup` is entered now and left when the
    /// channel's cleanup handler has run (file status flags restored).
    ///
    /// - Parameter onBytes: called with the size of every piece read (for
    ///   progress); must be cheap.
    init(fd: Int32, path: String, kind: InputKind, chunkSize: Int, mapFiles: Bool = true,
         cleanup: DispatchGroup, onBytes: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.path = path
        self.chunkSize = chunkSize
        self.onBytes = onBytes
        if mapFiles, kind.size != nil, let mapped = MappedInput(fd: fd, path: path) {
            source = .mapped(mapped)
            return
        }
        let queue = DispatchQueue(label: "weir.read")
        cleanup.enter()
        let channel = DispatchIO(type: .stream, fileDescriptor: fd, queue: queue) { _ in cleanup.leave() }
        channel.setLimit(lowWater: chunkSize)
        channel.setLimit(highWater: chunkSize)
        if kind.size == nil, weir_bytes_readable(fd) >= 0 {
            _ = weir_grow_pipe(fd, Self.pipeCapacity)
            source = .paced(channel, queue, fd: fd)
        } else {
            source = .channel(channel, queue)
        }
    }

    /// Whether the input is mapped (a regular file) rather than read.
    var isMapped: Bool {
        if case .mapped = source { return true }
        return false
    }

    /// Throws when a mapped file was cut while its pieces were being read
    /// (those bytes read as zeros). Call after using a piece and before
    /// writing anything made from it.
    func checkUnchanged() throws(WeirError) {
        if case .mapped(let mapped) = source, mapped.changed {
            throw WeirError(.truncated, path: path, operation: "read",
                            reason: "the file was truncated while it was being read")
        }
    }

    /// One read in progress: the channel reads that make up one chunk.
    final class PendingRead: @unchecked Sendable {
        fileprivate var pieces: [DispatchData] = []
        fileprivate var error: Int32 = 0
        fileprivate var failure: WeirError?
        fileprivate var count = 0
        /// Bytes the channel read in progress has delivered so far.
        fileprivate var delivered = 0
        /// A channel read ended short: the input has ended.
        fileprivate var ended = false
        /// Signalled when a channel read ends (or when none was issued).
        fileprivate let done = DispatchSemaphore(value: 0)
        fileprivate let requested: Int
        fileprivate let path: String
        /// The reader, while a paced read may need more channel reads.
        fileprivate var pacer: ChunkReader?

        fileprivate init(requested: Int, path: String) {
            self.requested = requested
            self.path = path
        }

        /// Blocks until the read ends; returns its bytes and whether the input
        /// ended. Call once, from a dedicated thread.
        func wait() throws(WeirError) -> (data: DispatchData, endOfInput: Bool) {
            done.wait()
            if let reader = pacer {
                pacer = nil
                while error == 0, failure == nil, !ended, count < requested {
                    guard let available = reader.waitUntilReadable(wanted: requested - count) else {
                        error = ECANCELED
                        break
                    }
                    reader.issue(self, length: min(available, requested - count))
                    done.wait()
                }
            }
            if let failure { throw failure }
            if error == ECANCELED {
                throw WeirError(.cancelled, path: path, operation: "read", reason: "cancelled")
            }
            if error != 0 {
                throw WeirError.system(error, path: path, operation: "read")
            }
            return (DispatchData.concatenating(pieces), count < requested)
        }
    }

    /// Starts reading the next `length` bytes (default: one chunk). Does not
    /// block: a paced read issues what is buffered now, and `wait()` the rest.
    func start(length: Int? = nil) -> PendingRead {
        let pending = PendingRead(requested: length ?? chunkSize, path: path)
        switch source {
        case .mapped(let mapped):
            do throws(WeirError) {
                let data = try mapped.next(length: pending.requested)
                if data.count > 0 {
                    pending.pieces.append(data)
                    pending.count = data.count
                    onBytes(data.count)
                }
            } catch {
                pending.failure = error
            }
            pending.done.signal()
        case .channel:
            issue(pending, length: pending.requested)
        case .paced(_, _, let fd):
            pending.pacer = self
            let available = weir_bytes_readable(fd)
            if available > 0 {
                issue(pending, length: min(available, pending.requested))
            } else {
                pending.done.signal()
            }
        }
        return pending
    }

    /// Issues one channel read of `length` bytes for `pending`; its `done`
    /// is signalled when the read ends. A read that ends short ends the input.
    private func issue(_ pending: PendingRead, length: Int) {
        let channel: DispatchIO, queue: DispatchQueue
        switch source {
        case .channel(let open, let openQueue), .paced(let open, let openQueue, _):
            (channel, queue) = (open, openQueue)
        case .mapped:
            preconditionFailure("a mapped input has no channel")
        }
        let onBytes = self.onBytes
        channel.read(offset: 0, length: length, queue: queue) { done, data, error in
            if let data, data.count > 0 {
                pending.pieces.append(data)
                pending.count += data.count
                pending.delivered += data.count
                onBytes(data.count)
            }
            if done {
                if pending.delivered < length { pending.ended = true }
                pending.delivered = 0
                pending.error = error
                pending.done.signal()
            }
        }
    }

    /// Blocks until the paced input is readable (bytes buffered, its end, or
    /// an error); returns how many bytes a read now gets without waiting, at
    /// least 1 (a read at the end returns the end). Nil once stopped. Wakes
    /// every 50 ms to look at `stopped`.
    private func waitUntilReadable(wanted: Int) -> Int? {
        guard case .paced(_, _, let fd) = source else { preconditionFailure("only a paced read waits") }
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while !stopped.current {
            let ready = poll(&entry, 1, 50)
            if ready < 0 && errno != EINTR { return 1 }  // a read of 1 reports the error
            guard ready > 0 else { continue }
            var available = weir_bytes_readable(fd)
            // A pipe that is still filling: give it up to 2 ms to gather
            // more, as long as it grows (see the type's comment).
            let target = min(wanted, Self.gatherTarget)
            for _ in 0..<4 where available > 0 && available < target && entry.revents & Int16(POLLHUP) == 0 {
                usleep(500)
                let now = weir_bytes_readable(fd)
                if now <= available { break }
                available = now
            }
            return max(1, available)
        }
        return nil
    }

    /// Closes the channel; with `stop`, reads in progress end with ECANCELED
    /// and a paced read waiting for input ends the same way. A mapped file
    /// has nothing to close: its pieces unmap themselves.
    func close(stop: Bool) {
        if stop { stopped.withLock { $0 = true } }
        switch source {
        case .channel(let channel, _), .paced(let channel, _, _):
            channel.close(flags: stop ? .stop : [])
        case .mapped:
            break
        }
    }
}
