import Dispatch
import Glibc
import Testing
@testable import WeirSystem

@Suite("Buffer pool")
struct BufferPoolTests {
    static let page = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// The pages of `buffer` the kernel holds in memory (mincore).
    static func residentPages(_ buffer: UnsafeMutableRawPointer, size: Int) -> Int {
        var vector = [UInt8](repeating: 0, count: (size + page - 1) / page)
        #expect(mincore(buffer, size, &vector) == 0)
        return vector.filter { $0 & 1 != 0 }.count
    }

    /// Waits until the pool has an idle buffer (a wrapped buffer comes back
    /// on another queue when its data is released). The bound is a hang's,
    /// not a speed: 1 s failed in a CI rehearsal under load (the suites run
    /// beside the lane's power cuts and builds).
    static func waitIdle(_ pool: BufferPool) -> Bool {
        for _ in 0..<30_000 where !pool.hasIdle { usleep(2000) }
        return pool.hasIdle
    }

    @Test("a buffer that held a large frame keeps only the pages of the next, smaller one")
    func tailReleased() throws {
        let size = 64 * Self.page
        let pool = BufferPool(size: size, keep: 1)
        let buffer = try #require(pool.take())
        memset(buffer, 1, size)
        #expect(Self.residentPages(buffer, size: size) == 64)
        var data: DispatchData? = pool.wrap(buffer, count: size)
        #expect(data?.count == size)
        data = nil
        #expect(Self.waitIdle(pool))
        #expect(Self.residentPages(buffer, size: size) == 64, "a buffer used whole keeps its pages")

        let again = try #require(pool.take())
        #expect(again == buffer)
        memset(again, 2, 3 * Self.page + 1)
        data = pool.wrap(again, count: 3 * Self.page + 1)
        data = nil
        #expect(Self.waitIdle(pool))
        #expect(Self.residentPages(again, size: size) == 4, "the pages past the frame are given back")
        // What was kept reads as written; the rest as zeros, whatever it held.
        #expect(again.load(fromByteOffset: 3 * Self.page, as: UInt8.self) == 2)
        #expect(again.load(fromByteOffset: 10 * Self.page, as: UInt8.self) == 0)
    }
}
