/// What the tests' bash scripts share.
enum TestShell {
    /// Put before a command started with `&` that a test will stop with
    /// SIGINT: a non-interactive bash starts background commands with SIGINT
    /// (and SIGQUIT) ignored, and that disposition outlives exec, so a signal
    /// sent before weir has set up its own handling was discarded, and the
    /// run went on to the test's time limit. It showed only when the machine
    /// was slow (two tests at once under TSan): the signal then came before
    /// weir's handlers. A terminal's Ctrl-C reaches a foreground job, whose
    /// SIGINT is not ignored; `env --default-signal` gives the background
    /// command that same start. Not before env runs: a signal sent at once
    /// (`&` then `kill`) can still meet bash's child with SIGINT ignored, so a
    /// script that signals at once turns job control on (`set -m`), under
    /// which bash leaves SIGINT alone in a background job.
    static let asForeground = "env --default-signal=INT,QUIT "
}
