/// The other names `weir` answers to, as zstd's `unzstd` and `zstdcat` do:
/// `scripts/install` makes them symbolic links to `weir`, and the program
/// acts by the name it was called by.
///
/// | name      | acts as     |
/// | --------- | ----------- |
/// | `unweir`  | `weir -d`   |
/// | `weircat` | `weir -dc --pass-through` |
enum ProgramAlias {
    /// Every alias and the flags it stands for.
    static let all: [(name: String, flags: [String])] = [
        ("unweir", ["-d"]),
        // zstdcat passes data that is not zstd through, as zcat -f does.
        ("weircat", ["-dc", "--pass-through"]),
    ]

    /// The flags the program name stands for, put before the user's
    /// arguments; none for `weir` or any other name.
    ///
    /// - Parameter program: `argv[0]`, a path or a bare name.
    static func flags(forProgram program: String) -> [String] {
        let name = program.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? program
        return all.first { $0.name == name }?.flags ?? []
    }
}
