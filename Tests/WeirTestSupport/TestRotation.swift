import Foundation

/// How many rounds a randomized engine suite runs, and from which seed.
///
/// A plain run takes every round from the suite's fixed seed. scripts/test
/// runs the stress suites under Thread Sanitizer, where each round costs ten
/// times as much, as a sample: `WEIR_TEST_SEED` (the commit's, printed by
/// scripts/test) picks the rounds and `WEIR_TEST_SHARE` (above 0, at most 1)
/// sizes the sample, so that coverage grows landing by landing and a failure
/// replays with the same two values.
enum TestRotation {
    /// The seed: `WEIR_TEST_SEED` when set, else `fixed`.
    static func seed(_ fixed: UInt64) -> UInt64 {
        ProcessInfo.processInfo.environment["WEIR_TEST_SEED"].flatMap { UInt64($0) } ?? fixed
    }

    /// The rounds to run of `all`: all of them, or `WEIR_TEST_SHARE` of them (at least one).
    static func rounds(_ all: Int) -> Int {
        guard let share = ProcessInfo.processInfo.environment["WEIR_TEST_SHARE"].flatMap({ Double($0) }),
              share > 0, share < 1 else { return all }
        return max(1, Int((Double(all) * share).rounded(.up)))
    }
}
