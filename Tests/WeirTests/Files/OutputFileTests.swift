import Foundation
import Testing
@testable import Weir
import Glibc

@Suite("Output files")
struct OutputFileTests {
    @Test("the file appears only on commit, with the source's mode and mtime")
    func commit() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("source").path
        #expect(FileManager.default.createFile(atPath: source, contents: Data("x".utf8)))
        chmod(source, 0o640)
        var times = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 1_234_567, tv_nsec: 0)]
        utimensat(AT_FDCWD, source, &times, 0)
        let target = folder.appendingPathComponent("target").path
        let file = try OutputFile(path: target, force: false)
        #expect(!FileManager.default.fileExists(atPath: target))
        // Private while incomplete.
        #expect(FileStatus.of(path: try #require(file.temporaryPath))!.mode & 0o777 == 0o600)
        #expect(write(file.descriptor, "data", 4) == 4)
        try file.commit(copying: FileStatus.of(path: source))
        let status = try #require(FileStatus.of(path: target))
        #expect(status.mode & 0o777 == 0o640)
        #expect(status.modificationTime.tv_sec == 1_234_567)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "data")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["source", "target"])
    }

    @Test("discard leaves nothing; an existing file is refused without force")
    func discardAndExisting() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("t").path
        let file = try OutputFile(path: target, force: false)
        file.discard()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        #expect(FileManager.default.createFile(atPath: target, contents: Data("keep".utf8)))
        #expect(throws: WeirError.self) { try OutputFile(path: target, force: false) }
        let forced = try OutputFile(path: target, force: true)
        try forced.commit(copying: nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)).isEmpty)
    }

    @Test("a missing folder is a clean error naming the file")
    func missingFolder() {
        do {
            _ = try OutputFile(path: "/nonexistent-weir/x.zst", force: false)
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "/nonexistent-weir/x.zst: create failed: No such file or directory")
        }
    }

    @Test("a file that appears under the name while the output is written is not replaced without force")
    func noClobberAtCommit() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("t").path
        let file = try OutputFile(path: target, force: false)
        #expect(write(file.descriptor, "new", 3) == 3)
        #expect(FileManager.default.createFile(atPath: target, contents: Data("theirs".utf8)))
        do {
            try file.commit(copying: nil)
            Issue.record("expected .outputExists")
        } catch {
            #expect(error.kind == .outputExists)
        }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "theirs")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["t"])
    }
}
