import CXXHash

/// XXH64 (seed 0) over a file's bytes or a buffer: the hash whose low 32
/// bits a zstd frame stores as its content checksum, and the one a resume
/// record keeps of each frame's bytes in the `.part` (``ResumeRecord``).
/// Files are hashed in pieces of ``pieceSize`` through one streaming
/// state, so that a frame of 512 MiB needs no buffer of its size.
enum ContentHash {
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
    static func of(_ file: Descriptor, count: Int, at offset: Int,
                   operation: WeirError.Operation = .read) throws(WeirError) -> UInt64? {
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
}
