import Foundation
import Testing
@testable import Weir
@testable import WeirPipeline
@testable import WeirTestSupport

@Suite("File batches")
struct FileBatchTests {
    @Test(
        "jobs are made in order as the threads need them, reported in order; a job not made is reported with its error")
    func madeAsNeeded() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let count = 400
        let failing = 150
        var inputs: [String] = []
        for index in 0 ..< count {
            let path = folder.appendingPathComponent("f\(index)").path
            #expect(
                FileManager.default.createFile(
                    atPath: path, contents: Data(TestData.text(1000 + 37 * index, seed: UInt64(index)))))
            inputs.append(path)
        }
        var made: [Int] = []
        var reported: [Int] = []
        var mostAhead = 0
        FileBatch.run(count: count, width: 2, cancellation: Cancellation(), make: { index in
            made.append(index)
            // Jobs taken so far show as outputs, temporary or named.
            let started = (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?
                .filter { $0.hasSuffix(".zst") || $0.hasPrefix(".weir-") }.count ?? 0
            mostAhead = max(mostAhead, index - started)
            if index == failing { return .failure(.sameFile(path: inputs[index])) }
            return .success(FileJob(input: inputs[index], operation: .compress(CompressionOptions(threads: 2)),
                                    destination: .file(inputs[index] + ".zst")))
        }, report: { index, job, outcome in
            reported.append(index)
            switch outcome {
            case .success(let statistics):
                #expect(index != failing)
                #expect((try? job.get())?.input == inputs[index])
                #expect(statistics.bytesIn == 1000 + 37 * index)
            case .failure(let error):
                #expect(index == failing)
                #expect(error == .sameFile(path: inputs[index]))
            }
        })
        #expect(made == Array(0 ..< count))
        #expect(reported == Array(0 ..< count))
        // Not the whole list first: at most a window of jobs ahead of the
        // ones taken (made and waiting, being run).
        #expect(mostAhead <= FileBatch.madeAhead + 4, "made \(mostAhead) jobs ahead of the ones taken")
        for index in 0 ..< count {
            let output = FileManager.default.contents(atPath: inputs[index] + ".zst").map { [UInt8]($0) }
            if index == failing {
                #expect(output == nil)
            } else {
                #expect(
                    TestData.zstdDecode(try #require(output)) == TestData.text(1000 + 37 * index, seed: UInt64(index)))
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).count == 2 * count - 1)
    }
}
