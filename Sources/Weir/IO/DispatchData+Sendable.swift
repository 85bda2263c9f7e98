import Dispatch
#if canImport(Glibc)
import Glibc
#endif

#if !canImport(Darwin)
// DispatchData is an immutable, reference-counted view of libdispatch data
// objects, safe to share between threads; on Linux (up to Swift 6.3) the
// overlay simply does not declare it Sendable.
extension DispatchData: @retroactive @unchecked Sendable {}
#endif

extension DispatchData {
    /// Concatenates `pieces` pairwise, level by level.
    ///
    /// `append` copies both region lists, so appending n pieces one after the
    /// other costs O(n²); the balanced tree costs O(n log n) and yields the
    /// same regions, with no byte copied.
    static func concatenating(_ pieces: [DispatchData]) -> DispatchData {
        var level = pieces.filter { $0.count > 0 }
        while level.count > 1 {
            var next: [DispatchData] = []
            next.reserveCapacity((level.count + 1) / 2)
            var index = 0
            while index < level.count {
                var left = level[index]
                if index + 1 < level.count { left.append(level[index + 1]) }
                next.append(left)
                index += 2
            }
            level = next
        }
        return level.first ?? .empty
    }

    /// Wraps a `malloc`ed buffer of `count` bytes without copying; the buffer
    /// is freed when the last reference to the data goes away.
    ///
    /// `Deallocator.free` crashes in `swift_retain` on Linux (the overlay's
    /// `_swift_dispatch_data_destructor_free` is not a real block there), so
    /// the buffer is freed by a custom deallocator, which libdispatch runs
    /// on a global queue.
    static func takingOwnership(of pointer: UnsafeMutableRawPointer, count: Int) -> DispatchData {
        nonisolated(unsafe) let buffer = pointer
        return DispatchData(bytesNoCopy: UnsafeRawBufferPointer(start: pointer, count: count),
                            deallocator: .custom(nil, { free(buffer) }))
    }
}
