import Foundation
import Glibc
import Testing
@testable import WeirSystem
@testable import WeirTestSupport

/// Looking at an input's first bytes without taking them from it.
@Suite("Input peek")
struct InputPeekTests {
    @Test("a regular file: the bytes at the current offset, and the offset does not move")
    func file() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("in").path
        _ = FileManager.default.createFile(atPath: path, contents: Data("abcdefgh".utf8))
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        lseek(fd, 2, SEEK_SET)
        #expect(try InputPeek.firstBytes(of: Descriptor(fd, path: "in"), count: 4) == Array("cdef".utf8))
        #expect(lseek(fd, 0, SEEK_CUR) == 2)
        lseek(fd, 6, SEEK_SET)
        #expect(try InputPeek.firstBytes(of: Descriptor(fd, path: "in"), count: 4) == Array("gh".utf8))
    }

    @Test("a pipe: the bytes stay in the pipe for the reader; a short input ends when the writer closes")
    func pipe() throws {
        let ends = try #require(TestPipe.make())
        defer { close(ends.read) }
        _ = "xy".withCString { write(ends.write, $0, 2) }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
            _ = "z".withCString { write(ends.write, $0, 1) }
            close(ends.write)
        }
        #expect(try InputPeek.firstBytes(of: Descriptor(ends.read, path: "pipe"), count: 4) == Array("xyz".utf8))
        var buffer = [UInt8](repeating: 0, count: 8)
        let got = buffer.withUnsafeMutableBytes { read(ends.read, $0.baseAddress!, 8) }
        #expect(Array(buffer.prefix(max(0, got))) == Array("xyz".utf8))
    }

    @Test("an empty pipe whose writer is gone gives no bytes")
    func emptyPipe() throws {
        let ends = try #require(TestPipe.make())
        defer { close(ends.read) }
        close(ends.write)
        #expect(try InputPeek.firstBytes(of: Descriptor(ends.read, path: "pipe"), count: 4) == [])
    }

}
