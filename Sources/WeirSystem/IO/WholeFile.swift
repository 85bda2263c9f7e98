import Glibc

/// Reads the start of a regular file into memory: a dictionary (`-D`), a
/// training sample (`--train`).
package enum WholeFile {
    /// Reads at most `limit` bytes from the start of `path`.
    ///
    /// - Parameters:
    ///   - path: the file, as the user named it.
    ///   - limit: the most bytes read; the rest of the file is left unread.
    ///   - operation: what the error names, such as `.readDictionary`.
    /// - Returns: the bytes, and the file's whole size.
    /// - Throws: ``WeirError`` `.system` when it cannot be opened or read,
    ///   `.notRegularFile` when it is not a regular file.
    package static func read(
        _ path: String, limit: Int = .max, operation: WeirError.Operation
    ) throws(WeirError) -> (bytes: [UInt8], size: Int) {
        let file = try Descriptor.openForReading(path, operation: operation)
        defer { file.close() }
        let status = try file.status(operation: operation)
        guard status.isRegularFile else {
            throw WeirError.notRegularFile(path: path, operation: operation, .failed)
        }
        // A file whose size is not its content's (procfs, sysfs) is read to
        // its end; one cut while being read gives what is there.
        guard let size = InputKind.trustedSize(of: file, status: status) else {
            let bytes = try file.readToEnd(limit: limit == 0 ? .max : limit, operation: operation)
            return (Array(bytes.prefix(limit)), bytes.count)
        }
        let bytes = try file.read(count: min(limit, size), at: 0, operation: operation)
        return (bytes, size)
    }
}
