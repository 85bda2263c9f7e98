import CSupport
import Dispatch
import Foundation
import Glibc
import Testing
@testable import WeirSystem
@testable import WeirTestSupport

/// The ordered writer: pieces land in index order, and writes to a regular
/// file are cut where the page cache stays cheap (see `OrderedWriter`).
@Suite("Ordered writer")
struct OrderedWriterTests {
    private static func data(_ bytes: [UInt8]) -> DispatchData {
        bytes.withUnsafeBytes { DispatchData(bytes: $0) }
    }

    @Test("pieces submitted out of order land in order, after the file's offset")
    func order() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("out").path
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        defer { close(fd) }
        _ = "head".withCString { write(fd, $0, 4) }
        let pieces = (0..<5).map { TestData.random(100_000 + $0 * 70_001, seed: UInt64($0)) }
        let cleanup = DispatchGroup()
        let written = DispatchGroup()
        let sizes = Locked([Int: Int]())
        let writer = OrderedWriter(output: Descriptor(fd, path: "out"), cleanup: cleanup,
                                   onFinished: { index, size in sizes.withLock { $0[index] = size }; written.leave() },
                                   onError: { Issue.record("write failed: \($0)") })
        for index in [3, 0, 4, 2, 1] {
            written.enter()
            writer.submit(index, Self.data(pieces[index]))
        }
        written.wait()
        writer.close(stop: false)
        cleanup.wait()
        #expect(sizes.current == Dictionary(uniqueKeysWithValues: pieces.indices.map { ($0, pieces[$0].count) }))
        let content = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(content == Array("head".utf8) + pieces.flatMap { $0 })
    }

    @Test("a file that will be synced is written to disk as it is written, not left dirty for the final sync")
    func writeBack() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fd = open(folder.appendingPathComponent("out").path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        defer { close(fd) }
        let cleanup = DispatchGroup()
        let written = DispatchGroup()
        let writer = OrderedWriter(output: Descriptor(fd, path: "out"), writeBack: true, cleanup: cleanup,
                                   onFinished: { _, _ in written.leave() },
                                   onError: { Issue.record("write failed: \($0)") })
        let step = OrderedWriter.writeBackStep
        let piece = Self.data([UInt8](repeating: 0x5A, count: step / 2))
        for index in 0 ..< 6 {  // three steps
            written.enter()
            writer.submit(index, piece)
        }
        written.wait()
        writer.close(stop: false)
        cleanup.wait()
        // The first steps were handed to the disk: within seconds, at most
        // the last step's pages are still dirty or being written (the kernel
        // alone would keep all of them dirty for 30 s).
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let deadline = Date().addingTimeInterval(30)
        var unwritten = Int(weir_unwritten_pages(fd))
        try #require(unwritten >= 0, "cachestat (Linux 6.5) is needed")
        while unwritten * pageSize > step, Date() < deadline {
            usleep(50_000)
            unwritten = Int(weir_unwritten_pages(fd))
        }
        #expect(unwritten * pageSize <= step, "\(unwritten) pages of \(3 * step / pageSize) still unwritten")
    }

    @Test("writes to a regular file are cut 4 KiB past each multiple of 128 KiB of the file")
    func fileCuts() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fd = open(folder.appendingPathComponent("out").path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        defer { close(fd) }
        let cleanup = DispatchGroup()
        let writer = OrderedWriter(
            output: Descriptor(fd, path: "out"), cleanup: cleanup, onFinished: { _, _ in }, onError: { _ in })
        let k = OrderedWriter.maxWrite, phase = OrderedWriter.writePhase
        #expect(
            writer.cuts(300_000) == [
                0..<phase, phase..<(k + phase), (k + phase)..<(2 * k + phase), (2 * k + phase)..<300_000,
            ])
        // The next piece goes on from where the last one ended.
        let offset = 300_000
        let first = 2 * k + phase + k - offset
        #expect(writer.cuts(first + 10) == [0..<first, first..<(first + 10)])
        #expect(writer.cuts(0) == [0..<0])
        writer.close(stop: false)
        cleanup.wait()
    }

    @Test("a pipe gets each piece in one write")
    func pipeWhole() throws {
        let ends = try #require(TestPipe.make())
        defer { ends.close() }
        let cleanup = DispatchGroup()
        let writer = OrderedWriter(
            output: Descriptor(ends.write, path: "pipe"), cleanup: cleanup, onFinished: { _, _ in }, onError: { _ in })
        #expect(writer.cuts(5 << 20) == [0..<(5 << 20)])
        writer.close(stop: false)
        cleanup.wait()
    }

    @Test("sparse: zero blocks become holes, the bytes read back the same, and a trailing hole keeps the length")
    func sparse() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("out").path
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        defer { close(fd) }
        // Piece 0: 1 MiB of zeros, 300,000 bytes of data, 2 MiB of zeros;
        // piece 1: zeros only; piece 2: data, then 1 MiB of zeros at the end.
        let data = TestData.random(300_000, seed: 5)
        let pieces = [[UInt8](repeating: 0, count: 1 << 20) + data + [UInt8](repeating: 0, count: 2 << 20),
                      [UInt8](repeating: 0, count: 3 << 20),
                      data + [UInt8](repeating: 0, count: 1 << 20)]
        let cleanup = DispatchGroup()
        let written = DispatchGroup()
        let sizes = Locked([Int: Int]())
        let writer = OrderedWriter(output: Descriptor(fd, path: "out"), sparse: true, cleanup: cleanup,
                                   onFinished: { index, size in sizes.withLock { $0[index] = size }; written.leave() },
                                   onError: { Issue.record("write failed: \($0)") })
        for index in [2, 0, 1] {
            written.enter()
            writer.submit(index, Self.data(pieces[index]))
        }
        written.wait()
        writer.close(stop: false)
        cleanup.wait()
        #expect(sizes.current == [0: pieces[0].count, 1: pieces[1].count, 2: pieces[2].count])
        let content = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(content == pieces.flatMap { $0 })
        var info = stat()
        #expect(fstat(fd, &info) == 0)
        // 600,000 bytes of data: about 1,200 blocks of 512 bytes, against
        // the 16,000-odd a dense file of 8 MiB takes.
        #expect(Int(info.st_blocks) < 2_000, "\(info.st_blocks) blocks")
    }
}
