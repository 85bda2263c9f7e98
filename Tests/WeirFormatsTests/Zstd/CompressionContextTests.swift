import Foundation
import Glibc
import Testing
@testable import WeirFormats
@testable import WeirSystem
@testable import WeirTestSupport

/// A mapped chunk compressed in steps (`compressFrame(mapped:into:path:)`):
/// the frame libzstd decodes is the input, and the pages behind the window
/// have left the process.
@Suite("Compression context")
struct CompressionContextTests {
    /// Whether each page of `range` is mapped into this process
    /// (/proc/self/pagemap's present bit; readable without privileges).
    static func present(_ start: UnsafeRawPointer, pages: Int) throws -> [Bool] {
        let pagemap = open("/proc/self/pagemap", O_RDONLY)
        try #require(pagemap >= 0)
        defer { close(pagemap) }
        var entries = [UInt64](repeating: 0, count: pages)
        let offset = off_t(UInt(bitPattern: start) / UInt(Page.size) * 8)
        let got = entries.withUnsafeMutableBytes { pread(pagemap, $0.baseAddress, $0.count, offset) }
        try #require(got == pages * 8)
        return entries.map { $0 >> 63 == 1 }
    }

    @Test(
        """
        a mapped chunk larger than the window: libzstd decodes the frame to the chunk, and the pages behind the \
        window are given back
        """,
        arguments: [1, 3])
    func mappedChunk(level: Int) throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("input").path
        // 12 MiB, compressible, so the frame is small and the window (4 MiB,
        // as weir sets below level 7) is far behind the end.
        let size = 12 << 20
        let input = TestData.text(size, seed: 7)
        try Data(input).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        let mapping = try #require(mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0))
        try #require(mapping != MAP_FAILED)
        defer { munmap(mapping, size) }

        let context = try CompressionContext(level: level, checksum: true, windowLog: 22, path: path)
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: Zstd.compressBound(size), alignment: 16)
        defer { output.deallocate() }
        let written = try context.compressFrame(mapped: UnsafeRawBufferPointer(start: mapping, count: size),
                                                into: output, path: path)
        #expect(TestData.zstdDecode(Array(output[..<written])) == input)

        let pages = try Self.present(mapping, pages: size / Page.size)
        let behindWindow = (size - (4 << 20) - 2 * CompressionContext.mappedStep) / Page.size
        #expect(
            pages[..<behindWindow].allSatisfy { !$0 }, "pages more than a window and two steps behind still mapped in")
        let lastMiB = (size - (1 << 20)) / Page.size
        #expect(pages[lastMiB...].contains(true), "the last MiB was never read")

        // The same context then compresses a chunk in one piece, as before.
        let small = TestData.text(1 << 20, seed: 8)
        let again = try small.withUnsafeBytes { try context.compressFrame($0, into: output, path: path) }
        #expect(TestData.zstdDecode(Array(output[..<again])) == small)
    }

    /// The steps a context told of, as `consumed` saw them.
    final class Steps: Sendable {
        let seen = Locked<[Int]>([])
    }

    @Test("with someone following, a chunk is fed in steps, each told, and the frame is the one compressed in one call",
          arguments: [1, 19])
    func consumedSteps(level: Int) throws {
        let size = (3 << 20) + 12345
        let input = TestData.text(size, seed: 9)
        let bound = Zstd.compressBound(size)
        let plain = try CompressionContext(level: level, checksum: true, path: "in")
        let followed = try CompressionContext(level: level, checksum: true, path: "in")
        let steps = Steps()
        followed.consumed = { count in steps.seen.withLock { $0.append(count) } }
        var one = [UInt8](repeating: 0, count: bound), stepped = one
        let a = try input.withUnsafeBytes { bytes in
            try one.withUnsafeMutableBytes { try plain.compressFrame(bytes, into: $0, path: "in") }
        }
        // In one region (a read chunk) and in pieces (a pipe's): the same frame, told step by step.
        let data = input.withUnsafeBytes { DispatchData(bytes: $0) }
        let b = try stepped.withUnsafeMutableBytes { try followed.compressFrame(data, into: $0, path: "in") }
        #expect(Array(stepped[..<b]) == Array(one[..<a]))
        #expect(steps.seen.current.reduce(0, +) == size)
        #expect(steps.seen.current.count == (size + CompressionContext.mappedStep - 1) / CompressionContext.mappedStep)
        var pieces = DispatchData.empty
        for start in stride(from: 0, to: size, by: 1 << 20) {
            input[start ..< min(size, start + (1 << 20))].withUnsafeBytes { pieces.append(DispatchData(bytes: $0)) }
        }
        steps.seen.withLock { $0 = [] }
        let c = try stepped.withUnsafeMutableBytes { try followed.compressFrame(pieces, into: $0, path: "in") }
        #expect(Array(stepped[..<c]) == Array(one[..<a]))
        #expect(steps.seen.current.reduce(0, +) == size)
        #expect(steps.seen.current.allSatisfy { $0 <= CompressionContext.mappedStep })
    }
}
