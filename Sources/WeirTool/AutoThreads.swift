import ArgumentParser

/// What `-T0` (and no `-T`) counts, as zstd's `--auto-threads`.
enum AutoThreads: String, ExpressibleByArgument, CaseIterable {
    /// One worker per physical core (hyper-threads not counted).
    case physical
    /// One worker per logical core, the cores the process may run on: weir's default.
    case logical
}
