import Foundation
import Testing
@testable import WeirFormats
@testable import WeirSeekable
@testable import WeirSystem
@testable import WeirTar

/// The shared test vectors (`testdata/vectors`, issue 69): every seek-table
/// case read as `weir -l` reads it (the chain of tables from the end, then
/// the listing that checks them against the frames), every member-index
/// case as `-l --members` and `--member` read it. The Python, Java and
/// script tests read the same folder: a case added there is tested here.
@Suite("Shared vectors")
struct SharedVectorTests {
    /// The folder of the vectors, from this file's place in the repository.
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("testdata/vectors")

    struct Frame: Decodable, Equatable {
        var offset: Int
        var compressed: Int
        var content: Int
        var checksum: UInt32?
    }

    struct Table: Decodable, Equatable {
        var offset: Int
        var checksums: Bool
        var frames: [Frame]
    }

    struct Member: Decodable, Equatable {
        var path: String
        var header_offset: Int
        var header_length: Int
        var data_length: Int
        var size: Int
        var type: String
        var link: String
        var mtime: Int64
        var mode: UInt32
        var uid: Int
        var gid: Int
        var uname: String
        var gname: String
    }

    /// One case: its file and the reading every implementation must give.
    struct Vector: Decodable {
        var file: String
        var reading: String
        var tables: [Table]?
        var entries: [Int]?
        var offset: Int?
        var end_offset: Int?
        var content_size: Int?
        var ended_early: Bool?
        var members: [Member]?
        var lies_about: String?

        enum CodingKeys: String, CodingKey {
            case file, reading, tables, entries, offset, end_offset, content_size, ended_early, members
            case lies_about = "lies-about"
        }
    }

    /// Every case of `format`'s folder, by name.
    static func vectors(_ format: String) throws -> [(name: String, vector: Vector, path: String)] {
        try cases(format, as: Vector.self) { $0.file }
    }

