import Foundation
import Glibc
import Testing
@testable import WeirFiles
@testable import WeirFormats
@testable import WeirFormatsTestSupport
@testable import WeirSystem
@testable import WeirTestSupport

/// What an earlier run left beside an output, as a careless or hostile user
/// leaves it: ``PartialOutput/open(for:identity:options:holds:dictionary:input:)``
/// resumes only its own `.part` whose every frame checks, and never writes
/// through a file it did not create (issue 49).
@Suite("Partial output")
struct PartialOutputTests {
    /// A folder with `in` (4 frames' worth of text) and, for `kept` frames,
    /// `out.part` and its record as a stopped compression leaves them.
    struct Kept {
        let folder = ScratchFolder()
        let input: [UInt8]
        let frames: [[UInt8]]
        static let frameSize = 64 << 10
        static let options = "level=3 test"

        /// Whether the record keeps each frame's hash (version 3, as weir
        /// writes it now) or not (an earlier version's: checked by decoding).
        let hashed: Bool

        init(kept: Int = 3, seed: UInt64 = 7, hashed: Bool = true) throws {
            self.hashed = hashed
            let input = TestData.text(4 * Self.frameSize, seed: seed)
            self.input = input
            frames = try (0 ..< 4).map { index in
                try TestFrames.frame(
                    of: Array(input[(index * Self.frameSize)..<((index + 1) * Self.frameSize)]))
            }
            folder.write("in", input)
            folder.write("out.part", Array(frames[..<kept].joined()))
            try writeRecord(kept: kept)
        }

        var part: String { folder.path("out.part") }
        var record: String { folder.path(".out.part.resume") }

        func entries(_ frames: ArraySlice<[UInt8]>) -> [SeekTable.Entry] {
            frames.map { frame in
                SeekTable.Entry(compressedSize: UInt32(frame.count), decompressedSize: UInt32(Self.frameSize),
                                checksum: frame.suffix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            }
        }

        /// The record of the first `kept` frames (of `frames`, by default
        /// this input's), naming the `.part` there now.
        func writeRecord(kept: Int, of frames: [[UInt8]]? = nil) throws {
            var info = stat()
            #expect(lstat(part, &info) == 0)
            let header = ResumeRecord.header(
                identity: try identity(), options: Self.options, part: ResumeRecord.part(info))
            let entries = self.entries((frames ?? self.frames)[..<kept])
            let hashes = (frames ?? self.frames)[..<kept].map { frame in frame.withUnsafeBytes { ContentHash.of($0) } }
            let total = entries.reduce(0) { $0 + Int($1.compressedSize) }
            let (text, _) = ResumeRecord.append(entries[...], partHashes: hashed ? hashes : nil,
                                                checkpoint: .init(frames: kept, compressedBytes: total,
                                                                  decompressedBytes: kept * Self.frameSize),
                                                after: ResumeRecord.hash(Array(header.utf8)))
            folder.write(".out.part.resume", Array((header + text).utf8))
        }

        func identity() throws -> String {
            ResumeRecord.identity(of: try #require(FileStatus.of(path: folder.path("in"))))
        }

        /// Opens the output `out` as a compression of `in` would.
        func open() throws -> PartialOutput? {
            let input = try Descriptor.openForReading(folder.path("in"))
            defer { input.close() }
            return try PartialOutput.open(for: folder.path("out"), identity: try identity(), options: Self.options,
                                          dictionary: nil, input: input)
        }

        func contents(_ name: String) -> [UInt8]? {
            FileManager.default.contents(atPath: folder.path(name)).map(Array.init)
        }
    }

    /// Replaces `path` by a hard link to `target`.
    static func link(_ path: String, to target: String) {
        unlink(path)
        #expect(Glibc.link(target, path) == 0)
    }

    @Test("its own .part whose frames check resumes after them, its record of now or of an earlier version",
          arguments: [true, false])
    func resumes(hashed: Bool) throws {
        let kept = try Kept(hashed: hashed)
        // Frames that store a checksum: a record with hashes is checked without decoding.
        #expect(kept.frames.allSatisfy { $0[4] & 0x04 != 0 })
        let partial = try #require(try kept.open())
        defer { partial.descriptor.close() }
        #expect(partial.start == .resumed(frames: 3, inputBytes: 3 * Kept.frameSize,
                                          outputBytes: kept.frames[..<3].reduce(0) { $0 + $1.count }))
    }

