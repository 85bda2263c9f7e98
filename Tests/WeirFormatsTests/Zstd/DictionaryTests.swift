import CZstd
import Foundation
import Glibc
import Testing
@testable import WeirFormats
@testable import WeirFormatsTestSupport
@testable import WeirSystem
@testable import WeirTestSupport

/// Training and loading a dictionary; libzstd itself is the independent
/// judge of the frames made with it.
@Suite("Dictionaries")
struct DictionaryTests {
    @Test("a trained dictionary has zstd's magic number and an ID, within --maxdict; loaded, it is the same")
    func trainLoad() throws {
        let samples = TestDictionaries.Samples()
        let dictionary = try TestDictionaries.trained(samples, DictionaryTraining(maximumSize: 4096))
        #expect(dictionary.bytes.count <= 4096 && dictionary.bytes.count > 256)
        #expect(Array(dictionary.bytes.prefix(4)) == [0x37, 0xA4, 0x30, 0xEC])
        #expect(dictionary.id != 0)
        _ = FileManager.default.createFile(atPath: samples.path("written"), contents: Data(dictionary.bytes))
        let loaded = try ZstdDictionary.load(path: samples.path("written"))
        #expect(loaded.bytes == dictionary.bytes && loaded.id == dictionary.id)
        // Any other file is a raw-content dictionary, without an ID.
        #expect(ZstdDictionary(bytes: Array("just some text".utf8), path: "raw").id == 0)
    }

    @Test("every builder makes a dictionary with the ID asked for, within the size, that libzstd decodes with",
          arguments: [DictionaryBuilder.zstdDefault, .cover(.init(k: 200, d: 8)), .cover(.init(steps: 2)),
                      .fastCover(.init(k: 200, d: 8, f: 16, accel: 2)), .fastCover(.init(steps: 2, shrink: 1)),
                      .legacy(selectivity: 0), .legacy(selectivity: 5)])
    func builders(builder: DictionaryBuilder) throws {
        let samples = TestDictionaries.Samples()
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
        #expect(TestDictionaries.libzstdDecode(Array(compressed.prefix(size)), dictionary: dictionary.bytes) == input)
    }

    @Test("libzstd's refusals come back as errors naming the dictionary: parameters out of bounds, too little data")
    func refusals() throws {
        let samples = TestDictionaries.Samples()
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
        let samples = TestDictionaries.Samples()
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
}
