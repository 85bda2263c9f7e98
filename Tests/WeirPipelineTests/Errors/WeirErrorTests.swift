import Glibc
import Testing
@testable import WeirPipeline
@testable import WeirSystem

@Suite("WeirError: the factories' texts, the frame and offset, the cause")
struct WeirErrorTests {
    @Test("the factories write the facts; hints are left to the command line")
    func texts() {
        let cases: [(WeirError, String)] = [
            (.system(ENOENT, path: "a", operation: .open), "open failed: No such file or directory"),
            (
                .folderSyncFailed(EIO, output: "d/a.zst", folder: "d"),
                "written, but syncing its folder d failed: Input/output error; it may not survive a power cut, "
                    + "so the input was kept"
            ),
            (.notZstd(path: "a", operation: .decompress), "not in zstd format"),
            (.notZstd(path: "a", operation: .list, "empty file"), "not in zstd format (empty file)"),
            (
                .truncated(path: "a", operation: .read, "the input ends at offset 9"),
                "truncated input: the input ends at offset 9"
            ),
            (
                .changedWhileRead(path: "a", operation: .read, shrank: true),
                "the file was truncated while it was being read"
            ),
            (
                .changedWhileRead(path: "a", operation: .read, shrank: false),
                "the file changed size while it was being read"
            ),
            (
                .corrupt(path: "a", operation: .decompress, "Data corruption detected"),
                "corrupt data: Data corruption detected"
            ),
            (
                .corrupt(path: "a", operation: .decompress, "declares 5 bytes", frame: 2, offset: 40),
                "corrupt data: frame 2 at offset 40 declares 5 bytes"
            ),
            (.corruptSeekTable(path: "a", "broken"), "corrupt seek table: broken"),
            (
                .dictionaryMismatch(path: "a", operation: .decompress, dictionary: nil),
                "Dictionary mismatch: the data was compressed with a dictionary"
            ),
            (
                .checksumMismatch(path: "a", operation: .decompress),
                "checksum mismatch: the decompressed data is corrupt"
            ),
            (.outputExists(path: "a"), "already exists"),
            (.sameFile(path: "a"), "output is the input file"),
            (.sameFile(path: "a", output: "b"), "output b is the input file"),
            (.inputIsDictionary(path: "a"), "cannot use it as an input file and dictionary"),
            (.terminalOutput(), "stdout is a terminal, aborting: will not write compressed data to it"),
            (.notRegularFile(path: "a", operation: .list), "not a regular file"),
            (.notRegularFile(path: "a", operation: .open, .directory), "is a directory"),
            (.notRegularFile(path: "a", operation: .readSample, .failed), "read sample failed: not a regular file"),
            (.cancelled(path: "a", operation: .run), "cancelled"),
            (
                .library(path: "a", operation: .setParameter("set level"), failed: "Unsupported parameter"),
                "set level failed: Unsupported parameter"
            ),
            (.outOfMemory(path: "a", operation: .compress), "out of memory"),
            (
                .outOfMemory(path: "a", operation: .compress, creating: "a zstd context"),
                "cannot create a zstd context: out of memory"
            ),
            (
                .memoryLimit(
                    path: "a", operation: .decompress, window: 300_000, limit: 1024, isDefaultLimit: false,
                    frame: 0, offset: 0),
                "frame 0 at offset 0 needs a window of 300000 bytes, more than the memory limit of 1024 bytes"
            ),
            (
                .memoryLimit(
                    path: "a", operation: .decompress, window: 1 << 40, limit: 1024, isDefaultLimit: true,
                    frame: 0, offset: 0),
                "frame 0 at offset 0 needs a window of 1099511627776 bytes, more than the default memory limit of "
                    + "1024 bytes "
                    + "(a window log above 31 is not supported)"
            ),
            (
                .sizeMismatch(path: "a", operation: .compress, actual: 3, declared: 4),
                "the input is 3 bytes, not the 4 declared"
            ),
            (.outsideMirror(path: "../a", root: "out"), "cannot be mirrored into out (a part of its path is ..)"),
        ]
        for (error, reason) in cases {
            #expect(error.reason == reason)
            #expect(!reason.contains(" -") && !reason.contains("--"), "a library reason names no flag: \(reason)")
            #expect(error.description == "\(error.path): \(reason)")
        }
    }

