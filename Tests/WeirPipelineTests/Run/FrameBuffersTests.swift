import Dispatch
import Foundation
import Testing
@testable import WeirPipeline
@testable import WeirSystem

@Suite("Frame buffers within the memory budget")
struct FrameBuffersTests {
    static let mebibyte = 1 << 20

    /// What a `take` on another thread got: set before `done` is signalled,
    /// read after it was waited for.
    /// `@unchecked`: the semaphore orders the write before the reads.
    final class TakenBox: @unchecked Sendable {
        var current: FrameBuffers.Taken?
    }

    /// Runs `take` on a thread of its own (it may wait), reporting through the semaphore.
    static func takeAsync(_ buffers: FrameBuffers, capacity: Int, extra: Int = 0,
                          into result: TakenBox, done: DispatchSemaphore) {
        let thread = Thread {
            let taken = buffers.take(capacity: capacity, extra: extra)
            result.current = taken
            done.signal()
        }
        thread.start()
    }

    static func buffer(_ taken: FrameBuffers.Taken?) -> (UnsafeMutableRawPointer, BufferPool)? {
        if case .buffer(let memory, let pool) = taken { return (memory, pool) }
        return nil
    }

    @Test(
        """
        buffers in use plus idle ones never exceed the budget: a buffer freed late delays the next frame, which \
        reuses it
        """
    )
    func lateFree() throws {
        let budget = ByteBudget(limit: 3 * Self.mebibyte)
        let buffers = FrameBuffers(budget: budget)
        var held: [DispatchData] = []
        var first: UnsafeMutableRawPointer?
        for index in 0 ..< 3 {
            let (memory, pool) = try #require(Self.buffer(buffers.take(capacity: Self.mebibyte, extra: 0)))
            if index == 0 { first = memory }
            held.append(pool.wrap(memory, count: 100))
        }
        #expect(budget.inUse == 3 * Self.mebibyte)

        // The writer is done with them, but the last reference goes late.
        let result = TakenBox()
        let done = DispatchSemaphore(value: 0)
        Self.takeAsync(buffers, capacity: 600_000, into: result, done: done)
        #expect(done.wait(timeout: .now() + .milliseconds(200)) == .timedOut)
        held.removeFirst()
        #expect(done.wait(timeout: .now() + .seconds(10)) == .success)
        let (memory, pool) = try #require(Self.buffer(result.current))
        #expect(memory == first)
        #expect(buffers.tally.peak == 3 * Self.mebibyte)
        #expect(budget.peak == 3 * Self.mebibyte)

        // Idle buffers keep their bytes: the next frames take them, no new mapping.
        held.removeAll()
        var reused: [UnsafeMutableRawPointer] = [memory]
        for _ in 0 ..< 2 {
            reused.append(try #require(Self.buffer(buffers.take(capacity: Self.mebibyte, extra: 0))).0)
        }
        #expect(Set(reused).count == 3)
        #expect(buffers.tally.peak == 3 * Self.mebibyte)
        #expect(budget.peak == 3 * Self.mebibyte)
        for buffer in reused { pool.recycle(buffer) }
    }

    @Test("the compressed bytes of a frame wait with its buffer, and an idle buffer serves it")
    func extraBytes() throws {
        let budget = ByteBudget(limit: 3 * Self.mebibyte)
        let buffers = FrameBuffers(budget: budget)
        let (one, pool) = try #require(Self.buffer(buffers.take(capacity: Self.mebibyte, extra: Self.mebibyte)))
        let (two, _) = try #require(Self.buffer(buffers.take(capacity: Self.mebibyte, extra: 0)))
        #expect(budget.inUse == 3 * Self.mebibyte)
        pool.recycle(two)
        // An idle buffer of its class, but no room for 1 MiB of compressed bytes.
        let result = TakenBox()
        let done = DispatchSemaphore(value: 0)
        Self.takeAsync(buffers, capacity: Self.mebibyte, extra: Self.mebibyte, into: result, done: done)
        #expect(done.wait(timeout: .now() + .milliseconds(200)) == .timedOut)
        budget.release(Self.mebibyte)  // the first frame is decoded
        #expect(done.wait(timeout: .now() + .seconds(10)) == .success)
        let (memory, _) = try #require(Self.buffer(result.current))
        #expect(memory == two)
        #expect(budget.peak <= 3 * Self.mebibyte)
        #expect(buffers.tally.peak == 2 * Self.mebibyte)
        pool.recycle(one)
        pool.recycle(memory)
    }

    @Test("a size class with no idle buffer unmaps the idle buffers of the others instead of waiting for ever")
    func otherClasses() throws {
        let budget = ByteBudget(limit: 4 * Self.mebibyte)
        let buffers = FrameBuffers(budget: budget)
        var taken: [(UnsafeMutableRawPointer, BufferPool)] = []
        for _ in 0 ..< 4 {
            taken.append(try #require(Self.buffer(buffers.take(capacity: Self.mebibyte, extra: 0))))
        }
        for (memory, pool) in taken { pool.recycle(memory) }
        #expect(budget.inUse == 4 * Self.mebibyte)
        let (large, largePool) = try #require(Self.buffer(buffers.take(capacity: 3 * Self.mebibyte, extra: 0)))
        #expect(buffers.tally.now == 4 * Self.mebibyte)  // one 4 MiB buffer, the idle ones unmapped
        #expect(budget.inUse == 4 * Self.mebibyte)
        // A streaming decoder's window makes room the same way.
        largePool.recycle(large)
        #expect(buffers.reserve(2 * Self.mebibyte))
        #expect(buffers.tally.now == 0)
        #expect(budget.inUse == 2 * Self.mebibyte)
        #expect(buffers.tally.peak == 4 * Self.mebibyte)
    }

    @Test("a wait for room ends when the run fails")
    func cancelled() throws {
        let budget = ByteBudget(limit: 2 * Self.mebibyte)
        let buffers = FrameBuffers(budget: budget)
        let (memory, pool) = try #require(Self.buffer(buffers.take(capacity: 2 * Self.mebibyte, extra: 0)))
        let result = TakenBox()
        let done = DispatchSemaphore(value: 0)
        Self.takeAsync(buffers, capacity: Self.mebibyte, into: result, done: done)
        #expect(done.wait(timeout: .now() + .milliseconds(100)) == .timedOut)
        budget.cancel()
        #expect(done.wait(timeout: .now() + .seconds(10)) == .success)
        if case .cancelled = result.current {
        } else {
            Issue.record("not cancelled: \(String(describing: result.current))")
        }
        pool.recycle(memory)
    }
}
