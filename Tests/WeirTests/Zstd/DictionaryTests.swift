import CZstd
import Foundation
import Testing
@testable import Weir
@testable import WeirFormats
@testable import WeirSystem
@testable import WeirTestSupport

/// Training, loading and using a dictionary through the engine; libzstd
/// itself is the independent judge of the frames.
@Suite("Dictionaries")
struct DictionaryTests {
    /// A scratch folder of 20 small, alike samples, removed at the end.
    final class Samples: Sendable {
        let url = TestData.temporaryFolder()
        deinit { try? FileManager.default.removeItem(at: url) }
        func path(_ name: String) -> String { url.appendingPathComponent(name).path }

        /// The samples of ``files(_:)``, one after the other and followed by
        /// the trainer's guard bytes, and their sizes.
        func loaded(_ count: Int = 20) throws -> (samples: [UInt8], sizes: [Int]) {
            let contents = try files(count).map { [UInt8](try Data(contentsOf: URL(fileURLWithPath: $0))) }
            return (contents.flatMap { $0 } + [UInt8](repeating: 0, count: DictionaryTrainer.guardLength),
                    contents.map(\.count))
        }

        /// The sample files, written on first use.
        func files(_ count: Int = 20) -> [String] {
            (0..<count).map { index in
                let text = "record \(index): name=user\(index) mail=user\(index)@example.com role=reader,writer "
                    + String(decoding: TestData.text(600, seed: UInt64(index)), as: UTF8.self)
                let name = path("sample\(index)")
                _ = FileManager.default.createFile(atPath: name, contents: Data(text.utf8))
                return name
            }
        }
    }

    static func trained(
        _ samples: Samples, _ training: DictionaryTraining = DictionaryTraining()
    ) throws -> ZstdDictionary {
        let loaded = try samples.loaded()
        return try DictionaryTrainer.train(loaded.samples, sizes: loaded.sizes, training, path: samples.path("d"))
            .dictionary
    }

    @Test("a trained dictionary has zstd's magic number and an ID, within --maxdict; saved and loaded, it is the same")
    func trainSaveLoad() throws {
        let samples = Samples()
        let dictionary = try Self.trained(samples, DictionaryTraining(maximumSize: 4096))
        #expect(dictionary.bytes.count <= 4096 && dictionary.bytes.count > 256)
        #expect(Array(dictionary.bytes.prefix(4)) == [0x37, 0xA4, 0x30, 0xEC])
        #expect(dictionary.id != 0)
        try dictionary.save(to: samples.path("saved"))
        let loaded = try ZstdDictionary.load(path: samples.path("saved"))
        #expect(loaded.bytes == dictionary.bytes && loaded.id == dictionary.id)
        // Any other file is a raw-content dictionary, without an ID.
        #expect(ZstdDictionary(bytes: Array("just some text".utf8), path: "raw").id == 0)
    }

