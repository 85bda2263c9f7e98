import CZstdSplit
import Glibc
import WeirSystem

/// One block of a frame decoded by blocks (``BlockFrame``): its compressed
/// bytes, copied here as they arrive, what the scan read, and what phase 1
/// decoded (its literals and sequences), owned by the record.
///
/// Owned by one thread at a time, handed on under a lock or through a
/// queue: the reading thread fills and scans it, then hands it to phase 1
/// (a worker, or the reading thread itself:
/// ``BlockDecodingContext/decode(_:)``); once decoded it goes to phase 2
/// (``BlockFrame/execute(_:)``), then back to the reading thread to be
/// filled again. Each hand-off orders every access, hence
/// `@unchecked Sendable`.
package final class BlockRecord: @unchecked Sendable {
    /// The bytes a record holds: a block's 3-byte header and at most
    /// ZS_BLOCK_MAX bytes of content.
    package static let inputCapacity = 3 + Int(ZS_BLOCK_MAX)
    /// The memory a record holds once used (its input, literals, sequences
    /// and table descriptions), for the budget.
    package static let footprint = inputCapacity + Int(ZS_BLOCK_MAX) + Int(ZS_WILDCOPY)
        + (Int(ZS_BLOCK_MAX) / 3 + 1) * MemoryLayout<zs_seq>.stride + 16 << 10

    var block = zs_block()
    let input: UnsafeMutableRawPointer
    /// Bytes of `input` filled, and how many the block takes (its header
    /// first, then the size the header gives).
    package internal(set) var filled = 0
    var needed = 3
    /// Phase 1's result: 0, or a ZS_ERR_ code.
    package internal(set) var status: Int32 = 0

    package init(path: String) throws(WeirError) {
        guard let input = malloc(Self.inputCapacity) else {
            throw WeirError.outOfMemory(path: path, operation: .decompress, creating: "a block record")
        }
        self.input = input
        guard zs_block_init(&block) == 0 else {
            free(input)
            throw WeirError.outOfMemory(path: path, operation: .decompress, creating: "a block record")
        }
    }

    deinit {
        zs_block_free(&block)
        free(input)
    }

    /// Whether every byte of the block is in.
    package var isComplete: Bool { filled == needed }

    /// Starts the record on a new block.
    package func reset() {
        filled = 0
        needed = 3
        status = 0
    }

    /// Copies the block's next bytes from `source`; returns how many it took.
    /// Once the 3-byte header is in, the block's size is known: a size
    /// past what a block may hold is left to the scan to refuse, with the
    /// header alone.
    package func take(_ source: UnsafeRawBufferPointer, blockMaximum: Int) -> Int {
        let count = min(source.count, needed - filled)
        if count > 0, let bytes = source.baseAddress {
            (input + filled).copyMemory(from: bytes, byteCount: count)
            filled += count
        }
        if needed == 3, filled == 3 {
            let bytes = input.assumingMemoryBound(to: UInt8.self)
            let header = Int(bytes[0]) | Int(bytes[1]) << 8 | Int(bytes[2]) << 16
            let type = (header >> 1) & 3
            let size = type == 1 ? 1 : header >> 3
            if type != 3, size <= blockMaximum { needed = 3 + size }
        }
        return count
    }
}