    /// Every case of `format`'s folder, by name, each JSON read as `V`;
    /// `file` gives the name of the case's file from it.
    static func cases<V: Decodable>(_ format: String, as type: V.Type, file: (V) -> String) throws
        -> [(name: String, vector: V, path: String)] {
        let folder = Self.folder.appendingPathComponent(format)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".json") }.sorted()
        return try names.map { name in
            let vector = try JSONDecoder().decode(type, from: Data(contentsOf: folder.appendingPathComponent(name)))
            return (String(name.dropLast(5)), vector, folder.appendingPathComponent(file(vector)).path)
        }
    }

    /// The chain of tables at the end of `path` as the vectors write it, or
    /// the reading's word when there is none ("no-table") or it is refused.
    static func tables(at path: String) throws -> (reading: String, tables: [Table]) {
        let file = try Descriptor.openForReading(path)
        defer { file.close() }
        let last: SeekTable?
        do throws(WeirError) {
            last = try SeekTable.atEnd(of: file, fileSize: try file.status().size)
        } catch {
            return (error.kind == .corrupt ? "corrupt-table" : "\(error)", [])
        }
        guard let last else { return ("no-table", []) }
        let tables = FrameListing.seekTableChain(endingWith: last, in: file).map { table in
            var offset = table.dataStart
            let frames = table.entries.map { entry in
                defer { offset += Int(entry.compressedSize) }
                return Frame(offset: offset, compressed: Int(entry.compressedSize),
                             content: Int(entry.decompressedSize), checksum: table.hasChecksums ? entry.checksum : nil)
            }
            return Table(offset: table.tableOffset, checksums: table.hasChecksums, frames: frames)
        }
        return ("ok", tables)
    }

    /// A table of no entries does not say whether it would carry checksums.
    static func comparable(_ tables: [Table]) -> [Table] {
        tables.map { $0.frames.isEmpty ? Table(offset: $0.offset, checksums: false, frames: []) : $0 }
    }

    @Test("every seek-table vector: the tables read, refused or absent, and checked against the frames")
    func seekTables() throws {
        let vectors = try Self.vectors("seek-table")
        #expect(vectors.count >= 20)
        for (name, vector, path) in vectors {
            let (reading, tables) = try Self.tables(at: path)
            if vector.reading == "no-table" || vector.reading == "corrupt-table" {
                #expect(reading == vector.reading, "\(name)")
                continue
            }
            #expect(reading == "ok", "\(name)")
            #expect(Self.comparable(tables) == Self.comparable(vector.tables ?? []), "\(name)")
            let entries = vector.entries ?? []
            do throws(WeirError) {
                let listing = try FrameListing.read(path: path)
                switch vector.reading {
                case "ok":
                    #expect(listing.fromSeekTable && listing.tableMismatch == nil, "\(name)")
                    let listed = tables.flatMap(\.frames)
                    let first = listed.first?.offset ?? 0
                    // The frames the tables list: not those before them, nor the tables' own.
                    let tableOffsets = Set(tables.map(\.offset))
                    let found = listing.frames.filter { $0.offset >= first && !tableOffsets.contains($0.offset) }
                    #expect(found.map { Frame(offset: $0.offset, compressed: $0.compressedSize,
                                              content: $0.decompressedSize ?? -1, checksum: nil) }
                                == listed.map { Frame(offset: $0.offset, compressed: $0.compressed,
                                                      content: $0.content, checksum: nil) }, "\(name)")
                case "frames-mismatch":
                    let mismatch = listing.tableMismatch ?? "none"
                    #expect(!listing.fromSeekTable && entries.contains { mismatch.contains("entry \($0) lists") },
                            "\(name): \(mismatch)")
                default:
                    Issue.record("\(name): listed, but the vector says \(vector.reading)")
                }
            } catch {
                #expect(vector.reading == "impossible-entry" && error.kind == .corrupt
                            && entries.contains { error.reason.contains("entry \($0) lists") }, "\(name): \(error)")
            }
        }
    }

    @Test("every member-index vector: the members listed, the index absent or refused, a lie found when read")
    func memberIndexes() throws {
        let vectors = try Self.vectors("member-index")
        #expect(vectors.count >= 13)
        for (name, vector, path) in vectors {
            let found: (index: MemberIndex, frame: Range<Int>)?
            do throws(WeirError) {
                found = try MemberIndex.read(path: path)
            } catch {
                #expect(vector.reading == "corrupt-index" && error.kind == .corrupt
                            && error.reason.contains("offset \(vector.offset ?? -1)"), "\(name): \(error)")
                continue
            }
            guard let (index, frame) = found else {
                #expect(vector.reading == "no-index", "\(name)")
                continue
            }
            #expect(vector.reading == "ok", "\(name)")
            #expect(frame.lowerBound == vector.offset && index.endOffset == vector.end_offset
                        && index.contentSize == vector.content_size && index.endedEarly == vector.ended_early,
                    "\(name)")
            let members = index.members.map { member in
                Member(path: String(decoding: member.path, as: UTF8.self), header_offset: member.headerOffset,
                       header_length: member.headerLength, data_length: member.dataLength, size: member.size,
                       type: String(decoding: [member.type], as: UTF8.self),
                       link: String(decoding: member.link, as: UTF8.self), mtime: member.mtime, mode: member.mode,
                       uid: member.uid, gid: member.gid, uname: String(decoding: member.uname, as: UTF8.self),
                       gname: String(decoding: member.gname, as: UTF8.self))
            }
            #expect(members == vector.members ?? [], "\(name)")
            guard let lie = vector.lies_about else { continue }
            let archive = try TarArchive(path: path)
            guard let member = archive.members.first(where: { $0.name == lie }) else {
                Issue.record("\(name): no member \(lie)")
                continue
            }
            var handed = 0
            do throws(WeirError) {
                try archive.read(member) { handed += $0.count }
                Issue.record("\(name): \(lie) read")
            } catch {
                #expect(error.kind == .corrupt && handed == 0
                            && error.description.contains("member index disagrees with the archive"),
                        "\(name): \(error)")
            }
        }
    }
}