    @Test("every builder makes a dictionary with the ID asked for, within the size, that libzstd decodes with",
          arguments: [DictionaryBuilder.zstdDefault, .cover(.init(k: 200, d: 8)), .cover(.init(steps: 2)),
                      .fastCover(.init(k: 200, d: 8, f: 16, accel: 2)), .fastCover(.init(steps: 2, shrink: 1)),
                      .legacy(selectivity: 0), .legacy(selectivity: 5)])
    func builders(builder: DictionaryBuilder) throws {
        let samples = Samples()
        let training = DictionaryTraining(builder: builder, maximumSize: 4096, dictionaryID: 4242)
        let loaded = try samples.loaded()
        let (dictionary, used) = try DictionaryTrainer.train(loaded.samples, sizes: loaded.sizes, training, path: "d")
        #expect(dictionary.id == 4242)
        #expect(dictionary.bytes.count <= 4096 && Array(dictionary.bytes.prefix(4)) == [0x37, 0xA4, 0x30, 0xEC])
        // A search fills in what it chose; given parameters come back as given.
        switch used {
        case .cover(let chosen), .fastCover(let chosen):
            #expect(!chosen.optimizes)
            if !builder.optimizes { #expect(used == builder) }
        case .legacy: #expect(used == builder)
        }
        let input = Array(TestData.text(3000, seed: 3))
        var compressed = [UInt8](repeating: 0, count: ZSTD_compressBound(input.count))
        let size = compressed.withUnsafeMutableBytes { out in
            input.withUnsafeBytes { source in
                dictionary.bytes.withUnsafeBytes { dictionary in
                    let cctx = ZSTD_createCCtx()
                    defer { ZSTD_freeCCtx(cctx) }
                    return ZSTD_compress_usingDict(cctx, out.baseAddress, out.count, source.baseAddress, source.count,
                                                   dictionary.baseAddress, dictionary.count, 3)
                }
            }
        }
        #expect(ZSTD_isError(size) == 0)
        #expect(Self.libzstdDecode(Array(compressed.prefix(size)), dictionary: dictionary.bytes) == input)
    }

    @Test("libzstd's refusals come back as errors naming the dictionary: parameters out of bounds, too little data")
    func refusals() throws {
        let samples = Samples()
        let badAccel = DictionaryTraining(builder: .fastCover(.init(k: 56, d: 8, accel: 15)))
        let loaded = try samples.loaded()
        #expect {
            try DictionaryTrainer.train(loaded.samples, sizes: loaded.sizes, badAccel, path: "out.dict")
        } throws: {
            ($0 as? WeirError)?.description == "out.dict: dictionary training failed: Parameter is out of bound"
        }
        let tooSmall = DictionaryTraining(maximumSize: 10)
        #expect { try DictionaryTrainer.train(loaded.samples, sizes: loaded.sizes, tooSmall, path: "d") } throws: {
            ($0 as? WeirError)?.kind == .library
        }
    }

    @Test("loading refuses a missing file, a directory and a file over 32 MiB, naming it")
    func loadErrors() throws {
        let samples = Samples()
        #expect { try ZstdDictionary.load(path: samples.path("missing")) } throws: {
            ($0 as? WeirError)?.description
                == "\(samples.path("missing")): read dictionary failed: No such file or directory"
        }
        #expect { try ZstdDictionary.load(path: samples.url.path) } throws: {
            ($0 as? WeirError)?.kind == .notRegularFile
        }
        let big = samples.path("big")
        _ = FileManager.default.createFile(atPath: big, contents: nil)
        #expect(truncate(big, off_t(ZstdDictionary.maximumSize + 1)) == 0)  // sparse: no 32 MiB written
        #expect { try ZstdDictionary.load(path: big) } throws: {
            ($0 as? WeirError)?.reason == "dictionary file is too large (> 33554432 bytes)"
        }
    }

    @Test("every frame, compressed on several workers, carries the dictionary's ID and decodes with it alone")
    func compressWithDictionary() async throws {
        let samples = Samples()
        let dictionary = try Self.trained(samples)
        let input = Data(TestData.text(200_000, seed: 99))
        let options = CompressionOptions(
            level: 3, threads: 2, chunkSize: 16 << 10, seekTable: false, dictionary: dictionary)
        let compressed = try await Compressor(options: options).compress(input)
        let frames = TestData.frames(Array(compressed))
        #expect(frames.count == 13)
        var offset = 0
        for frame in frames {
            let id = compressed.withUnsafeBytes { ZSTD_getDictID_fromFrame($0.baseAddress! + offset, frame.size) }
            #expect(id == dictionary.id)
            offset += frame.size
        }
        // libzstd with the dictionary's bytes decodes it …
        #expect(Self.libzstdDecode(Array(compressed), dictionary: dictionary.bytes) == Array(input))
        // … and so does the engine, on every path; without it, it says why.
        let decoded = try await Decompressor(options: DecompressionOptions(threads: 2, dictionary: dictionary))
            .decompress(compressed)
        #expect(decoded == input)
        await #expect { try await Decompressor().decompress(compressed) } throws: {
            let error = $0 as? WeirError
            return error?.reason.hasPrefix("Dictionary mismatch: the data was compressed with a dictionary") == true
                && error?.hint == .dictionary
        }
        let other = ZstdDictionary(bytes: Array(TestData.text(5000, seed: 5)), path: "other")
        await #expect {
            try await Decompressor(options: DecompressionOptions(dictionary: other)).decompress(compressed)
        } throws: {
            ($0 as? WeirError)?.kind == .corrupt
        }
    }

    @Test("a raw-content dictionary works too: frames without an ID")
    func rawDictionary() async throws {
        // Incompressible on its own: only the dictionary can shrink it.
        let content = TestData.random(20_000, seed: 7)
        let dictionary = ZstdDictionary(bytes: content, path: "raw")
        let input = Data(content[1000..<6000] + TestData.random(3000, seed: 8))
        let compressed = try await Compressor(
            options: CompressionOptions(threads: 1, seekTable: false, dictionary: dictionary)
        )
            .compress(input)
        let plain = try await Compressor(options: CompressionOptions(threads: 1, seekTable: false)).compress(input)
        #expect(plain.count > 8000)
        #expect(compressed.count < 3500, "its first 5000 bytes are found in the dictionary")
        #expect(Self.libzstdDecode(Array(compressed), dictionary: content) == Array(input))
        let decoded = try await Decompressor(options: DecompressionOptions(dictionary: dictionary)).decompress(
            compressed)
        #expect(decoded == input)
    }

    /// Decodes with libzstd's one-shot API and a dictionary loaded from bytes.
    static func libzstdDecode(_ compressed: [UInt8], dictionary: [UInt8]) -> [UInt8]? {
        guard let dctx = ZSTD_createDCtx() else { return nil }
        defer { ZSTD_freeDCtx(dctx) }
        _ = dictionary.withUnsafeBytes { ZSTD_DCtx_loadDictionary(dctx, $0.baseAddress, $0.count) }
        var output = [UInt8](repeating: 0, count: 1 << 20)
        let size = compressed.withUnsafeBytes { source in
            output.withUnsafeMutableBytes {
                ZSTD_decompressDCtx(dctx, $0.baseAddress, $0.count, source.baseAddress, source.count)
            }
        }
        guard ZSTD_isError(size) == 0 else { return nil }
        return Array(output.prefix(size))
    }
}
