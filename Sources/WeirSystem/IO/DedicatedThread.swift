import CSupport
import Dispatch
import Glibc

/// Starts a closure on a new POSIX thread of its own (not a GCD worker, not
/// Swift concurrency's pool), for work that blocks on semaphores, locks or
/// system calls. A pthread rather than Foundation's `Thread`, so the engine
/// needs only FoundationEssentials: loading all of Foundation (and ICU) cost
/// weir time and memory at every start (bench/results/2026-11-27-comment-
/// numbers.md, "Foundation at start").
package enum DedicatedThread {
    /// The stack of each thread: 1 MiB is plenty for a reading loop.
    static let stackSize = 1 << 20

    /// Runs `body` on a new detached thread named `name` (at most 15 bytes
    /// are kept). When no thread can be created (the process is out of
    /// threads), `body` runs on a global queue instead: blocking a GCD worker
    /// is worse than a thread of its own, but better than never running.
    package static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        final class Box {
            let name: String
            let body: @Sendable () -> Void
            init(name: String, body: @escaping @Sendable () -> Void) { self.name = name; self.body = body }
        }
        let box = Unmanaged.passRetained(Box(name: name, body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, stackSize)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let created = pthread_create(&thread, &attributes, { argument in
            // The argument is the box passed below, never nil.
            guard let argument else { return nil }
            let box = Unmanaged<Box>.fromOpaque(argument).takeRetainedValue()
            weir_set_thread_name(box.name)
            box.body()
            return nil
        }, box)
        if created != 0 {
            Unmanaged<Box>.fromOpaque(box).release()
            DispatchQueue.global().async(execute: body)
        }
    }
}
