import Glibc

/// Where a member index's bytes wait outside memory: its filled blocks of
/// raw columns until the end of the compression, and its compressed bytes
/// past what it keeps in memory. A file in `TMPDIR` (or /tmp), unlinked as
/// soon as made, so that a tar of millions of members does not make the
/// compression's memory grow with it (docs/members.md).
///
/// Appended to while the index is written, read back once. A file that
/// cannot be made or written to leaves the bytes where they were (in
/// memory): the index is never lost to it.
///
/// Threads: one at a time while it is written (the writer's, then the
/// pipeline's end); once written, ``read(into:at:)`` from any number at
/// once (`pread` alone, no state changed): a mount's readers restoring
/// checkpoints (``FrameCheckpoints``).
package final class IndexSpill: @unchecked Sendable {  // one writer; reads once written (above)
    private let fd: Int32
    /// Bytes in the file, all written.
    package private(set) var size = 0
    /// Bytes the file takes at most: past them a write stops short, as on a
    /// full disk (the tests' bound; a real file's is the disk's).
    private let capacity: Int

    /// A file in `folder` (else `TMPDIR`, else /tmp), named `name` and
    /// random letters, already unlinked; nil when none can be made. (Also
    /// where a mount's checkpoints of one frame keep the windows past `-M`:
    /// ``FrameCheckpoints``.)
    package init?(folder: String? = nil, name: String = "weir-index", capacity: Int = .max) {
        let folder = folder ?? getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        // A named file, unlinked at once: nothing is left behind, whatever ends the process.
        var template = Array((folder + "/" + name + "-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { name in name.baseAddress.map { mkstemp($0) } ?? -1 }
        guard fd >= 0 else { return nil }
        template.withUnsafeBufferPointer { name in if let path = name.baseAddress { _ = unlink(path) } }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        self.fd = fd
        self.capacity = capacity
    }

    deinit { close(fd) }

    /// Appends as much of `bytes` as the file takes; returns how many
    /// bytes it took (fewer than all only when a write failed).
    package func append(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        var done = 0
        let wanted = min(bytes.count, max(0, capacity - size))
        while done < wanted {
            let wrote = pwrite(fd, base + done, wanted - done, off_t(size + done))
            if wrote < 0, errno == EINTR { continue }
            guard wrote > 0 else { break }
            done += wrote
        }
        size += done
        return done
    }

    /// Hands `body` the file's bytes in order, in pieces of at most `size`
    /// read into one buffer (valid only during the call); false when the
    /// file could not be read back, or what `body` throws.
    package func forEachPiece<Failure: Error>(size: Int, _ body: (UnsafeRawBufferPointer) throws(Failure) -> Void)
        throws(Failure) -> Bool {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, min(size, self.size)), alignment: 16)
        defer { buffer.deallocate() }
        var offset = 0
        while offset < self.size {
            let count = min(buffer.count, self.size - offset)
            let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[0 ..< count])
            guard read(into: piece, at: offset) else { return false }
            try body(UnsafeRawBufferPointer(piece))
            offset += count
        }
        return true
    }

    /// Fills `buffer` from `offset`; false when the file could not be read.
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Bool {
        guard let base = buffer.baseAddress else { return true }
        var done = 0
        while done < buffer.count {
            let got = pread(fd, base + done, buffer.count - done, off_t(offset + done))
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { return false }
            done += got
        }
        return true
    }
}
