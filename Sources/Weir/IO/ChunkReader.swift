import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Reads an input descriptor one bounded chunk at a time: pipes and other
/// streams through a `DispatchIO` stream channel, regular files (by default)
/// as memory mappings (``MappedInput``).
///
/// DispatchIO has no back-pressure of its own: an open-ended read keeps
/// reading however slow the consumer is. So the reader issues one read of at
/// most `chunkSize` bytes, and the next only when its caller asks for it; the
/// caller (a dedicated thread of the pipeline) decides when, after taking an
/// in-flight slot.
///
/// Water marks of the channel, chosen for each kind of input:
/// - pipe, terminal, socket: low = 960 KiB, high = `chunkSize`. libdispatch
///   reads into a buffer of 1 MiB (its chunk size) and hands the buffer over
///   once the low mark is reached; a pipe gives at most 64 KiB per `read()`.
///   Measured, compressing a generated stream through a pipe:
///
///       low mark   peak RSS 1 GB → 4 GB   TSan runs of `weir -c | weir -d`
///       64 KiB     78.9 → 93.3 MiB (10 GB)  no crash
///       256 KiB    62 → 82 MiB            0 crashes in 6
///       960 KiB    72 → 74 MiB            0 crashes in 6
///                  (bench, 1 → 10 GB: 68.8 → 81.4 MiB, +18%)
///       1 MiB      65 → 68 MiB            3 crashes in 6
///                  (bench, 1 → 10 GB: 65.4 → 69.2 MiB, +5.9%)
///
///   A low mark below the buffer size sends each buffer out partly used, in
///   a fresh allocation, and glibc's heap cannot reuse freed `posix_memalign`
///   blocks of that size, so memory grows with the input. A mark of exactly
///   the buffer size keeps memory nearly flat but makes libdispatch crash in
///   `_dispatch_event_loop_drain` (its epoll teardown race, see the tests'
///   notes) under ThreadSanitizer; a crash loses more than memory, so 960 KiB.
/// - regular file read through the channel (`mapFiles: false`, or a file
///   that cannot be mapped): low = high = `chunkSize`. The handler then runs
///   once per chunk with its ~1 MiB regions (libdispatch reads at most 1 MiB
///   per syscall), so there are no per-piece handler calls and nothing to join.
///
/// Regular files are mapped instead because each libdispatch read lands in a
/// fresh buffer that the kernel must zero, fault in and copy into: measured,
/// that was 20% of the CPU of a compression (see ``MappedInput``).
///
/// Threads: `start()` may be called from any thread; the channel's handlers
/// run on `queue` (serial), which alone touches a ``PendingRead`` until its
/// `done` semaphore is signalled; `PendingRead.wait()` blocks its caller, so
/// it is only called from the pipeline's own threads, never from a GCD worker.
final class ChunkReader: @unchecked Sendable {
    /// The low-water mark on pipes and other streams: just under one
    /// libdispatch buffer (see the table above).
    static let streamLowWater = 960 << 10

    let path: String
    let chunkSize: Int
    private let source: Source
    private let onBytes: @Sendable (Int) -> Void

    private enum Source {
        case channel(DispatchIO, DispatchQueue)
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
        switch kind {
        case .regularFile:
            channel.setLimit(lowWater: chunkSize)
            channel.setLimit(highWater: chunkSize)
        case .stream:
            channel.setLimit(lowWater: min(Self.streamLowWater, chunkSize))
            channel.setLimit(highWater: chunkSize)
        }
        source = .channel(channel, queue)
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

    /// One read in progress.
    final class PendingRead: @unchecked Sendable {
        fileprivate var pieces: [DispatchData] = []
        fileprivate var error: Int32 = 0
        fileprivate var failure: WeirError?
        fileprivate var count = 0
        fileprivate let done = DispatchSemaphore(value: 0)
        fileprivate let requested: Int
        fileprivate let path: String

        fileprivate init(requested: Int, path: String) {
            self.requested = requested
            self.path = path
        }

        /// Blocks until the read ends; returns its bytes and whether the input
        /// ended. Call once, from a dedicated thread.
        func wait() throws(WeirError) -> (data: DispatchData, endOfInput: Bool) {
            done.wait()
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

    /// Starts reading the next `length` bytes (default: one chunk).
    func start(length: Int? = nil) -> PendingRead {
        let pending = PendingRead(requested: length ?? chunkSize, path: path)
        let onBytes = self.onBytes
        let channel: DispatchIO, queue: DispatchQueue
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
            return pending
        case .channel(let open, let openQueue):
            channel = open
            queue = openQueue
        }
        channel.read(offset: 0, length: pending.requested, queue: queue) { done, data, error in
            if let data, data.count > 0 {
                pending.pieces.append(data)
                pending.count += data.count
                onBytes(data.count)
            }
            if done {
                pending.error = error
                pending.done.signal()
            }
        }
        return pending
    }

    /// Closes the channel; with `stop`, reads in progress end with ECANCELED.
    /// A mapped file has nothing to close: its pieces unmap themselves.
    func close(stop: Bool) {
        if case .channel(let channel, _) = source { channel.close(flags: stop ? .stop : []) }
    }
}
