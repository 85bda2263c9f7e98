/// The output names zstd users expect.
public enum OutputName {
    /// `FILE` → `FILE.zst`.
    public static func compressed(for input: String) -> String {
        input + ".zst"
    }

    /// `FILE.zst` and `FILE.zstd` → `FILE`, `FILE.tzst` → `FILE.tar`.
    ///
    /// - Throws: ``WeirError`` `.unknownSuffix` for any other name.
    public static func decompressed(for input: String) throws(WeirError) -> String {
        let lastSlash = input.lastIndex(of: "/").map { input.index(after: $0) } ?? input.startIndex
        let name = input[lastSlash...]
        for (suffix, replacement) in [(".zst", ""), (".zstd", ""), (".tzst", ".tar")]
        where name.count > suffix.count && name.hasSuffix(suffix) {
            return String(input.dropLast(suffix.count)) + replacement
        }
        throw WeirError(.unknownSuffix, path: input, operation: "name output",
                        reason: "unknown suffix (expected .zst, .zstd or .tzst); use -o to name the output or -c to write to stdout")
    }
}
