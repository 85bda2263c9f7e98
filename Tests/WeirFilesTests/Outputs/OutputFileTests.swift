import Foundation
import Glibc
import Testing
@testable import WeirFiles
@testable import WeirSystem
@testable import WeirTestSupport

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
        #expect(write(file.descriptor.fd, "data", 4) == 4)
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

    @Test("-f replaces the old file by renaming the new one over it, synced or not", arguments: [true, false])
    func forceReplaces(sync: Bool) throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("t").path
        #expect(FileManager.default.createFile(atPath: target, contents: Data("old".utf8)))
        let file = try OutputFile(path: target, force: true)
        let temporaryPath = try #require(file.temporaryPath)
        let temporary = try #require(FileStatus.of(path: temporaryPath))
        #expect(write(file.descriptor.fd, "new", 3) == 3)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "old")  // until the commit
        try file.commit(copying: nil, sync: sync)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "new")
        #expect(FileStatus.of(path: target)?.inode == temporary.inode)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["t"])
    }

    @Test("the folder synced for an output is the one its name is in", arguments: [
        ("a/b/c.zst", "a/b"), ("c.zst", "."), ("/c.zst", "/"), ("/x/c.zst", "/x"), ("./c.zst", "."),
    ])
    func folderOfOutput(path: String, folder: String) {
        #expect(OutputFile.folder(of: path) == folder)
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
        #expect(write(file.descriptor.fd, "new", 3) == 3)
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

    /// Pages of `path` in the page cache (`mincore` over a read-only mapping).
    private static func cachedPages(_ path: String) throws -> Int {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        let size = Int(lseek(fd, 0, SEEK_END))
        let map = try #require(mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0))
        try #require(map != MAP_FAILED)
        defer { munmap(map, size) }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        var vector = [UInt8](repeating: 0, count: (size + page - 1) / page)
        try #require(mincore(map, size, &vector) == 0)
        return vector.filter { $0 & 1 != 0 }.count
    }

    /// Writes `bytes` to `path`; with `durable`, waits until they are on disk.
    private static func writeFile(_ path: String, _ bytes: [UInt8], durable: Bool) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        defer { close(fd) }
        try #require(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
        if durable { try #require(fsync(fd) == 0) }
    }

    @Test("-f over a clean file drops its cached pages and keeps its bytes until the commit; dirty pages stay")
    func forceDropsCleanCache() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("old").path
        let bytes = TestData.random(1 << 20, seed: 7)
        try Self.writeFile(target, bytes, durable: true)
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: target))) == bytes)  // cached again
        #expect(try Self.cachedPages(target) > 0)
        let file = try OutputFile(path: target, force: true)
        #expect(try Self.cachedPages(target) == 0)
        file.discard()
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: target))) == bytes)

        // Just written and not yet on disk: dropping would first write it back.
        let dirty = folder.appendingPathComponent("dirty").path
        try Self.writeFile(dirty, bytes, durable: false)
        let before = try Self.cachedPages(dirty)
        #expect(before > 0)
        let replacing = try OutputFile(path: dirty, force: true)
        #expect(try Self.cachedPages(dirty) == before)
        replacing.discard()
    }

    @Test("an output file named by bytes that are not UTF-8, in such a folder, is created under exactly those bytes")
    func outputFile() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let subfolder = Array(folder.path.utf8) + [0x2F, 0x64, 0xFE]
        #expect((subfolder + [0]).withUnsafeBytes { mkdir($0.bindMemory(to: CChar.self).baseAddress!, 0o755) } == 0)
        let path = FileName.string(fromBytes: subfolder + [0x2F, 0x6F, 0xFF])
        let file = try OutputFile(path: path, force: false)
        let temporary = try #require(file.temporaryPath)
        #expect(FileName.bytes(of: temporary).starts(with: subfolder + Array("/.weir-".utf8)))
        #expect(FileStatus.of(path: temporary) != nil)
        try file.commit(copying: nil)
        #expect(FileStatus.of(path: path)?.isRegularFile == true)
        #expect(!FileStatus.exists(temporary))
        // Nothing else was created: the parent folder holds only the subfolder.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).count == 1)
        #expect(throws: WeirError.self) { try OutputFile(path: path, force: false) }
    }
}
