import Glibc

/// Where a piece of output has data, for writing it sparsely: the piece is
/// seen as file-system blocks (aligned to file offsets, the first and last
/// clipped to the piece), and every block that holds only zeros is left out,
/// so the file gets a hole there instead of written zeros.
///
/// Leaving out zeros anywhere is safe as long as the file is as long as all
/// the output in the end (``OrderedWriter`` truncates it to that length):
/// bytes never written read as zeros. Blocks are the unit so that the data
/// goes out in few large writes, and a hole is only made where the file
/// system can free a whole block.
enum SparseLayout {
    /// The ranges of `bytes` to write, in order and never adjacent, when
    /// `bytes` lands at file offset `fileOffset` and blocks are `blockSize`
    /// bytes.
    static func dataRanges(_ bytes: UnsafeRawBufferPointer, fileOffset: Int, blockSize: Int) -> [Range<Int>] {
        precondition(blockSize > 0)
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return [] }
        var ranges: [Range<Int>] = []
        var runStart: Int?
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + blockSize - (fileOffset + start) % blockSize)
            if isZero(base + start, count: end - start) {
                if let first = runStart {
                    ranges.append(first..<start)
                    runStart = nil
                }
            } else if runStart == nil {
                runStart = start
            }
            start = end
        }
        if let first = runStart { ranges.append(first..<bytes.count) }
        return ranges
    }

    /// Whether `count` bytes at `pointer` are all zero: the first byte is,
    /// and every byte equals the one before it (one `memcmp` of the block
    /// against itself shifted by one byte).
    static func isZero(_ pointer: UnsafeRawPointer, count: Int) -> Bool {
        guard count > 0 else { return true }
        guard pointer.load(as: UInt8.self) == 0 else { return false }
        return count == 1 || memcmp(pointer, pointer + 1, count - 1) == 0
    }
}
