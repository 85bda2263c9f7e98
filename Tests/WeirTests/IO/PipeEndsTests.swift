import Testing
@testable import Weir
import Glibc

/// Pipes the engine creates are never inherited by child processes.
@Suite("Pipe ends")
struct PipeEndsTests {
    @Test("both ends are close-on-exec")
    func closeOnExec() throws {
        let ends = try #require(PipeEnds.make())
        defer { ends.close() }
        #expect(fcntl(ends.read, F_GETFD) & FD_CLOEXEC != 0)
        #expect(fcntl(ends.write, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test("a child started while the pipe is open does not keep it open")
    func childDoesNotInherit() throws {
        let ends = try #require(PipeEnds.make())
        defer { close(ends.read) }
        // posix_spawn without file actions: a child inherits every
        // descriptor not marked close-on-exec (Foundation's Process would
        // close them all itself, hiding the difference).
        var child: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sleep"), strdup("5"), nil]
        defer { argv.forEach { free($0) } }
        try #require(posix_spawn(&child, "/bin/sleep", nil, nil, argv, environ) == 0)
        defer {
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        close(ends.write)
        // With the write end inherited, the reader would see no end of input
        // until the child exits, 5 s from now.
        var entry = pollfd(fd: ends.read, events: Int16(POLLIN), revents: 0)
        #expect(poll(&entry, 1, 2000) == 1)
        var byte: UInt8 = 0
        #expect(read(ends.read, &byte, 1) == 0)
    }
}
