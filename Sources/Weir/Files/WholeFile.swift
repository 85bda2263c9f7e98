#if canImport(Glibc)
import Glibc
#endif

/// Reads the start of a regular file into memory: a dictionary (`-D`), a
/// training sample (`--train`).
enum WholeFile {
    /// Reads at most `limit` bytes from the start of `path`.
    ///
    /// - Parameters:
    ///   - path: the file, as the user named it.
    ///   - limit: the most bytes read; the rest of the file is left unread.
    ///   - operation: what the error names, such as `"read dictionary"`.
    /// - Returns: the bytes, and the file's whole size.
    /// - Throws: ``WeirError`` `.system` when it cannot be opened or read,
    ///   `.notRegularFile` when it is not a regular file.
    static func read(_ path: String, limit: Int = .max, operation: String) throws(WeirError) -> (bytes: [UInt8], size: Int) {
        let fd = FileName.withCString(path) { Glibc.open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { throw WeirError.system(errno, path: path, operation: operation) }
        defer { Glibc.close(fd) }
        let status = try FileStatus.of(descriptor: fd, path: path)
        guard status.isRegularFile else {
            throw WeirError(.notRegularFile, path: path, operation: operation,
                            reason: "\(operation) failed: not a regular file")
        }
        let wanted = min(limit, status.size)
        var bytes = [UInt8](repeating: 0, count: wanted)
        var filled = 0
        while filled < wanted {
            let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + filled, wanted - filled, off_t(filled)) }
            if got < 0 {
                if errno == EINTR { continue }
                throw WeirError.system(errno, path: path, operation: operation)
            }
            if got == 0 { break }  // cut while being read: keep what is there
            filled += got
        }
        bytes.removeLast(wanted - filled)
        return (bytes, status.size)
    }
}
