/// The output names zstd users expect.
///
/// Names are handled as Unicode scalars, never `Character`s: a name is bytes
/// (see ``FileName``), and grapheme clusters could join a suffix's dot to
/// what precedes it, or the last slash to what follows it.
public enum OutputName {
    /// `FILE` → `FILE.zst`.
    public static func compressed(for input: String) -> String {
        input + ".zst"
    }

    /// `FILE.zst` and `FILE.zstd` → `FILE`, `FILE.tzst` → `FILE.tar`.
    ///
    /// - Throws: ``WeirError`` `.unknownSuffix` for any other name.
    public static func decompressed(for input: String) throws(WeirError) -> String {
        let scalars = input.unicodeScalars
        let name = scalars[(scalars.lastIndex(of: "/").map(scalars.index(after:)) ?? scalars.startIndex)...]
        for (suffix, replacement) in [(".zst", ""), (".zstd", ""), (".tzst", ".tar")] {
            let ending = Array(suffix.unicodeScalars)
            guard name.count > ending.count, name.suffix(ending.count).elementsEqual(ending) else { continue }
            return String(String.UnicodeScalarView(scalars.dropLast(ending.count))) + replacement
        }
        throw WeirError(.unknownSuffix, path: input, operation: .nameOutput,
                        reason: "unknown suffix (expected .zst, .zstd or .tzst); use -o to name the output or -c to write to stdout")
    }
}
