import WeirSystem

/// A seek table read from the end of a file with `pread`: what the listing
/// (`-l`), the check of a finished output and resume read before anything else.
extension SeekTable {
    /// The seek table at the end of `file`, of `fileSize` bytes, read
    /// with `pread` (the file offset is neither used nor moved); nil when
    /// the file does not end with one.
    ///
    /// - Throws: as ``SeekTable/decode(fileSize:path:reading:)``, and
    ///   `.corrupt` when the table's frames add up to more than the bytes
    ///   before it; `.system` when `pread` fails.
    package static func atEnd(of file: Descriptor, fileSize: Int) throws(WeirError) -> SeekTable? {
        guard let table = try entriesAtEnd(of: file, fileSize: fileSize) else { return nil }
        if table.dataStart < 0 {
            throw corrupt(
                "the seek table at offset \(table.tableOffset) describes \(table.compressedTotal) "
                    + "bytes of frames, more than the \(table.tableOffset) bytes before it", path: file.path)
        }
        return table
    }

    /// As ``atEnd(of:fileSize:)``, but a table whose frames add up
    /// to more than the bytes before it is returned, with a negative
    /// ``SeekTable/dataStart`` (for ``SeekTableCheck`` to find the entry at fault).
    package static func entriesAtEnd(of file: Descriptor, fileSize: Int) throws(WeirError) -> SeekTable? {
        try decode(fileSize: fileSize, path: file.path) { count, offset throws(WeirError) in
            try file.read(count: count, at: offset, operation: .readSeekTable)
        }
    }
}
