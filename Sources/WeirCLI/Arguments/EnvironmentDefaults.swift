import Weir

/// Defaults taken from the environment, as zstd users know them from
/// `ZSTD_CLEVEL` and `ZSTD_NBTHREADS`:
///
/// - `WEIR_CLEVEL`: the compression level, a whole number other than 0:
///   negative for `--fast=N`, and above 19 (22 with `--ultra`) clamped with a
///   warning, as `-99` would be and as zstd clamps `ZSTD_CLEVEL`;
/// - `WEIR_NBTHREADS`: the number of worker threads, 0 (one per core) to 256.
///
/// Called by one of zstd's names (``init(environment:zstdNames:)``), weir
/// reads `ZSTD_CLEVEL` and `ZSTD_NBTHREADS` too, as zstd would; the `WEIR_`
/// ones win when both are set. Flags on the command line override them. A
/// value that is not valid (a level past 32 bits too) is ignored with a
/// warning that names it, and the default kept.
package struct EnvironmentDefaults: Equatable, Sendable {
    /// The name of the level variable.
    package static let levelVariable = "WEIR_CLEVEL"
    /// The name of the threads variable.
    package static let threadsVariable = "WEIR_NBTHREADS"
    /// Every variable read, weir's and zstd's.
    package static let variables = [levelVariable, threadsVariable, "ZSTD_CLEVEL", "ZSTD_NBTHREADS"]

    /// The level from `WEIR_CLEVEL`, if valid, before clamping (the command
    /// clamps it as it clamps `-N`, knowing `--ultra`).
    package var level: Int?
    /// The threads from `WEIR_NBTHREADS`, if valid.
    package var threads: Int?
    /// One message per invalid variable, without the `weir: warning: ` prefix.
    package var warnings: [String] = []

    /// Reads the variables from `environment`: weir's, and zstd's as well
    /// when `zstdNames` (weir was called as `zstd`, `unzstd`…).
    package init(environment: [String: String], zstdNames: Bool = false) {
        func lookUp(_ weir: String, _ zstd: String) -> (name: String, text: String)? {
            if let text = environment[weir] { return (weir, text) }
            if zstdNames, let text = environment[zstd] { return (zstd, text) }
            return nil
        }
        if let (name, text) = lookUp(Self.levelVariable, "ZSTD_CLEVEL") {
            if let value = Int(text.trimmingSpaces), value != 0, value.magnitude <= UInt32.max {
                // The fastest level, like --fast=N, is clamped without a word.
                level = max(value, Zstd.minLevel)
            } else {
                warnings.append("ignoring \(name)=\(text): not a level (a whole number: 1 to "
                                + "\(LevelPolicy.maximumWithoutUltra), up to \(Zstd.maxLevel) with --ultra, "
                                + "or negative for --fast)")
            }
        }
        if let (name, text) = lookUp(Self.threadsVariable, "ZSTD_NBTHREADS") {
            let trimmed = text.trimmingSpaces
            if let value = Int(trimmed), (0...256).contains(value) {
                threads = value
            } else {
                warnings.append("ignoring \(name)=\(text): not a number of threads (0 to 256)")
            }
        }
    }

    /// The arguments that carry these defaults, to go before the command
    /// line's own (normalized) ones, which then override them: a later
    /// `--level` or `-T` wins over an earlier one, and `--fast` wins over any
    /// `--level`. A negative level (`--fast=N`) is left out when the command
    /// line sets a level, since `--fast` would otherwise win over it.
    package func arguments(before commandLine: [String]) -> [String] {
        var result: [String] = []
        if let level {
            if level > 0 {
                result += ["--level", String(level)]
            } else if !commandLine.prefix(while: { $0 != "--" }).contains(where: {
                $0 == "--level" || $0.hasPrefix("--level=")
            }) {
                result.append("--fast=\(-level)")
            }
        }
        if let threads {
            result += ["--threads", String(threads)]
        }
        return result
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" { view.removeLast() }
        return String(view)
    }
}
