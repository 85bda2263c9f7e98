import Dispatch
import Glibc

/// Reusable output buffers of one size, mapped with `mmap`, handed out
/// wrapped in `DispatchData` without a copy and taken back when the last
/// reference to that data goes away (after the writer has written it).
///
/// Why a pool: a frame buffer is `compressBound(chunkSize)`, about 8 MiB. Had
/// it come from `malloc`, glibc's dynamic mmap threshold would soon serve such
/// buffers from per-thread arenas; allocated on one worker and freed on
/// another queue, they fragment those arenas, and peak memory grew with the
/// input (bench/results/2026-11-27-comment-numbers.md, "Mapped input").
/// Mapped buffers reused from a pool keep memory flat and skip the page
/// faults of fresh mappings.
///
/// A buffer that comes back from `wrap` gives the kernel the pages past what
/// it held (`MADV_DONTNEED`): a compressed frame's size varies, and a kept
/// buffer would otherwise stay resident up to the largest frame it ever held,
/// so memory crept up with the stream (docs/pipes.md).
///
/// At most `keep` idle buffers are kept; the in-flight slots of the pipeline
/// bound how many are in use, so the pool never grows past slots + keep.
/// The deallocator runs asynchronously (on a global queue), so a buffer may
/// come back slightly after its slot was given back; the pool then maps one
/// more for a moment, which `keep` trims. A pool whose buffers are counted
/// by a ``ByteBudget`` from mapping to unmapping (``FrameBuffers``) keeps
/// every buffer that comes back and is told by `onIdle`; its owner takes
/// them back (``takeIdle()``) or unmaps them (``evictIdle()``).
package final class BufferPool: Sendable {
    package let size: Int
    private let keep: Int
    private let idle = Locked<[IdleBuffer]>([])
    private let tally: MappedTally?
    /// A mapped buffer in the idle list, kept by its address (a plain
    /// integer, so no claim of Sendable by hand): idle, nobody's, it leaves
    /// the list, locked, to one taker, who makes it a pointer again.
    private struct IdleBuffer: Sendable {
        private let bits: UInt
        init(address: UnsafeMutableRawPointer) { bits = UInt(bitPattern: address) }
        /// Never nil: the bits are a mapping's address, not zero.
        var address: UnsafeMutableRawPointer? { UnsafeMutableRawPointer(bitPattern: bits) }
    }
    private let onIdle: (@Sendable () -> Void)?

    /// - Parameters:
    ///   - size: the bytes of every buffer.
    ///   - keep: the most idle buffers to keep mapped.
    ///   - tally: counts the bytes this pool (and any sharing it) has mapped.
    ///   - onIdle: called after a buffer came back and was kept.
    package init(size: Int, keep: Int, tally: MappedTally? = nil, onIdle: (@Sendable () -> Void)? = nil) {
        self.size = size
        self.keep = keep
        self.tally = tally
        self.onIdle = onIdle
    }

    deinit {
        for case let address? in idle.current.map(\.address) { unmap(address) }
    }

    /// An idle buffer, or a new mapping; nil when memory is exhausted.
    package func take() -> UnsafeMutableRawPointer? {
        takeIdle() ?? map()
    }

    /// An idle buffer, if there is one.
    package func takeIdle() -> UnsafeMutableRawPointer? {
        idle.withLock { $0.popLast()?.address }
    }

    /// Whether a buffer is idle.
    package var hasIdle: Bool { idle.withLock { !$0.isEmpty } }

    /// A new mapping; nil when memory is exhausted.
    package func map() -> UnsafeMutableRawPointer? {
        let buffer = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let buffer, buffer != MAP_FAILED else { return nil }
        tally?.add(size)
        return buffer
    }

    /// Unmaps every idle buffer; returns how many bytes that gave back.
    package func evictIdle() -> Int {
        let buffers = idle.withLock { idle -> [IdleBuffer] in
            defer { idle.removeAll() }
            return idle
        }
        for case let address? in buffers.map(\.address) { unmap(address) }
        return buffers.count * size
    }

    /// Gives back a buffer taken and not wrapped.
    package func recycle(_ buffer: UnsafeMutableRawPointer) {
        recycle(buffer, used: nil)
    }

    /// Keeps `buffer` idle when the pool has room, else unmaps it. A buffer
    /// whose first `used` bytes were written first gives back the pages after
    /// them (only when kept: an unmapped one gives back everything anyway).
    private func recycle(_ buffer: UnsafeMutableRawPointer, used: Int?) {
        let size = self.size
        let kept = idle.withLock { idle -> Bool in
            guard idle.count < keep else { return false }
            if let used {
                let end = Page.roundUp(used)
                if end < size { madvise(buffer + end, size - end, MADV_DONTNEED) }
            }
            idle.append(IdleBuffer(address: buffer))
            return true
        }
        if kept {
            onIdle?()
        } else {
            unmap(buffer)
        }
    }

    private func unmap(_ buffer: UnsafeMutableRawPointer) {
        munmap(buffer, size)
        tally?.add(-size)
    }

    /// The first `count` bytes of `buffer` as DispatchData, without a copy;
    /// the buffer returns to the pool when the data is released, giving back
    /// its pages after `count` unless `keepsPages` (a buffer that is soon
    /// filled again: the serial decoder's blocks, often short, would fault
    /// their pages in again block after block).
    package func wrap(_ buffer: UnsafeMutableRawPointer, count: Int, keepsPages: Bool = false) -> DispatchData {
        nonisolated(unsafe) let pointer = buffer
        return DispatchData(bytesNoCopy: UnsafeRawBufferPointer(start: buffer, count: count),
                            deallocator: .custom(nil, { self.recycle(pointer, used: keepsPages ? nil : count) }))
    }
}
