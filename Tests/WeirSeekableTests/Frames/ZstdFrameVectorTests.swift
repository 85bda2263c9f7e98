import Foundation
import Testing
@testable import WeirFiles
@testable import WeirFormats
@testable import WeirPipeline
@testable import WeirPipelineTestSupport
@testable import WeirSeekable
@testable import WeirSystem

/// The shared vectors of single zstd frames (`testdata/vectors/zstd-frame`,
/// issue 81): frames whose blocks together hold every kind RFC 8878 has,
/// and damaged ones. Each is decoded by weir's own block decoder (CZstdSplit,
/// block after block through ``FrameCursor``, as the mount and one frame on
/// all the workers decode) and by the decompression pipeline at one and two
/// threads: the content the case gives, its size and XXH64, or a refusal.
/// scripts/harness/zstd-split-check decodes the same files with CZstdSplit and
/// libzstd side by side.
@Suite("Shared vectors: zstd frames")
struct ZstdFrameVectorTests {
    struct Vector: Decodable {
        var file: String
        var reading: String
        var features: [String]
        var content_size: Int?
        var content_xxh64: String?
    }

    /// Every case of the folder, by name.
    static func vectors() throws -> [(name: String, vector: Vector, path: String)] {
        try SharedVectorTests.cases("zstd-frame", as: Vector.self) { $0.file }
    }

    /// The frame of `path` decoded block after block by CZstdSplit: its
    /// content, or the error it stopped at.
    static func blockByBlock(_ path: String) throws -> Result<[UInt8], WeirError> {
        let file = try Descriptor.openForReading(path)
        defer { file.close() }
        let size = Int(try file.status().size)
        do throws(WeirError) {
            guard let cursor = try FrameCursor.start(file: file, at: 0, end: size, windowLimit: 1 << 27,
                                                     verifyChecksum: true) else {
                throw WeirError.corrupt(path: path, operation: .decompress, "CZstdSplit does not take the header")
            }
            var content: [UInt8] = []
            while let block = try cursor.next() { content.append(contentsOf: block) }
            return .success(content)
        } catch {
            return .failure(error)
        }
    }

    static func hex(_ content: [UInt8]) -> String {
        let hash = content.withUnsafeBytes { ContentHash.of($0) }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    @Test("every frame vector: its content by the block decoder and the pipeline at -T1 and -T2, or refused")
    func frames() throws {
        let vectors = try Self.vectors()
        #expect(vectors.count >= 15)
        // The folder holds every kind generate's REQUIRED names (a case removed
        // there would leave a kind untested here).
        let kinds = Set(vectors.flatMap(\.vector.features))
        for kind in ["block:raw", "block:rle", "literals:rle", "literals:huffman-1", "literals:huffman-4",
                     "literals:treeless", "sequences:none", "LL:rle", "OF:rle", "ML:rle", "LL:repeat",
                     "OF:repeat", "ML:repeat", "LL:predefined", "window:1024", "window:134217728"] {
            #expect(kinds.contains(kind), "no vector holds \(kind)")
        }
        for (name, vector, path) in vectors {
            let compressed = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let blocks = try Self.blockByBlock(path)
            let serial = TestDecompression.file(compressed, options: DecompressionOptions(threads: 1))
            let parallel = TestDecompression.file(compressed, options: DecompressionOptions(threads: 2))
            if vector.reading == "fails" {
                if case .success = blocks { Issue.record("\(name): the block decoder took it") }
                #expect((try? serial.result.get()) == nil, "\(name) at -T1")
                #expect((try? parallel.result.get()) == nil, "\(name) at -T2")
                continue
            }
            #expect(vector.reading == "ok", "\(name): reading \(vector.reading)")
            let content: [UInt8]
            switch blocks {
            case .success(let decoded): content = decoded
            case .failure(let error):
                Issue.record("\(name): the block decoder refused it: \(error)")
                continue
            }
            #expect(content.count == vector.content_size, "\(name)")
            #expect(Self.hex(content) == vector.content_xxh64, "\(name)")
            #expect((try? serial.result.get()) != nil && serial.output == content, "\(name) at -T1")
            #expect((try? parallel.result.get()) != nil && parallel.output == content,
                    "\(name) at -T2")
        }
    }
}
