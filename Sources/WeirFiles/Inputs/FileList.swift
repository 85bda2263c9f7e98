import Glibc
import WeirSystem

/// The names in a `--filelist` file: one per line, as zstd 1.5.4 reads them
/// (`UTIL_createFileNamesTable_fromFileName`): the line's bytes up to its
/// newline, nothing trimmed, at most 50 MiB of names. Empty lines are left
/// out (zstd would try to open an empty name).
package enum FileList {
    /// The largest list zstd reads.
    package static let maximumSize = 50 << 20

    /// Reads the names listed in `path`.
    ///
    /// - Throws: ``WeirError`` when the file cannot be read, is not a regular
    ///   file, is larger than ``maximumSize`` or lists no name (zstd refuses
    ///   those as well).
    package static func names(in path: String) throws(WeirError) -> [String] {
        guard let status = FileStatus.of(path: path), status.isRegularFile else {
            throw WeirError.unusableFileList(path: path, "cannot read the file list: not a regular file")
        }
        guard status.size <= maximumSize else {
            throw WeirError.unusableFileList(path: path, "the file list is larger than 50 MiB")
        }
        let file = try Descriptor.openForReading(path)
        defer { file.close() }
        // Read to the end: a list in /proc says it holds 0 bytes.
        let bytes = try file.readToEnd(limit: maximumSize + 1, operation: .read)
        guard bytes.count <= maximumSize else {
            throw WeirError.unusableFileList(path: path, "the file list is larger than 50 MiB")
        }
        let names = bytes.split(separator: UInt8(ascii: "\n")).map { FileName.string(fromBytes: $0) }
        if names.isEmpty {
            throw WeirError.unusableFileList(path: path, "the file list names no file")
        }
        return names
    }
}
