import Weir

/// What `-v` says of a level change under `--adapt`:
/// `--adapt: level 3 → 4 at 24.0 MiB (0.42 s)`, after the input's name;
/// the input offset is the first frame at the new level, the seconds since
/// the run started (scripts/bench reads both).
package enum LevelChangeLine {
    /// The line, without the program's and the input's names.
    package static func text(_ change: LevelChange) -> String {
        "--adapt: level \(change.from) → \(change.to) at \(ByteFormat.string(change.inputOffset)) ("
            + CFormat.string("%.2f", change.seconds) + " s)"
    }

    /// zstd's own debug line for the same decision (`-vvvv`, as zstd's
    /// display level 6), which zstd's cli-tests look for.
    package static func zstdText(_ change: LevelChange) -> String {
        change.isLighter ? "faster speed , lighter compression" : "slower speed , higher compression"
    }
}
