import Dispatch
import Weir
import Glibc

/// SIGINT, SIGTERM and SIGHUP through dispatch sources; SIGPIPE ignored.
///
/// The first signal cancels the run in progress: its channels stop, its
/// temporary output file is removed, the main thread returns and the process
/// exits with 128 + the signal after every channel has been closed (so the
/// descriptors' flags are restored). A second signal exits at once, after
/// removing any temporary output file, so nothing partial is left under a
/// name that could be taken for a complete file. Either way the progress
/// line is taken off the terminal first.
///
/// The signals reach the sources through no handler on any thread: they are
/// blocked on every thread (see `install`), so the kernel keeps each one
/// pending for the process, where the signalfd libdispatch reads on its
/// manager thread takes it.
///
/// Threads: used by the main thread alone (install, uninstall), so not
/// Sendable; the handlers, on `queue`, share only `state`, `cancellation`
/// and `console`, which are.
final class SignalHandler {
    let cancellation = Cancellation()
    private let queue = DispatchQueue(label: "weir.signals")
    private var sources: [DispatchSourceSignal] = []
    /// The calling thread's signal mask before `install`, put back by `uninstall`.
    private var previousMask = sigset_t()
    private let state = SignalState()
    private let console: Console

    /// Whether a second signal exits at once; false for a run whose write
    /// must end whole or be undone (`--index` appends in place): every
    /// signal then only cancels, and the run ends when its write is done.
    private let exitsOnSecondSignal: Bool

    init(console: Console, exitsOnSecondSignal: Bool = true) {
        self.console = console
        self.exitsOnSecondSignal = exitsOnSecondSignal
    }

    /// The first signal received, if any.
    var received: Int32? { state.first }

    func install() {
        // The status flags of stdin, stdout and stderr as the shell gave them:
        // the second-signal path exits without closing the channels, so it
        // puts them back itself (DispatchIO sets O_NONBLOCK on pipes and
        // terminals, which the rest of the pipeline and the shell would see).
        let savedFlags = [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO].map { ($0, fcntl($0, F_GETFL)) }
        signal(SIGPIPE, SIG_IGN)
        // Blocked before the sources exist, on this thread and so on every
        // thread the run starts (a new thread inherits the mask; libdispatch's
        // own threads block every signal; weir starts none before the run). A
        // signal then stays pending for the process until the source's
        // signalfd takes it, even one that arrives before the source is
        // registered (asynchronously, on the manager thread), and no thread
        // has to run a handler for it. Unblocked, it goes to the main thread,
        // where libdispatch's handler would pass it on; Thread Sanitizer runs
        // a program's handler only at the thread's next intercepted call, so
        // a main thread asleep in DispatchGroup.wait (a futex it does not
        // intercept) never did: a Ctrl-C while weir waited for input was lost.
        let numbers = [SIGINT, SIGTERM, SIGHUP]
        var blocked = sigset_t()
        sigemptyset(&blocked)
        for number in numbers { sigaddset(&blocked, number) }
        pthread_sigmask(SIG_BLOCK, &blocked, &previousMask)
        for number in numbers {
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [state, cancellation, console, exitsOnSecondSignal] in
                // The progress line goes first, so the terminal is left clean
                // whichever way the process ends.
                console.stopProgress()
                if state.record(number) || !exitsOnSecondSignal {
                    cancellation.cancel()
                } else {
                    PendingTemporaries.removeAll()
                    for (fd, flags) in savedFlags where flags >= 0 { _ = fcntl(fd, F_SETFL, flags) }
                    _exit(128 + number)
                }
            }
            source.activate()
            sources.append(source)
        }
    }

    func uninstall() {
        for source in sources { source.cancel() }
        sources.removeAll()
        pthread_sigmask(SIG_SETMASK, &previousMask, nil)
    }
}

/// The signals seen so far; touched only on the signal queue, read by the
/// main thread after the run ends.
private final class SignalState: Sendable {
    private let signals = Locked<[Int32]>([])

    /// Records a signal; true if it is the first.
    func record(_ number: Int32) -> Bool {
        signals.withLock { signals in
            signals.append(number)
            return signals.count == 1
        }
    }

    var first: Int32? { signals.withLock { $0.first } }
}
