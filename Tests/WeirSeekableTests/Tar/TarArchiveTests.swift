import Foundation
import Testing
@testable import WeirFormats
@testable import WeirPipeline
@testable import WeirPipelineTestSupport
@testable import WeirSeekable
@testable import WeirSystem
import WeirTar
@testable import WeirTarTestSupport
@testable import WeirTestSupport

/// ``TarArchive`` on a `.tar.zst` built here from a tar GNU tar made: its
/// content in zstd frames, then a member index (``MemberIndex``, listing the
/// members where the tar's headers put them, or elsewhere), then a seek
/// table listing both (docs/members.md).
@Suite("TarArchive")
struct TarArchiveTests {
    /// The tar of a folder `d` holding `a.txt` and `b.txt` (pax format), and its members' records.
    static func tar() throws -> (bytes: [UInt8], members: [MemberIndex.Member]) {
        try TestTar.paxFolder(b: TestData.text(3000))
    }

    /// Writes `tar` as one zstd frame (zstd's), `index`, and a seek table to a file; its path.
    static func archive(_ tar: [UInt8], index: MemberIndex, in folder: URL) throws -> String {
        let frame = try TestData.realTool("/usr/bin/zstd", ["-3"], input: tar)
        let path = folder.appendingPathComponent("a.tar.zst").path
        let indexFrame = try index.encoded(path: path)
        var table = SeekTable(hasChecksums: false)
        try table.append(compressedSize: frame.count, decompressedSize: tar.count, path: path)
        try table.append(compressedSize: indexFrame.count, decompressedSize: 0, path: path)
        try Data(frame + indexFrame + table.encoded()).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("lists the index's members, reads a member's bytes and a file's contents, writes a tar stream of a selection")
    func reads() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (tar, members) = try Self.tar()
        let end = members[members.count - 1].end
        let path = try Self.archive(tar, index: MemberIndex(members: members, endedEarly: false, endOffset: end,
                                                            contentSize: tar.count), in: folder)
        let archive = try TarArchive(path: path)
        #expect(archive.members.map(\.name) == ["d/", "d/a.txt", "d/b.txt"])
        #expect(try archive.contents(of: archive.members[1]) == Data("alpha\n".utf8))
        #expect(try archive.contents(of: archive.members[2]) == Data(TestData.text(3000)))
        var bytes: [UInt8] = []
        try archive.read(archive.members[2]) { bytes.append(contentsOf: $0) }
        #expect(bytes == Array(tar[archive.members[2].contentRange]))
        // The selection as a tar: the members' bytes, then two zero blocks.
        var stream: [UInt8] = []
        let selection = archive.select([TarMemberPattern("d/a*"), TarMemberPattern("x")])
        try archive.writeTar(of: selection.members) { stream.append(contentsOf: $0) }
        #expect(stream == Array(tar[members[1].headerOffset ..< members[1].end]) + [UInt8](repeating: 0, count: 1024))
        #expect(selection.unmatched == [TarMemberPattern("x")])
        do throws(WeirError) {
            _ = try archive.contents(of: archive.members[0])
            Issue.record("a folder's contents were read")
        } catch {
            #expect(error.kind == .notRegularFile && error.reason.contains("\"d/\""), "\(error)")
        }
    }

    @Test("a sparse file's contents (GNU tar's gnu, pax 0.0, 0.1, 1.0 formats): the file, holes as zeros")
    func sparseContents() async throws {
        let (file, tars) = try TestData.sparseArchives()
        for (format, tar) in tars {
            let folder = TestData.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let path = folder.appendingPathComponent("s.tar").path
            try Data(tar).write(to: URL(fileURLWithPath: path))
            try TestCompression.compress(
                file: path, options: CompressionOptions(level: 1, threads: 2, chunkSize: 64 << 10))
            let archive = try TarArchive(path: path + ".zst")
            let member = try #require(archive.members.first, "\(format)")
            #expect(!member.isPlainFile && member.size == file.count, "\(format)")
            #expect(try archive.contents(of: member) == Data(file), "\(format)")
        }
    }

    @Test("""
          an index whose offsets disagree with the content: the member \
          refused with the file and offset, nothing handed on
          """)
    func refusesWrongOffsets() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (tar, members) = try Self.tar()
        // a.txt's record points at b.txt's headers (a gap before it: its blocks are read from the previous
        // member's end, a.txt's own header first); b.txt's, after it, into b.txt's data.
        var wrong = members
        wrong[1].headerOffset = members[2].headerOffset
        wrong[1].headerLength = members[2].headerLength
        wrong[2].headerOffset = wrong[1].end
        wrong[2].headerLength = 512
        let path = try Self.archive(tar, index: MemberIndex(members: wrong, endedEarly: false,
                                                            endOffset: wrong[2].end, contentSize: tar.count),
                                    in: folder)
        let archive = try TarArchive(path: path)
        for (position, problem) in [(1, "bytes of header blocks after the member's own header"), (2, "checksum")] {
            var handed = 0
            do throws(WeirError) {
                try archive.read(archive.members[position]) { handed += $0.count }
                Issue.record("member \(position) read")
            } catch {
                #expect(error.kind == .corrupt && handed == 0, "\(error)")
                #expect(error.description.hasPrefix("\(path): member index disagrees with the archive: member "
                                                        + "\"\(archive.members[position].name)\" at content offset "
                                                        + "\(archive.members[position].blocksStart): "),
                        "\(error)")
                #expect(error.reason.contains(problem), "\(error)")
            }
        }
    }

    @Test("no index: a tar says how to add one, other content says it is not a tar")
    func withoutIndex() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (tar, _) = try Self.tar()
        for (content, kind) in [(tar, WeirError.Kind.noMemberIndex), (TestData.text(5000), .notTar)] {
            let path = folder.appendingPathComponent("plain.zst").path
            try Data(try TestData.realTool("/usr/bin/zstd", [], input: content)).write(to: URL(fileURLWithPath: path))
            do throws(WeirError) {
                _ = try TarArchive(path: path)
                Issue.record("opened")
            } catch {
                #expect(error.kind == kind, "\(error)")
                // zstd's one frame cannot be read in parts: recompressed, not indexed.
                #expect(kind != .noMemberIndex || error.hint == .recompress)
            }
        }
    }
}
