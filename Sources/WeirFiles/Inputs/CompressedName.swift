/// Names that say their file is already compressed, for `--exclude-compressed`.
package enum CompressedName {
    /// zstd 1.5.4's list (`compressedFileExtensions` in programs/fileio.c).
    package static let extensions = [".zst", ".tzst", ".gz", ".tgz", ".lzma", ".xz", ".txz", ".lz4", ".tlz4"]

    /// Whether `path` ends with one of ``extensions``, compared as zstd
    /// compares it: the extension is everything from the path's last dot
    /// (a dot in a folder's name counts, so `a.gz/b` has none that matches),
    /// case-sensitive, and a path that is only the extension (`.gz`) has none.
    package static func matches(_ path: String) -> Bool {
        let scalars = path.unicodeScalars
        guard let dot = scalars.lastIndex(of: "."), dot != scalars.startIndex else { return false }
        let extensionScalars = scalars[dot...]
        return extensions.contains { $0.unicodeScalars.elementsEqual(extensionScalars) }
    }
}
