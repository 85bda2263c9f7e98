import CZstd
import Foundation
import WeirFormats
import WeirTestSupport

/// Dictionaries for the tests of the layers that train, save or use one:
/// samples to train on, a dictionary trained from them, and libzstd's own
/// decoding with a dictionary, the independent judge of the frames.
enum TestDictionaries {
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

    /// A dictionary trained from `samples` (saved nowhere: `path` names it).
    static func trained(
        _ samples: Samples, _ training: DictionaryTraining = DictionaryTraining()
    ) throws -> ZstdDictionary {
        let loaded = try samples.loaded()
        return try DictionaryTrainer.train(loaded.samples, sizes: loaded.sizes, training, path: samples.path("d"))
            .dictionary
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
