import Foundation
import Glibc
import Testing
@testable import WeirFiles
@testable import WeirTestSupport

/// The sweep of the temporaries a weir cut short left: only weir's names,
/// only regular files, only those no process holds locked.
@Suite("Stale temporaries")
struct StaleTemporariesTests {
    /// Opens `path` on a descriptor of its own and locks it, as a live weir
    /// holds its temporary (a lock of this process still stops a sweep: a
    /// `flock` belongs to the open file, not the process).
    static func hold(_ path: String) throws -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        try #require(flock(fd, LOCK_EX | LOCK_NB) == 0)
        return fd
    }

    static func names(_ folder: ScratchFolder) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted()
    }

    @Test("weir's names: .weir- and six letters or digits")
    func names() {
        for name in [".weir-abcdef", ".weir-A1b2C3", ".weir-000000"] {
            #expect(StaleTemporaries.isTemporaryName(Array(name.utf8)), "\(name)")
        }
        for name in [
            ".weir-abcde", ".weir-abcdefg", "x.weir-abcde", ".weir-ab-def", ".weir-abc.ef", "weir-abcdef",
            ".Weir-abcdef",
        ] {
            #expect(!StaleTemporaries.isTemporaryName(Array(name.utf8)), "\(name)")
        }
    }

    @Test("a sweep removes the unheld temporaries, and keeps a held one, other names, links, folders and FIFOs")
    func sweep() throws {
        let folder = ScratchFolder()
        for name in [".weir-stale1", ".weir-stale2", ".weir-held01", ".weir-abc", "data.weir-abcdef", "target"] {
            folder.write(name, Array(name.utf8))
        }
        #expect(symlink("target", folder.path(".weir-linked")) == 0)
        #expect(mkdir(folder.path(".weir-folder"), 0o755) == 0)
        #expect(mkfifo(folder.path(".weir-fifo01"), 0o600) == 0)
        let held = try Self.hold(folder.path(".weir-held01"))
        defer { close(held) }
        #expect(StaleTemporaries.sweep(folder: folder.url.path) == 2)
        #expect(try Self.names(folder) == [".weir-abc", ".weir-fifo01", ".weir-folder", ".weir-held01", ".weir-linked",
                                           "data.weir-abcdef", "target"])
        #expect(StaleTemporaries.sweep(folder: folder.url.path) == 0)
        #expect(StaleTemporaries.sweep(folder: folder.path("absent")) == 0)
    }

    @Test("an output's temporary is held while it is written; a sweep leaves it, and discard leaves nothing")
    func outputHeld() throws {
        let folder = ScratchFolder()
        let file = try OutputFile(path: folder.path("out.zst"), force: false)
        #expect(write(file.descriptor.fd, "data", 4) == 4)
        #expect(StaleTemporaries.sweep(folder: folder.url.path) == 0)
        let temporary = try #require(file.temporaryPath)
        #expect(FileManager.default.fileExists(atPath: temporary))
        file.discard()
        #expect(try Self.names(folder).isEmpty)
    }

    @Test("a temporary a sweep took between its creation and its lock is seen as gone; one kept is locked")
    func createThenLock() throws {
        let folder = ScratchFolder()
        let taken = open(folder.path(".weir-taken0"), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try #require(taken >= 0)
        defer { close(taken) }
        #expect(StaleTemporaries.sweep(folder: folder.url.path) == 1)  // not locked yet: taken
        #expect(!StaleTemporaries.lockCreated(taken))
        let kept = open(folder.path(".weir-kept00"), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try #require(kept >= 0)
        defer { close(kept) }
        #expect(StaleTemporaries.lockCreated(kept))
        #expect(StaleTemporaries.sweep(folder: folder.url.path) == 0)
        #expect(try Self.names(folder) == [".weir-kept00"])
    }

    @Test("the first output made in a folder sweeps it, once per process, and reports what it removed")
    func sweptOnce() throws {
        let folder = ScratchFolder()
        folder.write(".weir-stale1", [1])
        let first = try OutputFile(path: folder.path("a.zst"), force: false)
        try first.commit(copying: nil, sync: false)
        #expect(!FileManager.default.fileExists(atPath: folder.path(".weir-stale1")))
        folder.write(".weir-stale2", [2])
        let second = try OutputFile(path: folder.path("b.zst"), force: false)
        try second.commit(copying: nil, sync: false)
        #expect(FileManager.default.fileExists(atPath: folder.path(".weir-stale2")))  // swept once already
        let mine = StaleTemporaries.takeReports().filter { $0.folder == folder.url.path }
        #expect(mine == [StaleTemporaries.Report(folder: folder.url.path, removed: 1)])
        #expect(StaleTemporaries.takeReports().filter { $0.folder == folder.url.path }.isEmpty)
    }
}
