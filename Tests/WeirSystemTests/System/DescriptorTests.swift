import Foundation
import Glibc
import Testing
@testable import WeirSystem
@testable import WeirTestSupport

@Suite("System calls on a descriptor")
struct DescriptorTests {
    @Test("an exact pread: the bytes asked for at any offset, fewer only at the end of the file")
    func exactRead() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("data").path
        let content = TestData.random(100_000, seed: 3)
        _ = FileManager.default.createFile(atPath: path, contents: Data(content))
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        let file = Descriptor(fd, path: "data")
        #expect(try file.read(count: 1000, at: 4321, operation: .read) == Array(content[4321 ..< 5321]))
        #expect(try file.read(count: 1000, at: 99_500, operation: .read) == Array(content[99_500...]))
        #expect(try file.read(count: 10, at: 200_000, operation: .read).isEmpty)
        let status = try file.status()
        #expect(status.isRegularFile && status.size == 100_000)
    }

    @Test("a failed call is a WeirError naming the file and the operation")
    func errors() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fd = open(folder.path, O_RDONLY)
        defer { close(fd) }
        #expect(throws: WeirError.system(EISDIR, path: "dir", operation: .readSeekTable)) {
            try Descriptor(fd, path: "dir").read(count: 4, at: 0, operation: .readSeekTable)
        }
        #expect(throws: WeirError.system(EBADF, path: "gone", operation: .stat)) {
            try Descriptor(-1, path: "gone").status()
        }
        let fifo = folder.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let end = open(fifo, O_RDWR)
        defer { close(end) }
        #expect(try Descriptor(end, path: "fifo").status().isFIFO)
    }

    @Test("a read interrupted by a signal before any data goes on reading instead of failing with EINTR")
    func interruptedRead() throws {
        // A handler without SA_RESTART: the kernel ends the blocked read with EINTR.
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        action.sa_flags = 0
        var previous = sigaction()
        #expect(sigaction(SIGUSR2, &action, &previous) == 0)
        defer { sigaction(SIGUSR2, &previous, nil) }
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let reader = pthread_self()
        let writeEnd = ends[1]
        let helper = Thread {
            for _ in 0 ..< 3 {
                usleep(50_000)
                pthread_kill(reader, SIGUSR2)
            }
            usleep(50_000)
            _ = "x".withCString { write(writeEnd, $0, 1) }
            close(writeEnd)
        }
        helper.start()
        #expect(try Descriptor(ends[0], path: "pipe").readToEnd() == [UInt8(ascii: "x")])
    }
}