    @Test("a failure after which the partial output is kept says how much it keeps, and hints at resuming")
    func keeping() {
        let read = WeirError.system(EIO, path: "in", operation: .read).keeping("out.zst.part", percent: 42.7)
        #expect(read.description == "in: read failed: Input/output error; out.zst.part keeps the first 42%")
        #expect(read.kind == .system(errno: EIO) && read.operation == .read && read.hint == .resume)
        let located = WeirError.corrupt(path: "in", operation: .decompress, "bad", frame: 2, offset: 40)
            .keeping("out.part", percent: 10)
        #expect(located.reason == "corrupt data: frame 2 at offset 40 bad; out.part keeps the first 10%")
        #expect(located.frame == 2 && located.offset == 40)
    }

    @Test("the frame and offset are named where each kind of message puts them, from the fields")
    func located() {
        let libzstd = WeirError.corrupt(path: "a", operation: .decompress, "Data corruption detected")
        let located = libzstd.located(frame: 3, offset: 100, .trailing)
        #expect(located.reason == "corrupt data: Data corruption detected (frame 3, at offset 100)")
        #expect(located.frame == 3 && located.offset == 100)
        // An error that already names its frame keeps it.
        #expect(located.located(frame: 4, offset: 200, .trailing) == located)
        let scanned = WeirError.truncated(path: "a", operation: .scan, "the input ends at offset 7")
            .located(frame: 1, offset: 5, .scanned)
        #expect(scanned.reason == "truncated input: the input ends at offset 7 (frame 1, which starts at offset 5)")
        // The old way, a whole reason given to the initializer, stays as given.
        let plain = WeirError(.corrupt, path: "a", operation: .test, reason: "as given", frame: 1, offset: 2)
        #expect(plain.reason == "as given")
    }

    @Test("a seek table's problem is its detail, without taking text apart")
    func seekTableProblem() {
        #expect(WeirError.corruptSeekTable(path: "a", "broken").seekTableProblem == "broken")
        let truncated = WeirError.truncated(path: "a", operation: .readSeekTable, "the file ends at offset 9")
        #expect(truncated.seekTableProblem == "truncated input: the file ends at offset 9")
        let system = WeirError.system(EIO, path: "a", operation: .readSeekTable)
        #expect(system.seekTableProblem == system.reason)
    }

    @Test("the cause is kept, compared, and can be replaced; setting the reason replaces its text")
    func cause() {
        let inner = WeirError.corruptSeekTable(path: "a", "broken")
        var outer = WeirError.corruptSeekTable(path: "a", operation: .test, inner.seekTableProblem, cause: inner)
        #expect(outer.cause == inner)
        #expect(outer.reason == inner.reason)
        #expect(outer != WeirError.corruptSeekTable(path: "a", operation: .test, "broken"))
        outer.cause = nil
        #expect(outer == WeirError.corruptSeekTable(path: "a", operation: .test, "broken"))
        // Equal when the same text is built another way.
        #expect(outer == WeirError(.corrupt, path: "a", operation: .test, reason: "corrupt seek table: broken"))
        outer.reason = "other"
        #expect(outer.description == "a: other")
    }

    @Test("the kinds: one code per name across the layers, the name as description, errno kept, a switch with default")
    func kinds() {
        let codes: [WeirError.Kind] = [
            .truncated, .notRegularFile, .cancelled, .library,
            .notZstd, .corrupt, .checksumMismatch, .memoryLimit, .verificationFailed,
            .noMemberIndex, .notTar,
            .outputExists, .sameFile, .unknownSuffix, .terminal, .unusablePath, .alreadyCompressed,
            .sizeMismatch, .outOfRange, .sourceMismatch,
        ]
        #expect(Set(codes).count == codes.count)
        #expect(Set(codes.map(\.description)).count == codes.count)
        #expect(codes.allSatisfy { $0.errno == nil && $0 != .system(errno: EIO) })
        #expect(WeirError.Kind.notZstd.description == "notZstd")
        let system = WeirError.Kind.system(errno: ENOENT)
        #expect(system.errno == ENOENT && system.description == "system(errno: \(ENOENT))")
        #expect(system != .system(errno: EIO) && system == .system(errno: ENOENT))
        #expect(WeirError.system(EPIPE, path: "a", operation: .write).isBrokenPipe)
        let handled = codes.map { code -> String in
            switch code {
            case .notZstd, .corrupt: "damaged"
            case .system(errno: ENOENT): "missing"
            default: "other"
            }
        }
        #expect(handled.filter { $0 == "damaged" }.count == 2 && !handled.contains("missing"))
    }
}
