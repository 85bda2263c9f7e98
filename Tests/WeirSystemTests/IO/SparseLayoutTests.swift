import Testing
@testable import WeirSystem

/// Which blocks of a piece of output are written when writing sparsely.
@Suite("Sparse layout")
struct SparseLayoutTests {
    static func ranges(_ bytes: [UInt8], at offset: Int, block: Int) -> [Range<Int>] {
        bytes.withUnsafeBytes { SparseLayout.dataRanges($0, fileOffset: offset, blockSize: block) }
    }

    @Test("zero blocks are left out; neighbouring data blocks make one range")
    func aligned() {
        var bytes = [UInt8](repeating: 0, count: 10 * 4096)
        bytes[1 * 4096 + 7] = 1  // block 1
        bytes[2 * 4096] = 2  // block 2, joined to 1
        bytes[6 * 4096 + 4095] = 3  // block 6
        #expect(Self.ranges(bytes, at: 0, block: 4096) == [4096..<(3 * 4096), (6 * 4096)..<(7 * 4096)])
    }

    @Test("blocks follow file offsets: a piece that starts mid-block has a short first and last block")
    func unaligned() {
        var bytes = [UInt8](repeating: 0, count: 3 * 4096)
        bytes[0] = 1  // in the first, short block (file 1000..<4096)
        bytes[bytes.count - 1] = 1  // in the last, short block (file 12288..<13288)
        #expect(Self.ranges(bytes, at: 1000, block: 4096) == [0..<3096, (3096 + 2 * 4096)..<bytes.count])
    }

    @Test("all zeros give nothing to write; no zeros give the whole piece; an empty piece nothing")
    func extremes() {
        #expect(Self.ranges([UInt8](repeating: 0, count: 100_000), at: 12, block: 4096) == [])
        #expect(Self.ranges([UInt8](repeating: 9, count: 100_000), at: 12, block: 4096) == [0..<100_000])
        #expect(Self.ranges([], at: 0, block: 4096) == [])
    }

    @Test("a block is zero only if every byte is, the last one included")
    func isZero() {
        var bytes = [UInt8](repeating: 0, count: 4096)
        #expect(bytes.withUnsafeBytes { SparseLayout.isZero($0.baseAddress!, count: 4096) })
        for position in [0, 1, 2048, 4095] {
            bytes[position] = 0x80
            #expect(!bytes.withUnsafeBytes { SparseLayout.isZero($0.baseAddress!, count: 4096) }, "byte \(position)")
            bytes[position] = 0
        }
    }
}
