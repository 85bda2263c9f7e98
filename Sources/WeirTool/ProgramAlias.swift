/// The other names `weir` answers to, its own and zstd's: `scripts/install`
/// makes weir's symbolic links to `weir`, and a user who wants weir in place
/// of zstd links zstd's names to it; the program acts by the name it was
/// called by, as zstd does (a name is matched whole, or before a `.`).
///
/// | name                        | acts as     |
/// | --------------------------- | ----------- |
/// | `unweir`, `unzstd`          | `weir -d`   |
/// | `weircat`                   | `weir -dc --pass-through` |
/// | `zstdcat`, `zcat`, `gzcat`  | `weir -dcf --pass-through -q` (zstd: forced to stdout, links followed, quieter) |
/// | `zstdmt`                    | `weir -T0`  |
/// | `gzip`, `xz`, `lzma`        | `weir --format=… --rm` (`gzip`: and `-6`, gzip's default level) |
/// | `lz4`                       | `weir --format=lz4` |
/// | `gunzip`, `unxz`, `unlzma`  | `weir -d --rm` |
/// | `unlz4`                     | `weir -d` |
/// | `gzcat`                     | as `zcat`   |
/// | `zstd`                      | `weir`      |
///
/// Called by one of zstd's names, weir also reads `ZSTD_CLEVEL` and
/// `ZSTD_NBTHREADS` (``EnvironmentDefaults``).
enum ProgramAlias {
    /// Every alias, the flags it stands for, and whether it is one of zstd's names.
    static let all: [(name: String, flags: [String], zstd: Bool)] = [
        ("unweir", ["-d"], false),
        // zstdcat passes data that is not zstd through, as zcat -f does.
        ("weircat", ["-dc", "--pass-through"], false),
        ("zstd", [], true),
        ("unzstd", ["-d"], true),
        ("zstdcat", ["-dcf", "--pass-through", "-q"], true),
        ("zcat", ["-dcf", "--pass-through", "-q"], true),
        ("gzcat", ["-dcf", "--pass-through", "-q"], true),
        ("zstdmt", ["-T0"], true),
        // zstd 1.5.4's names of the other formats (programs/zstdcli.c).
        ("gzip", ["--format=gzip", "--rm", "-6"], true),
        ("gunzip", ["-d", "--rm"], true),
        ("xz", ["--format=xz", "--rm"], true),
        ("unxz", ["-d", "--rm"], true),
        ("lzma", ["--format=lzma", "--rm"], true),
        ("unlzma", ["-d", "--rm"], true),
        ("lz4", ["--format=lz4"], true),
        ("unlz4", ["-d"], true),
    ]

    /// The flags the program name stands for, put before the user's
    /// arguments; none for `weir` or any other name.
    ///
    /// - Parameter program: `argv[0]`, a path or a bare name.
    static func flags(forProgram program: String) -> [String] {
        alias(program)?.flags ?? []
    }

    /// The command line's arguments, with gzip's long flags that zstd takes
    /// when called `gzip`: `--best` is `-9`, `--no-name` nothing (no name is
    /// stored anyway). Called otherwise, or after `--`, they are left alone.
    static func arguments(_ arguments: [String], forProgram program: String) -> [String] {
        guard alias(program)?.name == "gzip" else { return arguments }
        var literal = false
        return arguments.compactMap { argument in
            if literal { return argument }
            switch argument {
            case "--": literal = true
            case "--best": return "-9"
            case "--no-name": return nil
            default: break
            }
            return argument
        }
    }

    /// Whether `program` is one of zstd's names.
    static func isZstdName(_ program: String) -> Bool {
        alias(program)?.zstd ?? false
    }

    private static func alias(_ program: String) -> (name: String, flags: [String], zstd: Bool)? {
        let name = program.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? program
        return all.first { name == $0.name || name.hasPrefix($0.name + ".") }
    }
}
