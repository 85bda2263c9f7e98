import WeirFormats

/// The one place the compression level a run asks for is resolved, as zstd's
/// programs resolve it: `--fast=N` is level -N (never past libzstd's fastest),
/// else the level given (flag or `WEIR_CLEVEL`), else libzstd's default; a
/// compression clamps it to ``maximumWithoutUltra`` unless `--ultra` allows
/// libzstd's maximum, with a warning, as zstd does. The benchmark and the
/// training take the level asked for (``requested``): zstd's `-b` clamps to
/// libzstd's range only, and `--train` tunes the dictionary for the level
/// as given.
package struct LevelPolicy: Equatable, Sendable {
    /// The highest level without `--ultra` (zstd's `ZSTDCLI_CLEVEL_MAX`).
    package static let maximumWithoutUltra = 19

    /// The level given by a flag or the environment, if any.
    package var level: Int?
    /// `--fast=N`'s N, if given.
    package var fast: Int?
    /// Whether `--ultra` allows the levels above ``maximumWithoutUltra``.
    package var ultra: Bool

    package init(level: Int?, fast: Int?, ultra: Bool) {
        self.level = level
        self.fast = fast
        self.ultra = ultra
    }

    /// The level asked for, before the compression's clamp.
    package var requested: Int {
        if let fast { return -min(fast, -Zstd.minLevel) }
        return level ?? Zstd.defaultLevel
    }

    /// The highest level a compression takes: libzstd's with `--ultra`.
    package var maximum: Int { ultra ? Zstd.maxLevel : Self.maximumWithoutUltra }

    /// The level a compression runs at, and the warning (without the
    /// `weir: warning: ` prefix) when the level asked for was clamped.
    package var resolved: (level: Int, warning: String?) {
        let requested = requested
        guard requested > maximum else { return (requested, nil) }
        let hint = ultra ? "" : " without --ultra"
        return (maximum, "compression level \(requested) is above the maximum \(maximum)\(hint); using \(maximum)")
    }

    /// The levels `-b` measures: from the level asked for to `last` (the
    /// level asked for when nil), both clamped to libzstd's maximum and the
    /// last never below the first, as zstd's benchmark does.
    package func benchmarkLevels(last: Int?) -> ClosedRange<Int> {
        let first = min(requested, Zstd.maxLevel)
        return first...max(first, min(last ?? first, Zstd.maxLevel))
    }
}
