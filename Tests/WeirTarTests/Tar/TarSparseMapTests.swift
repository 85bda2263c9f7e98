import Foundation
import Testing
import WeirTar
@testable import WeirTestSupport

/// The map of a sparse member, on archives GNU tar made of one sparse file
/// in each of its sparse formats: the file put back together from the map
/// and the stored data is the file, whatever the range asked.
@Suite("Tar sparse map")
struct TarSparseMapTests {
    struct Collector: TarMemberSink {
        var members: [MemberIndex.Member] = []
        mutating func append(_ member: MemberIndex.Record) { members.append(member.member()) }
    }

    /// The sparse file and GNU tar's archives of it (TestData.sparseArchives,
    /// which the engine's TarArchive tests share).
    static func archives() throws -> (file: [UInt8], tars: [(String, [UInt8])]) {
        try TestData.sparseArchives()
    }

    /// The bytes `range` of the file, from `tar` by `map` (stored data at `data`).
    static func bytes(_ range: Range<Int>, of map: TarSparseMap, tar: [UInt8], data: Int) -> [UInt8] {
        var out: [UInt8] = []
        var at = range.lowerBound
        for piece in map.pieces(of: range) {
            #expect(piece.offset == at)
            at += piece.count
            if let stored = piece.stored {
                out += tar[data + stored ..< data + stored + piece.count]
            } else {
                out += [UInt8](repeating: 0, count: piece.count)
            }
        }
        return out
    }

    @Test("gnu, pax 0.0, 0.1 and 1.0: the size, and every range read through the map as the file holds it")
    func formats() throws {
        let (file, tars) = try Self.archives()
        for (format, tar) in tars {
            var walk = TarWalk(sink: Collector())
            tar.withUnsafeBytes { walk.consume($0, at: 0) }
            walk.finish(contentSize: tar.count)
            let member = try #require(walk.sink.members.first, "\(format)")
            #expect(member.size == file.count, "\(format)")
            var found = tar[member.headerOffset ..< member.dataOffset].withUnsafeBytes {
                TarSparseMap.parse(header: $0)
            }
            var data = member.dataOffset
            if case let .mapInData(size) = found {
                #expect(format == "pax 1.0")
                #expect(tar[data ..< data + 10].withUnsafeBytes { TarSparseMap.inData($0, size: size) } == .needsMore)
                guard case let .map(map, length) = tar[data ..< member.end].withUnsafeBytes({
                    TarSparseMap.inData($0, size: size)
                }) else {
                    Issue.record("\(format): no map in its data")
                    continue
                }
                #expect(length % 512 == 0 && length > 0)
                found = .map(map)
                data += length
            }
            guard case let .map(map) = found else {
                Issue.record("\(format): \(found)")
                continue
            }
            #expect(map.size == file.count && map.segments.count >= 30, "\(format)")
            #expect(map.storedLength <= member.end - data, "\(format)")
            #expect(Self.bytes(0 ..< file.count, of: map, tar: tar, data: data) == file, "\(format)")
            var generator = SystemRandomNumberGenerator()
            for _ in 0 ..< 200 {
                let start = Int.random(in: 0 ..< file.count, using: &generator)
                let end = min(file.count, start + Int.random(in: 1 ... 300_000, using: &generator))
                #expect(Self.bytes(start ..< end, of: map, tar: tar, data: data) == Array(file[start ..< end]),
                        "\(format) \(start)..<\(end)")
            }
            // Past the end: nothing.
            #expect(map.pieces(of: file.count ..< file.count + 10).isEmpty)
        }
    }

    @Test("a plain member is not sparse; segments out of order or past the size are refused")
    func refusals() throws {
        let plain = try TarHeaderCheckTests.archive(format: "pax", name: "plain.txt")
        #expect(plain.prefix(512).withUnsafeBytes { TarSparseMap.parse(header: $0) } == .notSparse)
        #expect(TarSparseMap(size: 100, segments: [.init(offset: 50, length: 10), .init(offset: 40, length: 5)])
            == nil)
        #expect(TarSparseMap(size: 100, segments: [.init(offset: 95, length: 10)]) == nil)
        #expect(TarSparseMap(size: 100, segments: [.init(offset: 0, length: 10), .init(offset: 100, length: 0)])
            != nil)
        let map = Array("2\n0\n10\n5\n3\n".utf8)
        let parsed = map.withUnsafeBytes { TarSparseMap.inData($0, size: 100) }
        #expect(parsed == .damaged("its map's segments are out of order or past its size 100"))
        #expect(Array("1\nx\n".utf8).withUnsafeBytes { TarSparseMap.inData($0, size: 100) }
            == .damaged("its map (at the data's start) is not decimal lines"))
    }

    @Test("""
          a reader's map: from the header blocks, or from the data's start read a block and then four times more \
          at a time; a map past the data, of another size, or whose segments the data cannot hold is refused
          """)
    func reading() throws {
        // 100 segments of 1 byte every 10: a map of 593 bytes, two blocks, past the first read.
        let segments = (0 ..< 100).map { TarSparseMap.Segment(offset: $0 * 10, length: 1) }
        let lines = "100\n" + segments.map { "\($0.offset)\n\($0.length)\n" }.joined()
        let mapLength = (lines.utf8.count + 511) / 512 * 512
        let data = Array(lines.utf8) + [UInt8](repeating: 0, count: mapLength - lines.utf8.count + 100)
        var asked: [Int] = []
        let read = TarSparseMap.read(.mapInData(size: 1000), size: 1000, dataLength: data.count) { count in
            asked.append(count)
            return Array(data.prefix(count))
        }
        #expect(lines.utf8.count == 593 && asked == [512, data.count])
        let found = try #require(try read.get())
        #expect(found.map.segments == segments && found.mapLength == mapLength)
        func problem(_ found: TarSparseMap.Found, size: Int, dataLength: Int) -> TarSparseMap.Problem? {
            let read = TarSparseMap.read(found, size: size, dataLength: dataLength) { Array(data.prefix($0)) }
            guard case let .failure(problem) = read else { return nil }
            return problem
        }
        #expect(problem(.mapInData(size: 1000), size: 1000, dataLength: 590) == .dataMapPastData)
        #expect(problem(.mapInData(size: 990), size: 990, dataLength: data.count)
            == .dataMapDamaged("its map's segments are out of order or past its size 990"))
        #expect(problem(.mapInData(size: 1000), size: 2000, dataLength: data.count) == .sizeDiffers(map: 1000))
        #expect(problem(.mapInData(size: 1000), size: 1000, dataLength: mapLength + 99)
            == .segmentsPastData(stored: 100, mapLength: mapLength))
        #expect(problem(.damaged("why"), size: 1000, dataLength: 0) == .damaged("why"))
        let whole = try #require(TarSparseMap(size: 10, segments: [.init(offset: 2, length: 3)]))
        #expect(problem(.map(whole), size: 10, dataLength: 512) == nil)
        #expect(try TarSparseMap.read(.notSparse, size: 10, dataLength: 10) { _ in [] }.get() == nil)
    }
}
