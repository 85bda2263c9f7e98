import WeirSystem

/// The output names zstd users expect.
///
/// Names are handled as Unicode scalars, never `Character`s: a name is bytes
/// (see ``FileName``), and grapheme clusters could join a suffix's dot to
/// what precedes it, or the last slash to what follows it.
package enum OutputName {
    /// `FILE` → `FILE.zst`, or `FILE` and the suffix of the format written
    /// (`--format=gzip`: `FILE.gz`).
    package static func compressed(for input: String, suffix: String = ".zst") -> String {
        input + suffix
    }

    /// The suffixes zstd 1.5.4 takes off when it decompresses (its
    /// `suffixList`, built with zlib, liblzma and liblz4 as Debian's is),
    /// and what replaces them: a compressed tar's short suffix gives `.tar`.
    static let decompressedSuffixes = [
        (".zst", ""), (".zstd", ""), (".tzst", ".tar"), (".gz", ""), (".tgz", ".tar"), (".lzma", ""), (".xz", ""),
        (".txz", ".tar"), (".lz4", ""), (".tlz4", ".tar"),
    ]

    /// `FILE.zst`, `FILE.gz`, … → `FILE`, `FILE.tzst`, `FILE.tgz`, … → `FILE.tar`.
    ///
    /// - Throws: ``WeirError`` `.unknownSuffix` for any other name.
    package static func decompressed(for input: String) throws(WeirError) -> String {
        let scalars = input.unicodeScalars
        let name = scalars[(scalars.lastIndex(of: "/").map(scalars.index(after:)) ?? scalars.startIndex)...]
        for (suffix, replacement) in decompressedSuffixes {
            let ending = Array(suffix.unicodeScalars)
            guard name.count > ending.count, name.suffix(ending.count).elementsEqual(ending) else { continue }
            return String(String.UnicodeScalarView(scalars.dropLast(ending.count))) + replacement
        }
        throw WeirError.unknownSuffix(path: input)
    }

    /// `name` moved into `folder`, as zstd's `--output-dir-flat` places it:
    /// `folder/` and the part of `name` after its last slash.
    package static func placed(_ name: String, in folder: String) -> String {
        let scalars = name.unicodeScalars
        let base = scalars[(scalars.lastIndex(of: "/").map(scalars.index(after:)) ?? scalars.startIndex)...]
        let separator = folder.unicodeScalars.last == "/" ? "" : "/"
        return folder + separator + String(String.UnicodeScalarView(base))
    }

    /// The folder under `root` that `--output-dir-mirror` gives the output
    /// of `input`: `root/` and the input's folder, less one leading `./`
    /// and then one leading `/` (zstd's `trimPath`). Nil when a part of
    /// `input` is `..`: zstd refuses to write outside `root`.
    package static func mirroredFolder(for input: String, root: String) -> String? {
        let parts = input.unicodeScalars.split(separator: "/", omittingEmptySubsequences: false)
        if parts.contains(where: { $0.elementsEqual("..".unicodeScalars) }) { return nil }
        let folder = trimmed(input).unicodeScalars
        guard let slash = folder.lastIndex(of: "/") else { return root }
        let separator = root.unicodeScalars.last == "/" ? "" : "/"
        return root + separator + String(String.UnicodeScalarView(folder[..<slash]))
    }

    /// `path` less one leading `./`, then one leading `/`, as zstd's `trimPath`.
    static func trimmed(_ path: String) -> String {
        var scalars = Substring(path).unicodeScalars
        if scalars.starts(with: "./".unicodeScalars) { scalars = scalars.dropFirst(2) }
        if scalars.first == "/" { scalars = scalars.dropFirst() }
        return String(String.UnicodeScalarView(scalars))
    }
}
