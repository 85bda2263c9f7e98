import CSupport
import CXXHash
import Glibc
import WeirSystem

/// XXH64 (seed 0) over a file's bytes or a buffer: the hash whose low 32
/// bits a zstd frame stores as its content checksum, and the one a resume
/// record keeps of each frame's bytes in the `.part` (``ResumeRecord``).
///
/// A file's bytes are hashed where the page cache holds them, mapped (as
/// ``MappedInput`` reads an input, under the same SIGBUS guard): copying
/// them out first cost as much system time as the hash itself. Where a
/// file cannot be mapped, or a mapped page faults (the file was cut, the
/// disk failed), they are read in pieces of ``pieceSize`` instead, which
/// tells a short file or the read error.
package enum ContentHash {
    /// Bytes read per `pread` when hashing a file: large enough that the
    /// system calls cost nothing beside the hash, small enough to stay in
    /// the cache.
    static let pieceSize = 1 << 20

    /// The hash of `bytes`.
    static func of(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        XXH64(bytes.baseAddress, bytes.count, 0)
    }

    /// The hash of `count` bytes of `file` at `offset`; nil when the file
    /// holds fewer.
    ///
    /// - Throws: ``WeirError`` when a read fails.
    package static func of(_ file: Descriptor, count: Int, at offset: Int,
                   operation: WeirError.Operation = .read) throws(WeirError) -> UInt64? {
        if let hash = mapped(file, count: count, at: offset) { return hash }
        guard let state = XXH64_createState() else { return nil }
        defer { XXH64_freeState(state) }
        XXH64_reset(state, 0)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: min(max(count, 1), pieceSize), alignment: 64)
        defer { buffer.deallocate() }
        var done = 0
        while done < count {
            let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[..<min(buffer.count, count - done)])
            let got = try file.read(into: piece, at: offset + done, operation: operation)
            guard got == piece.count else { return nil }
            XXH64_update(state, piece.baseAddress, got)
            done += got
        }
        return XXH64_digest(state)
    }

    /// The hash of `count` bytes of `file` at `offset`, mapped; nil when the
    /// file holds fewer, cannot be mapped, or a page faulted.
    private static func mapped(_ file: Descriptor, count: Int, at offset: Int) -> UInt64? {
        guard count > 0, let size = try? file.status().size, size >= offset + count,
              weir_map_guard_install() == 0 else { return nil }
        let start = offset & ~(Page.size - 1)
        let lead = offset - start, length = lead + count
        guard let base = mmap(nil, length, PROT_READ, MAP_SHARED, file.fd, off_t(start)), base != MAP_FAILED else {
            return nil
        }
        defer { munmap(base, length) }
        madvise(base, length, MADV_SEQUENTIAL)
        let slot = weir_map_guard_register(base, length)
        guard slot >= 0 else { return nil }
        defer { weir_map_guard_unregister(slot) }
        let hash = XXH64(base + lead, count, 0)
        return weir_map_guard_fault_offset(slot) >= 0 ? nil : hash
    }
}
