/// Inputs that `--output-dir-flat` would write to the same output: those
/// whose names agree after their last slash, as zstd 1.5.4's
/// `FIO_checkFilenameCollisions` finds them (it warns once per extra copy,
/// after the run; the later inputs fail as "already exists" without -f).
package enum NameCollisions {
    /// The shared names, sorted (by bytes, as zstd's `strcmp`), one entry
    /// for each input beyond the first with that name.
    package static func flat(_ inputs: [String]) -> [String] {
        let names = inputs.map { input in
            let scalars = input.unicodeScalars
            let start = scalars.lastIndex(of: "/").map(scalars.index(after:)) ?? scalars.startIndex
            return String(String.UnicodeScalarView(scalars[start...]))
        }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return zip(names, names.dropFirst()).compactMap {
            $0.unicodeScalars.elementsEqual($1.unicodeScalars) ? $0 : nil
        }
    }
}
