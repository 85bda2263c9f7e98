import CZstd
import Foundation
import Testing
@testable import Weir
@testable import WeirFormats
@testable import WeirFormatsTestSupport
@testable import WeirPipeline
@testable import WeirSystem
@testable import WeirTestSupport

/// Compressing and decompressing with a dictionary through the engine's
/// API; libzstd itself is the independent judge of the frames.
@Suite("Dictionaries through the engine")
struct DictionaryCompressionTests {
    @Test("every frame, compressed on several workers, carries the dictionary's ID and decodes with it alone")
    func compressWithDictionary() async throws {
        let samples = TestDictionaries.Samples()
        let dictionary = try TestDictionaries.trained(samples)
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
        #expect(TestDictionaries.libzstdDecode(Array(compressed), dictionary: dictionary.bytes) == Array(input))
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
        #expect(TestDictionaries.libzstdDecode(Array(compressed), dictionary: content) == Array(input))
        let decoded = try await Decompressor(options: DecompressionOptions(dictionary: dictionary)).decompress(
            compressed)
        #expect(decoded == input)
    }
}
