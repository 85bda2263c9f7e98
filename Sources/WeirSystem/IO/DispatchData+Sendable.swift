import Dispatch

#if !canImport(Darwin)
// DispatchData is an immutable, reference-counted view of libdispatch data
// objects, safe to share between threads; on Linux (up to Swift 6.3) the
// overlay simply does not declare it Sendable.
extension DispatchData: @retroactive @unchecked Sendable {}  // immutable, reference-counted; undeclared on Linux
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
}
