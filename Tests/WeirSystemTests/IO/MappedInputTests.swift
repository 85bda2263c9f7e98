import Dispatch
import Foundation
import Glibc
import SystemPackage
import Testing
@testable import WeirSystem
@testable import WeirTestSupport

@Suite("Mapped input files")
struct MappedInputTests {
    /// A file holding `bytes`, opened for reading; the caller closes it.
    private static func open(_ bytes: [UInt8]) -> (fd: Int32, path: String, folder: URL) {
        let folder = TestData.temporaryFolder()
        let path = folder.appendingPathComponent("input").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        return (Glibc.open(path, O_RDONLY), path, folder)
    }

    private static func bytes(_ data: DispatchData) -> [UInt8] {
        var out: [UInt8] = []
        data.enumerateBytes { region, _, _ in out += region }
        return out
    }

    @Test("pieces are the file's bytes from the descriptor's offset, and the offset follows them")
    func piecesAndOffset() throws {
        let content = TestData.random(1_000_003)
        let (fd, _, folder) = Self.open(content)
        defer { close(fd); try? FileManager.default.removeItem(at: folder) }
        lseek(fd, 4097, SEEK_SET)  // not page-aligned: the mapping starts before it
        let input = try #require(MappedInput(Descriptor(fd, path: "input")))
        var read: [UInt8] = []
        while true {
            let piece = try input.next(length: 300_000)
            if piece.count == 0 { break }
            read += Self.bytes(piece)
            #expect(Int(lseek(fd, 0, SEEK_CUR)) == 4097 + read.count)
        }
        #expect(read == Array(content[4097...]))
        #expect(input.failure == nil)
    }

    @Test("a file that grows between pieces is read to its new end")
    func growing() throws {
        let (fd, path, folder) = Self.open(TestData.text(100_000))
        defer { close(fd); try? FileManager.default.removeItem(at: folder) }
        let input = try #require(MappedInput(Descriptor(fd, path: "input")))
        #expect(try input.next(length: 1 << 20).count == 100_000)
        let appender = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try appender.seekToEnd()
        try appender.write(contentsOf: Data(TestData.text(5_000, seed: 9)))
        try appender.close()
        let more = try input.next(length: 1 << 20)
        #expect(Self.bytes(more) == TestData.text(5_000, seed: 9))
        #expect(try input.next(length: 1 << 20).count == 0)
    }

    @Test("a file cut under a live piece: reading it does not crash, reads zeros, and is reported")
    func truncatedUnderPiece() throws {
        let content = TestData.random(3 << 20)
        let (fd, path, folder) = Self.open(content)
        defer { close(fd); try? FileManager.default.removeItem(at: folder) }
        let cleanup = DispatchGroup()
        let reader = ChunkReader(input: Descriptor(fd, path: "input"), kind: InputKind.of(Descriptor(fd, path: "")),
                                 chunkSize: 3 << 20, cleanup: cleanup)
        #expect(reader.isMapped)
        let piece = try reader.start().wait().data
        #expect(throws: Never.self) { try reader.checkUnchanged() }
        #expect(truncate(path, 1 << 20) == 0)
        // Touching the cut pages raises SIGBUS; the guard maps zeros there.
        let after = Self.bytes(piece)
        #expect(after.count == 3 << 20)
        #expect(after[..<(1 << 20)] == content[..<(1 << 20)])
        #expect(after[(1 << 20)...].allSatisfy { $0 == 0 })
        let error = #expect(throws: WeirError.self) { try reader.checkUnchanged() }
        #expect(error?.kind == .truncated)
        #expect(error?.description.contains("truncated while it was being read") == true)
        reader.close(stop: false)
        #expect(cleanup.wait(timeout: .now() + 5) == .success)
    }

    @Test("--no-mmap's reader and the mapped one give the same bytes")
    func channelAndMapAgree() throws {
        let content = TestData.text(5_000_000, seed: 7)
        let (fd, _, folder) = Self.open(content)
        defer { close(fd); try? FileManager.default.removeItem(at: folder) }
        var results: [[UInt8]] = []
        for map in [true, false] {
            lseek(fd, 0, SEEK_SET)
            let cleanup = DispatchGroup()
            let reader = ChunkReader(input: Descriptor(fd, path: "input"), kind: InputKind.of(Descriptor(fd, path: "")),
                                     chunkSize: 1 << 20,
                                     mapFiles: map, cleanup: cleanup)
            #expect(reader.isMapped == map)
            var read: [UInt8] = []
            while true {
                let chunk = try reader.start().wait()
                read += Self.bytes(chunk.data)
                if chunk.endOfInput { break }
            }
            reader.close(stop: false)
            #expect(cleanup.wait(timeout: .now() + 5) == .success)
            results.append(read)
        }
        #expect(results[0] == content)
        #expect(results[1] == content)
    }
}
