import CZstd
import Foundation
import Testing
import WeirFormats
@testable import WeirTar
@testable import WeirTarTestSupport
@testable import WeirTestSupport

/// ``MemberIndex/read(path:)``: a file's member index found from its seek
/// table (the codec: MemberIndexTests).
@Suite("Member index reading")
struct MemberIndexReadingTests {
    @Test("found from the seek table: the entry just before it, of decompressed size 0, magic 0x184D2A5B")
    func findsIndexFromTable() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = [UInt8](repeating: 7, count: 10240)
        var zstdFrame = [UInt8](repeating: 0, count: ZSTD_compressBound(data.count))
        let written = ZSTD_compress(&zstdFrame, zstdFrame.count, data, data.count, 3)
        zstdFrame.removeSubrange(written...)
        let index = MemberIndex.sample()
        let indexFrame = try index.encoded(path: "a.tar.zst")
        // Another skippable frame (pzstd's magic) of the same size as an index's smallest.
        let other: [UInt8] = [0x50, 0x2A, 0x4D, 0x18, 8, 0, 0, 0] + [UInt8](repeating: 1, count: 8)
        func file(_ frames: [[UInt8]], sizes: [Int]) throws -> String {
            var table = SeekTable(hasChecksums: false)
            for (frame, size) in zip(frames, sizes) {
                try table.append(compressedSize: frame.count, decompressedSize: size, path: "t")
            }
            let url = folder.appendingPathComponent(UUID().uuidString)
            try Data(frames.joined() + table.encoded()).write(to: url)
            return url.path
        }
        let indexed = try file([zstdFrame, indexFrame], sizes: [10240, 0])
        let found = try #require(try MemberIndex.read(path: indexed))
        #expect(found.index == index)
        #expect(found.frame == zstdFrame.count ..< zstdFrame.count + indexFrame.count)
        #expect(try MemberIndex.read(path: try file([zstdFrame], sizes: [10240])) == nil)
        #expect(try MemberIndex.read(path: try file([zstdFrame, other], sizes: [10240, 0])) == nil)
        #expect(try MemberIndex.read(path: try file([indexFrame, zstdFrame], sizes: [0, 10240])) == nil)
        let plain = folder.appendingPathComponent("plain.zst")
        try Data(zstdFrame).write(to: plain)
        #expect(try MemberIndex.read(path: plain.path) == nil)
        // A damaged index is an error naming its offset, not "no index".
        var damaged = indexFrame
        damaged[damaged.count - 3] ^= 1
        let damagedFile = try file([zstdFrame, damaged], sizes: [10240, 0])
        do {
            _ = try MemberIndex.read(path: damagedFile)
            Issue.record("a damaged index was read")
        } catch {
            #expect(error.reason.hasPrefix("corrupt member index at offset \(zstdFrame.count): "))
        }
    }
}
