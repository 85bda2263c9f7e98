import Glibc

/// Puts a descriptor that libdispatch made non-blocking back into blocking
/// mode, so that its channel's `read()` waits in the kernel and never meets
/// `EAGAIN` (which would arm libdispatch's epoll sources; see
/// ``ChunkReader``). Called from a channel barrier, after the channel's set-up
/// and before its first operation. libdispatch still restores the original
/// flags when the channel's cleanup runs.
enum BlockingMode {
    static func set(_ descriptor: Descriptor) {
        let flags = fcntl(descriptor.fd, F_GETFL)
        if flags >= 0, flags & O_NONBLOCK != 0 {
            _ = fcntl(descriptor.fd, F_SETFL, flags & ~O_NONBLOCK)
        }
    }
}
