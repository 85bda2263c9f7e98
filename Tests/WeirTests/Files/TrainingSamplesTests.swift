import Foundation
import Testing
@testable import Weir

/// How `--train` gathers its samples: zstd's rules.
@Suite("Training samples")
struct TrainingSamplesTests {
    @Test("one sample per non-empty file, at most its first 128 KiB, with zstd's warnings")
    func gathering() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var paths: [String] = []
        for (index, size) in [1000, 0, 2000, 300_000, 1500, 700, 0, 900].enumerated() {
            let path = folder.appendingPathComponent("f\(index)").path
            _ = FileManager.default.createFile(atPath: path, contents: Data(TestData.text(size, seed: UInt64(index))))
            paths.append(path)
        }
        let samples = try TrainingSamples.load(paths: paths, dictionarySize: 4096, dictionaryPath: "d")
        #expect(samples.sizes.sorted() == [700, 900, 1000, 1500, 2000, 131_072])
        #expect(samples.buffer.count == samples.sizes.reduce(0, +))
        #expect(samples.warnings.count == 1 && samples.warnings[0].hasPrefix("some samples are very large"))
        let small = try TrainingSamples.load(paths: paths, dictionarySize: 1 << 20, dictionaryPath: "d")
        #expect(small.warnings.contains { $0.hasPrefix("data size of samples too small for target dictionary size") })
        // Four non-empty files are too few.
        #expect { try TrainingSamples.load(paths: Array(paths.prefix(5)), dictionarySize: 4096, dictionaryPath: "d") } throws: {
            ($0 as? WeirError)?.description == "d: nb of samples too low: 4 non-empty files, training needs at least 5 (one file per sample)"
        }
    }

    @Test("files are taken in zstd's order, a permutation that does not depend on their names")
    func order() {
        let names = (0..<10).map { "n\($0)" }
        let shuffled = TrainingSamples.shuffled(names)
        #expect(shuffled.sorted() == names.sorted())
        #expect(shuffled != names)
        #expect(TrainingSamples.shuffled(names.map { $0 + "x" }) == shuffled.map { $0 + "x" })
        #expect(TrainingSamples.shuffled([]) == [] && TrainingSamples.shuffled(["a"]) == ["a"])
    }
}
