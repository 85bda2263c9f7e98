import CSupport
import Glibc

/// The first bytes of an input, read without consuming them, so that the
/// input can still be handed whole to whichever pipeline reads it.
///
/// - A regular file: `pread` at the current offset.
/// - A pipe or FIFO: `tee(2)` into a scratch pipe (``weir_peek_pipe``); the
///   bytes stay in the pipe. When fewer than `count` bytes are waiting, it
///   looks again every millisecond until enough have come or the writer has
///   closed (`POLLHUP`): a producer that writes its first bytes one at a time
///   costs a few wake-ups, never a lost byte.
/// - A socket: `recv(MSG_PEEK | MSG_WAITALL)`.
/// - Anything else (a terminal, a character device): cannot be peeked; nil.
package enum InputPeek {
    /// Up to `count` bytes from the start of `input` (fewer only at the end
    /// of the input; none for an empty input), or nil when it cannot be peeked.
    ///
    /// - Throws: ``WeirError`` when reading fails.
    package static func firstBytes(of input: Descriptor, count: Int) throws(WeirError) -> [UInt8]? {
        let fd = input.fd, path = input.path
        let status = try input.status(operation: .read)
        if status.isRegularFile {
            return try input.read(count: count, at: max(0, Int(lseek(fd, 0, SEEK_CUR))), operation: .read)
        } else if status.isFIFO {
            return try peekPipe(input, count: count)
        } else if status.isSocket {
            var buffer = [UInt8](repeating: 0, count: count)
            let n = buffer.withUnsafeMutableBytes { bytes in
                // No byte asked for: none to peek.
                guard let base = bytes.baseAddress else { return 0 }
                return Descriptor.retrying { recv(fd, base, count, Int32(MSG_PEEK | MSG_WAITALL)) }
            }
            if n < 0 { throw WeirError.system(errno, path: path, operation: .read) }
            return Array(buffer.prefix(n))
        }
        return nil
    }

    private static func peekPipe(_ input: Descriptor, count: Int) throws(WeirError) -> [UInt8] {
        let fd = input.fd
        var buffer = [UInt8](repeating: 0, count: count)
        while true {
            let n = buffer.withUnsafeMutableBytes { bytes in peek(fd, into: bytes) }
            if n < 0 {
                let code = errno
                guard code == EAGAIN else { throw WeirError.system(code, path: input.path, operation: .read) }
                var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&entry, 1, -1)
                continue
            }
            if n == 0 || n >= count { return Array(buffer.prefix(n)) }
            // Some bytes, not enough: wait for more, or for the writer to go.
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&entry, 1, 0) == 1, entry.revents & Int16(POLLHUP) != 0 {
                let last = buffer.withUnsafeMutableBytes { bytes in peek(fd, into: bytes) }
                return Array(buffer.prefix(max(n, last)))
            }
            usleep(1000)
        }
    }

    /// Peeks at the pipe `fd` into `bytes`: their count, or -1 (errno); 0
    /// for an empty `bytes` (no byte asked for).
    private static func peek(_ fd: Int32, into bytes: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        return weir_peek_pipe(fd, base, bytes.count)
    }
}
