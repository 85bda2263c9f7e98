import Glibc

/// A test hook (`WEIR_TEST_STEP_HOLD=PATH`): after each step of work a
/// worker tells the progress observer of, it waits while `PATH` exists.
/// A test of the progress line creates the file, starts a run, reads the
/// line while the work stands still at a known point (the input read, a
/// step compressed or decoded), then removes the file: the run's moments
/// are the test's, not the machine's. Only the test builds set it.
package enum StepHold {
    /// Waits while `path` exists (checked every 10 ms); returns at once for nil.
    package static func wait(whileExists path: String?) {
        guard let path else { return }
        while access(path, F_OK) == 0 { usleep(10_000) }
    }
}
