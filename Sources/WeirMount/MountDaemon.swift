import CFuse
import Glibc

/// A background mount's two processes, as sshfs and ratarmount have them:
/// the parent the user ran waits until the child reports the mount ready
/// (exit 0) or fails (exit 1, the child has said why); the child mounts and
/// serves.
///
/// A mount the user cancelled (SIGINT from a Ctrl-C, SIGTERM, SIGHUP to the
/// waiting parent) never appears, nor stays: the child asks the parent
/// before it mounts, one byte each way on a socket pair. Until the parent
/// said yes, the child has mounted nothing and writes nothing: a signal to
/// the parent kills it (SIGKILL: the decode of a tar without an index may
/// take minutes, and ends at once). Once it said yes, the parent passes the
/// signal on (SIGTERM), and the child unmounts (or never mounts: it looks
/// for a stop signal pending before it mounts). Either way the parent waits
/// for the child to end, then ends by the signal it was sent: when the
/// shell shows 130, nothing is mounted. The parent ending any other way
/// (SIGKILL) ends the child as well (the kernel's parent-death signal:
/// SIGKILL before the yes, SIGTERM after), until the child reports ready.
///
/// The parent is one thread (the fork comes before any thread starts), so
/// the parent-death signal, tied to the thread that forked, is the
/// process's.
package enum MountDaemon {
    /// What `fork` gave this process.
    package enum Side {
        /// The parent: once the child has reported, what to end with.
        case parent(Ending)
        /// The child, which mounts; its end of the socket pair.
        case child(Child)
        /// No child was made (the error's words).
        case failed(String)
    }

    /// How the parent ends.
    package enum Ending: Equatable {
        /// With this status: 0 once mounted, 1 when the child failed.
        case status(Int32)
        /// By this signal, once the child has ended with nothing mounted.
        case signal(Int32)
    }

    /// The child's end of the socket pair, and what it says through it.
    package struct Child: Sendable {
        /// The descriptor a daemon keeps (it closes the others).
        package let descriptor: Int32

        /// Whether the child may mount: asks the parent, and sets the
        /// parent-death signal to SIGTERM (what unmounts) once it may.
        /// False when the parent is gone, said no, or a stop signal is
        /// pending for the child (blocked, as the mount blocks them).
        package func mayMount() -> Bool {
            guard MountDaemon.say(Message.mayMount, on: descriptor) else { return false }
            var answer: UInt8 = 0
            while true {
                let got = read(descriptor, &answer, 1)
                if got == 1 { break }
                if got < 0, errno == EINTR { continue }
                return false
            }
            guard answer == Message.yes else { return false }
            _ = weir_parent_death_signal(SIGTERM)
            return !FuseMount.stopSignalPending()
        }

        /// Tells the parent the mount is ready; from here the child lives
        /// on alone (no parent-death signal).
        package func ready() {
            _ = weir_parent_death_signal(0)
            _ = MountDaemon.say(Message.ready, on: descriptor)
            close(descriptor)
        }
    }

    /// One byte each: the child's question and report, the parent's answer.
    private enum Message {
        static let mayMount: UInt8 = 0x4d  // "M"
        static let yes: UInt8 = 0x59  // "Y"
        static let ready: UInt8 = 0x52  // "R"
    }

    /// Forks: the child returns at once (in its own session, with its
    /// parent-death signal SIGKILL); the parent returns once the child has
    /// reported or ended. To be called before any thread starts, SIGINT,
    /// SIGTERM and SIGHUP not blocked yet (the parent blocks and reads them).
    package static func fork() -> Side {
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            return .failed("socketpair: \(String(cString: strerror(errno)))")
        }
        // Above 0, 1 and 2, which a caller may have closed (then the pair takes them): the child puts
        // /dev/null there once mounted, which would cut the parent off from the report it waits for.
        for end in 0 ..< 2 where ends[end] <= STDERR_FILENO {
            let moved = fcntl(ends[end], F_DUPFD_CLOEXEC, STDERR_FILENO + 1)
            guard moved >= 0 else { return .failed("fcntl: \(String(cString: strerror(errno)))") }
            close(ends[end])
            ends[end] = moved
        }
        // Blocked from before the fork: a Ctrl-C at any moment after it is read by the parent (the child's
        // mask is blocked too, as the mount blocks them in every thread it starts).
        var stops = stopSignals
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &stops, &previous)
        let parent = getpid()
        let child = Glibc.fork()
        guard child >= 0 else {
            pthread_sigmask(SIG_SETMASK, &previous, nil)
            return .failed("fork: \(String(cString: strerror(errno)))")
        }
        if child == 0 {
            close(ends[0])
            setsid()
            _ = weir_parent_death_signal(SIGKILL)
            // The parent ended before the death signal was set: nobody waits, nor may anything mount.
            if getppid() != parent { _exit(1) }
            // 0, 1 and 2 open (on /dev/null where the caller had closed them): once mounted, the child puts
            // /dev/null there, which would replace a descriptor the mount opened in their place (the archive).
            for fd in STDIN_FILENO ... STDERR_FILENO where fcntl(fd, F_GETFD) < 0 {
                let null = open("/dev/null", O_RDWR)
                if null >= 0, null != fd {
                    dup2(null, fd)
                    close(null)
                }
            }
            return .child(Child(descriptor: ends[1]))
        }
        close(ends[1])
        return .parent(wait(for: child, on: ends[0], signals: stops))
    }

    /// SIGINT, SIGTERM, SIGHUP.
    static var stopSignals: sigset_t {
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&signals, signal) }
        return signals
    }

    /// The parent's wait: answers the child's question, passes a stop
    /// signal on, and says how to end.
    private static func wait(for child: pid_t, on socket: Int32, signals: sigset_t) -> Ending {
        var signals = signals
        let taken = weir_signal_descriptor(&signals)
        var permitted = false
        func ended(_ status: Int32) -> Ending {
            while waitpid(child, nil, 0) < 0, errno == EINTR {}
            return .status(status)
        }
        while true {
            var watched = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: taken, events: Int16(POLLIN), revents: 0)]
            // Without a signal descriptor (none left), the signals stay pending and end the parent at its exit.
            guard poll(&watched, taken >= 0 ? 2 : 1, -1) >= 0 || errno == EINTR else { return ended(1) }
            if taken >= 0, watched[1].revents & Int16(POLLIN) != 0 {
                var record = [UInt8](repeating: 0, count: 128)
                guard read(taken, &record, 128) == 128 else { continue }
                let number = Int32(record.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
                // Before the yes nothing is mounted: killed, a decode before the mount ends at once. After
                // it, SIGTERM: the child unmounts (or, seeing it pending, does not mount).
                kill(child, permitted ? SIGTERM : SIGKILL)
                _ = ended(1)
                return .signal(number)
            }
            guard watched[0].revents != 0 else { continue }
            var byte: UInt8 = 0
            let got = read(socket, &byte, 1)
            if got < 0, errno == EINTR { continue }
            guard got == 1 else { return ended(1) }
            switch byte {
            case Message.mayMount:
                // Permitted before the answer is sent: a signal from here is passed on, not a kill.
                permitted = true
                guard say(Message.yes, on: socket) else { return ended(1) }
            case Message.ready:
                return .status(0)
            default:
                return ended(1)
            }
        }
    }

    /// Sends `byte` on `socket`; false when the other end is gone (no
    /// SIGPIPE: a child that dies, or a parent, must not end the other).
    private static func say(_ byte: UInt8, on socket: Int32) -> Bool {
        var byte = byte
        return send(socket, &byte, 1, Int32(MSG_NOSIGNAL)) == 1
    }

    /// Ends the process by `signal`, as it would have ended had it not
    /// been blocked (the shell then shows 128 + the signal).
    package static func end(by signal: Int32) -> Never {
        Glibc.signal(signal, SIG_DFL)
        var only = sigset_t()
        sigemptyset(&only)
        sigaddset(&only, signal)
        pthread_sigmask(SIG_UNBLOCK, &only, nil)
        raise(signal)
        _exit(128 + signal)
    }
}
