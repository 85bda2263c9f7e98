import Foundation
import Testing
import Weir
import WeirFormats
@testable import WeirPrograms
import WeirSystem

/// How training gathers its samples from files: zstd's rules.
@Suite("Training samples")
struct TrainingSamplesTests {
    /// Files of the given sizes in a new folder (removed by the caller), named f0, f1…
    static func files(_ sizes: [Int]) -> (folder: URL, paths: [String]) {
        let folder = TestData.temporaryFolder()
        let paths = sizes.enumerated().map { index, size in
            let path = folder.appendingPathComponent("f\(index)").path
            _ = FileManager.default.createFile(atPath: path, contents: Data(TestData.text(size, seed: UInt64(index))))
            return path
        }
        return (folder, paths)
    }

    @Test("one sample per non-empty file, at most its first 128 KiB, with zstd's warnings")
    func gathering() throws {
        let (folder, paths) = Self.files([1000, 0, 2000, 300_000, 1500, 700, 0, 900])
        defer { try? FileManager.default.removeItem(at: folder) }
        let samples = try TrainingSamples.load(
            paths: paths, for: DictionaryTraining(maximumSize: 4096), dictionaryPath: "d")
        #expect(samples.sizes.sorted() == [700, 900, 1000, 1500, 2000, 131_072])
        #expect(samples.buffer.count == samples.sizes.reduce(0, +) + TrainingSamples.guardLength)
        #expect(samples.warnings.count == 1 && samples.warnings[0].hasPrefix("some samples are very large"))
        let small = try TrainingSamples.load(
            paths: paths, for: DictionaryTraining(maximumSize: 1 << 20), dictionaryPath: "d")
        #expect(small.warnings.contains { $0.hasPrefix("data size of samples too small for target dictionary size") })
        // Four non-empty files are too few.
        #expect {
            try TrainingSamples.load(paths: Array(paths.prefix(5)), for: DictionaryTraining(), dictionaryPath: "d")
        } throws: {
            let error = $0 as? WeirError
            return error?.description == "d: nb of samples too low: 4 samples, training needs at least 5"
                && error?.hint == .moreSamples
        }
    }

    @Test("cut into samples, each file's bytes come in order, from its start")
    func cutting() throws {
        let (folder, paths) = Self.files([5000, 3000])
        defer { try? FileManager.default.removeItem(at: folder) }
        let samples = try TrainingSamples.load(
            paths: paths, for: DictionaryTraining(maximumSize: 256, sampleSize: 1024),
            dictionaryPath: "d")
        #expect(samples.sizes.count == 5 + 3)
        let contents = paths.map { Array(FileManager.default.contents(atPath: $0)!) }
        // Whichever order the shuffle chose, the buffer is the two files one after the other, then the guard band.
        let loaded = Array(samples.buffer.dropLast(TrainingSamples.guardLength))
        #expect(loaded == contents[0] + contents[1] || loaded == contents[1] + contents[0])
        #expect(samples.warnings.isEmpty)
    }

    @Test("a memory limit loads fewer samples, and says so in zstd's words")
    func memoryLimit() throws {
        let (folder, paths) = Self.files([40_000])
        defer { try? FileManager.default.removeItem(at: folder) }
        let training = DictionaryTraining(maximumSize: 256, sampleSize: 2048, memoryLimit: 10_000)
        let samples = try TrainingSamples.load(paths: paths, for: training, dictionaryPath: "d")
        #expect(samples.sizes == [2048, 2048, 2048, 2048])
        #expect(samples.warnings == ["setting manual memory limit for dictionary training data at 0 MB",
                                     "Training samples set too large (0 MB); training on 0 MB only..."])
    }

    @Test("a file that cannot be read is named")
    func unreadable() {
        let (folder, paths) = Self.files([1000, 1000, 1000, 1000, 1000])
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("nope").path
        #expect {
            try TrainingSamples.load(paths: paths + [missing], for: DictionaryTraining(), dictionaryPath: "d")
        } throws: {
            ($0 as? WeirError)?.description == "\(missing): read sample failed: No such file or directory"
        }
    }

    @Test("what the machine can hold bounds the samples, as zstd's allocation probe does")
    func memoryBound() {
        let mebibyte = 1 << 20
        // Enough memory: the bound is above the samples (rounded up to 8 MiB).
        #expect(TrainingSamples.memoryBound(total: 12 * mebibyte, perByte: 1, memory: .max) == 16 * mebibyte)
        #expect(TrainingSamples.memoryBound(total: 100 * mebibyte, perByte: 11, memory: .max) >= 100 * mebibyte)
        // 1 GiB of memory for a builder needing 11 bytes per sample byte.
        let bound = TrainingSamples.memoryBound(total: 1 << 30, perByte: 11, memory: 1 << 30)
        #expect(bound * 11 <= 1 << 30 && bound * 11 > (1 << 30) - 24 * mebibyte)
        #expect(
            TrainingSamples.machineMemory(meminfo: "MemTotal:  1000 kB\nMemFree: 5 kB\nSwapTotal: 24 kB\n") == 1024
                << 10)
        #expect(TrainingSamples.machineMemory(meminfo: "nothing") == nil)
        #expect(TrainingSamples.machineMemory > 0)
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