    @Test("a hard link to another file at the .part's name starts over in a new file; the file is untouched")
    func hardLink() throws {
        let kept = try Kept()
        kept.folder.write("precious", Array("keep me".utf8))
        Self.link(kept.part, to: kept.folder.path("precious"))
        try kept.writeRecord(kept: 3)  // even a record naming that inode
        let partial = try #require(try kept.open())
        #expect(partial.start == .startedOver(reason: "it has other links (it may be another file)"))
        try Array("new".utf8).withUnsafeBytes { bytes in
            try Result { () throws(WeirError) in try partial.descriptor.write(bytes, at: 0) }.get()
        }
        partial.descriptor.close()
        #expect(kept.contents("precious") == Array("keep me".utf8))
        #expect(kept.contents("out.part") == Array("new".utf8))
    }

    @Test("a symbolic link at the .part's name is replaced, never followed")
    func symbolicLink() throws {
        let kept = try Kept()
        kept.folder.write("precious", Array("keep me".utf8))
        unlink(kept.part)
        #expect(symlink("precious", kept.part) == 0)
        let partial = try #require(try kept.open())
        #expect(partial.start == .startedOver(reason: "it is not a regular file"))
        partial.descriptor.close()
        #expect(kept.contents("precious") == Array("keep me".utf8))
        var info = stat()
        #expect(lstat(kept.part, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG)
    }

