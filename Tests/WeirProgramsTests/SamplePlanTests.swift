import Testing
@testable import WeirPrograms
import Weir

/// Which bytes of which files become samples: zstd's dibio.c arithmetic.
@Suite("Sample plan")
struct SamplePlanTests {
    static let limit = TrainingSamples.maximumSampleSize

    @Test("one sample per non-empty file, at most its first 128 KiB; over 256 KiB, zstd warns")
    func onePerFile() {
        let plan = SamplePlan(fileSizes: [1000, 0, 200_000, 700], sampleSize: nil)
        #expect(plan.count == 3)
        #expect(plan.total == 1000 + Self.limit + 700)
        #expect(!plan.oneTooLarge, "larger than a sample, but not twice")
        #expect(plan.samples(capacity: .max) == [[1000], [], [Self.limit], [700]])
        #expect(SamplePlan(fileSizes: [2 * Self.limit + 1], sampleSize: nil).oneTooLarge)
    }

    @Test("-B cuts every file from its start, the last sample shorter; no file is too large")
    func cutting() {
        let plan = SamplePlan(fileSizes: [5000, 2048, 0, 1, 300_000], sampleSize: 2048)
        #expect(plan.count == 3 + 1 + 1 + 147)
        #expect(plan.total == 5000 + 2048 + 1 + 300_000, "whole files, not 128 KiB of each")
        #expect(!plan.oneTooLarge)
        let samples = plan.samples(capacity: .max)
        #expect(samples[0] == [2048, 2048, 904])
        #expect(samples[1] == [2048] && samples[2] == [] && samples[3] == [1])
        #expect(samples[4].count == 147 && samples[4].allSatisfy { $0 <= 2048 } && samples[4].reduce(0, +) == 300_000)
        #expect(samples[4].last == 300_000 - 146 * 2048)
    }

    @Test("a bound stops a file's samples where the next does not fit, and a file whose first does not fit stops all")
    func capacity() {
        let cut = SamplePlan(fileSizes: [5000, 500, 3000], sampleSize: 2048)
        // 2048 + 2048 fit in 4700, 904 more do not: the file ends there; the 500 file still fits; the 3000 file's
        // first 2048 do not, which ends the loading.
        #expect(cut.samples(capacity: 4700) == [[2048, 2048], [500], []])
        #expect(cut.samples(capacity: 5000) == [[2048, 2048, 904], [], []])
        #expect(cut.samples(capacity: 8000) == [[2048, 2048, 904], [500], [2048]])
        // Without cutting: the second file does not fit, and the third, which would, is not taken.
        let whole = SamplePlan(fileSizes: [3000, 5000, 100], sampleSize: nil)
        #expect(whole.samples(capacity: 6000) == [[3000], [], []])
        #expect(SamplePlan(fileSizes: [10, 10], sampleSize: 4).samples(capacity: 0) == [[], []])
    }
}
