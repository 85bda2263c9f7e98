import Dispatch
import Glibc
import SystemPackage
import WeirSystem

/// An object over HTTP(S) read from start to end, as a pipe: a thread of
/// its own GETs the body (``RemoteTransfer``: retried and resumed at the
/// byte reached) and writes it into a pipe whose read end the engine reads
/// as it reads standard input, so that memory is bounded as for a pipe.
/// `weir -d URL`, `-dc URL` and `-t URL` read it so.
///
/// The read end is handed over once the answer's first bytes came (an
/// error status or a failed connection is the open's error, in one line).
/// A failure after that ends the pipe early, and is kept first
/// (``NamedInputs/keepFailure(_:for:)``): the bytes so far may end where a
/// frame, a gzip member or any copied input could, so whatever reads the
/// pipe to its end fails with it rather than take them for the whole.
package enum RemoteStream {
    /// The failure that ended the stream of `url` early, if one did.
    package static func failure(for url: String) -> WeirError? { NamedInputs.failure(for: url) }

    /// Starts reading `url`; returns the pipe's read end, named `url`, once
    /// the body started (the caller closes it: the reading thread then stops).
    /// `known` is what an earlier answer said of the object (its size, its
    /// ETag): the stream must be that object and end at that size; else
    /// the first answer tells them.
    ///
    /// - Throws: `WeirError` naming the URL, when the object cannot be read.
    static func open(_ url: String, client: HTTPClient, known: ObjectIdentity? = nil) throws(WeirError) -> Descriptor {
        let ends: (readEnd: FileDescriptor, writeEnd: FileDescriptor)
        do {
            ends = try FileDescriptor.pipe()
        } catch {
            throw WeirError.system((error as? Errno)?.rawValue ?? EMFILE, path: url, operation: .pipe)
        }
        let writing = ends.writeEnd.rawValue
        _ = fcntl(ends.readEnd.rawValue, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writing, F_SETFD, FD_CLOEXEC)
        let started = DispatchSemaphore(value: 0)
        let early = Locked<WeirError?>(nil)
        DedicatedThread.start(name: "weir-http") {
            // A reader gone is EPIPE for this thread, not the process's signal.
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &blocked, nil)
            var begun = false
            var identity = known
            do throws(WeirError) {
                try RemoteTransfer(client: client, url: url).run(from: 0, to: nil, identity: &identity) { piece in
                    if !begun {
                        begun = true
                        started.signal()
                    }
                    var done = 0
                    while done < piece.count {
                        let wrote = Descriptor.retrying {
                            Glibc.write(writing, piece.baseAddress.map { $0 + done }, piece.count - done)
                        }
                        if wrote <= 0 { return false }
                        done += wrote
                    }
                    return true
                }
            } catch {
                if begun {
                    // Kept before the pipe ends: its reader asks at the end.
                    NamedInputs.keepFailure(error, for: url)
                } else {
                    early.withLock { $0 = error }
                }
            }
            Glibc.close(writing)
            if !begun { started.signal() }
        }
        started.wait()
        if let error = early.current {
            try? ends.readEnd.close()
            throw error
        }
        return Descriptor(ends.readEnd.rawValue, path: url)
    }
}