    @Test("a copy of the .part (another inode) is not the file its record names")
    func copy() throws {
        let kept = try Kept()
        // Made while the .part still exists, so its inode number is another.
        kept.folder.write("copy", try #require(kept.contents("out.part")))
        #expect(rename(kept.folder.path("copy"), kept.part) == 0)
        let partial = try #require(try kept.open())
        partial.descriptor.close()
        #expect(partial.start == .startedOver(reason: "it is not the file its record names"))
    }

    @Test("a flipped bit in any kept frame starts over, naming the frame", arguments: [0, 1, 2], [true, false])
    func flippedBit(frame: Int, hashed: Bool) throws {
        let kept = try Kept(hashed: hashed)
        var bytes = try #require(kept.contents("out.part"))
        let start = kept.frames[..<frame].reduce(0) { $0 + $1.count }
        bytes[start + kept.frames[frame].count / 2] ^= 0x08
        let file = try #require(FileHandle(forWritingAtPath: kept.part))
        try file.write(contentsOf: bytes)
        try file.close()
        let partial = try #require(try kept.open())
        partial.descriptor.close()
        // Hashed, the frame is not the one written; decoded, not the input's.
        let reason = hashed ? "its frame \(frame) is not what its record says"
            : "its frame \(frame) does not decode to the input's bytes"
        #expect(partial.start == .startedOver(reason: reason))
    }

    @Test("another file's frames, with a record of them, do not decode to the input's bytes", arguments: [true, false])
    func otherFile(hashed: Bool) throws {
        let kept = try Kept(hashed: hashed)
        let other = try Kept(seed: 99)
        let file = try #require(FileHandle(forWritingAtPath: kept.part))
        try file.truncate(atOffset: 0)
        try file.write(contentsOf: Array(other.frames[..<3].joined()))
        try file.close()
        try kept.writeRecord(kept: 3, of: other.frames)
        let partial = try #require(try kept.open())
        partial.descriptor.close()
        #expect(partial.start == .startedOver(reason: "its frame 0 does not decode to the input's bytes"))
    }

    @Test("a record whose frame line was altered says so; the input linked at the .part's name is named")
    func causes() throws {
        let kept = try Kept()
        var text = String(decoding: try #require(kept.contents(".out.part.resume")), as: UTF8.self)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("frame ") })
        var fields = line.split(separator: " ")
        fields[3] = "12345"
        text = text.replacingOccurrences(of: line, with: fields.joined(separator: " "))
        kept.folder.write(".out.part.resume", Array(text.utf8))
        let altered = try #require(try kept.open())
        altered.descriptor.close()
        #expect(altered.start
                == .startedOver(reason: "its record was changed (a checkpoint does not match the lines before it)"))

        let linked = try Kept()
        Self.link(linked.part, to: linked.folder.path("in"))
        let partial = try #require(try linked.open())
        partial.descriptor.close()
        #expect(partial.start == .startedOver(reason: "it is a hard link to the input"))
        #expect(linked.contents("in") == linked.input)
    }

    @Test("a folder at the record's name: no resume, nothing touched; a symbolic link there is replaced")
    func recordName() throws {
        let kept = try Kept()
        unlink(kept.record)
        unlink(kept.part)
        #expect(mkdir(kept.record, 0o755) == 0)
        #expect(try kept.open() == nil)
        rmdir(kept.record)
        kept.folder.write("precious", Array("keep me".utf8))
        #expect(symlink("precious", kept.record) == 0)
        let partial = try #require(try kept.open())
        partial.descriptor.close()
        #expect(partial.start == .fresh)
        #expect(kept.contents("precious") == Array("keep me".utf8))
        #expect(kept.contents(".out.part.resume")?.starts(with: Array("weir-resume 3\n".utf8)) == true)
    }

    @Test("the input's identity changes when its bytes are edited and its modification time put back")
    func identityHasChangeTime() throws {
        let kept = try Kept()
        let before = try kept.identity()
        let path = kept.folder.path("in")
        let status = try #require(FileStatus.of(path: path))
        let file = try #require(FileHandle(forWritingAtPath: path))
        try file.write(contentsOf: Array("EDITED".utf8))
        try file.close()
        var times = [status.accessTime, status.modificationTime]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        #expect(FileStatus.of(path: path)?.modificationTime.tv_nsec == status.modificationTime.tv_nsec)
        #expect(try kept.identity() != before)
        let partial = try #require(try kept.open())
        partial.descriptor.close()
        #expect(partial.start == .startedOver(reason: "the input changed since it was written"))
    }

    @Test("hidden names stay within NAME_MAX whenever the output's name does, and name each other")
    func hiddenNames() {
        #expect(PartialOutput.hiddenPaths(for: "d/x.zst") == ("d/x.zst.part", "d/.x.zst.part.resume"))
        var seen = Set<String>()
        for length in [242, 243, 250, 255] {
            for last in ["a", "b"] {
                let name =
                    String(repeating: "é", count: (length - 1) / 2) + String(repeating: "n", count: (length - 1) % 2)
                    + last
                #expect(name.utf8.count == length)
                let (part, record) = PartialOutput.hiddenPaths(for: "/tmp/" + name)
                let partName = String(part.dropFirst(5)), recordName = String(record.dropFirst(5))
                #expect(partName.utf8.count <= 255 && recordName.utf8.count <= 255, "\(length)")
                #expect(recordName == "." + partName + ".resume")
                #expect(String(validating: Array(partName.utf8), as: UTF8.self) != nil)
                seen.insert(part)
            }
        }
        #expect(seen.count == 8)
    }

    @Test("an output named with 251 bytes gets its .part and record")
    func longName() throws {
        let folder = ScratchFolder()
        let name = String(repeating: "n", count: 251)
        folder.write(name, TestData.text(1000))
        let partial = try #require(try PartialOutput.open(for: folder.path(name), identity: "i", options: "o",
                                                          dictionary: nil))
        partial.descriptor.close()
        #expect(partial.start == .fresh)
        #expect(FileStatus.exists(partial.partPath) && FileStatus.exists(partial.recordPath))
    }
}
