import Dispatch
import Foundation
import SystemPackage
import Testing
@testable import WeirPipeline
@testable import WeirPipelineTestSupport
@testable import WeirSystem
@testable import WeirTar
@testable import WeirTarTestSupport
@testable import WeirTestSupport

/// ``MemberIndexRecorder``: a file's chunks walked by the workers that
/// compress them and stitched in order, a pipe's by the reading thread; the
/// same output either way, byte for byte. Under the thread sanitizer with
/// the engine's suites (scripts/test): the workers hand their walks over and
/// stitch them while other workers compress.
@Suite("Member index recorder")
struct MemberIndexRecorderTests {
    /// A tar of a tree that tempts a guess where a chunk's first header lies:
    /// a tar inside it, zeros, many small files, a long name (pax records).
    static func tar(in folder: ScratchFolder) throws -> [UInt8] {
        let long = String(repeating: "l", count: 130)
        let script = """
            set -e; mkdir -p t/in t/\(long); for i in $(seq 1 200); do head -c $((i * 53)) /dev/urandom > t/in/f$i; done
            tar --format=posix -cf t/inner.tar t/in; head -c 400000 /dev/zero > t/zeros; echo x > t/\(long)/\(long)
            tar --format=posix -cf a.tar t
            """
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", script]
        shell.currentDirectoryURL = folder.url
        try shell.run()
        shell.waitUntilExit()
        try #require(shell.terminationStatus == 0)
        return try #require(FileManager.default.contents(atPath: folder.path("a.tar"))).map { $0 }
    }

    @Test("a file's output, its chunks walked by the workers, is the pipe's, its index included",
          arguments: [(1, 64 << 10, 2), (1, 1 << 20, 2), (3, 300 << 10, 3), (1, 1 << 20, 1)])
    func fileAsStream(level: Int, chunk: Int, threads: Int) async throws {
        let folder = ScratchFolder()
        let tar = try Self.tar(in: folder)
        let options = CompressionOptions(level: level, threads: threads, chunkSize: chunk)
        try TestCompression.compress(file: folder.path("a.tar"), options: options)
        let file = try #require(FileManager.default.contents(atPath: folder.path("a.tar.zst")))
        let streamed = PipeHarness.run(input: tar) { inFD, outFD in
            CompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: outFD),
                                inputName: "(stdin)", outputName: "(stdout)", options: options).result()
        }
        #expect([UInt8](file) == streamed.output)
        let found = try #require(try MemberIndex.read(path: folder.path("a.tar.zst")))
        #expect(found.index.members.count > 200)
        #expect(found.index.contentSize == tar.count)
    }

    @Test("""
          a resumed run whose kept frames hold all of the content reads no chunk: its kept part is walked at the \
          end, and the index is one walk's; a file written to while it is compressed gets none
          """)
    func keptWholeAndWrittenTo() throws {
        let folder = ScratchFolder()
        let tar = try Self.tar(in: folder)
        let whole = try #require(try TestTar.scannedIndex(tar))
        for written in [false, true] {
            let file = try Descriptor.openForReading(folder.path("a.tar"))
            defer { file.close() }
            let options = CompressionOptions(level: 3, threads: 2, chunkSize: 64 << 10)
            let recorder = try #require(MemberIndexRecorder(options: options, kept: tar.count,
                                                            input: .descriptor(file)))
            if written {
                // One byte of a member's data written again, as it was: the file's change time moves.
                let handle = try #require(FileHandle(forWritingAtPath: folder.path("a.tar")))
                try handle.seek(toOffset: UInt64(tar.count / 2))
                try handle.write(contentsOf: Data([tar[tar.count / 2]]))
                try handle.close()
            }
            let found = try recorder.finish(contentSize: tar.count, failed: false, path: "a.tar.zst")
            if written {
                #expect(found == nil)
            } else {
                #expect(try found?.frame.bytes(path: "a.tar.zst") == whole)
            }
        }
    }
}
