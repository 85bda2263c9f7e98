import Foundation
import Testing
@testable import Weir
@testable import WeirPipeline
@testable import WeirSystem
@testable import WeirTestSupport

@Suite("Job scheduler")
struct JobSchedulerTests {
    private static func compressing(_ input: String, to output: String) -> FileJob {
        FileJob(input: input, operation: .compress(CompressionOptions(threads: 2)), destination: .file(output))
    }

    @Test("side by side only for several files compressed into files of their own, on threads, not followed live")
    func choice() {
        let inputs = ["a", "b"]
        let own = { (index: Int) -> FileJob? in Self.compressing(inputs[index], to: inputs[index] + ".zst") }
        #expect(JobScheduler.goesSideBySide(inputs, width: 2, followedLive: false, plan: own))
        #expect(!JobScheduler.goesSideBySide(inputs, width: 1, followedLive: false, plan: own))
        #expect(!JobScheduler.goesSideBySide(inputs, width: 2, followedLive: true, plan: own))
        #expect(!JobScheduler.goesSideBySide(["a"], width: 2, followedLive: false, plan: own))
        // A job that cannot be made, an output that is another input or
        // another output, standard output, a decompression.
        #expect(!JobScheduler.goesSideBySide(inputs, width: 2, followedLive: false) { $0 == 1 ? nil : own($0) })
        #expect(!JobScheduler.goesSideBySide(inputs, width: 2, followedLive: false) {
            Self.compressing(inputs[$0], to: "b")
        })
        #expect(!JobScheduler.goesSideBySide(inputs, width: 2, followedLive: false) { _ in
            Self.compressing("a", to: "out.zst")
        })
        #expect(
            !JobScheduler.goesSideBySide(inputs, width: 2, followedLive: false) {
                FileJob(
                    input: inputs[$0], operation: .compress(CompressionOptions(threads: 2)),
                    destination: .standardOutput)
            })
        #expect(
            !JobScheduler.goesSideBySide(inputs, width: 2, followedLive: false) {
                FileJob(
                    input: inputs[$0], operation: .decompress(DecompressionOptions()),
                    destination: .file(inputs[$0] + ".out"))
            })
    }

    @Test("one by one: each job started and ended in turn, outcomes reported in order once committed")
    func oneByOne() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let inputs = (0 ..< 5).map { folder.appendingPathComponent("f\($0)").path }
        for (index, input) in inputs.enumerated() {
            #expect(FileManager.default.createFile(atPath: input, contents: Data(TestData.text(2000 + index, seed: 7))))
        }
        let recorder = Recorder(inputs: inputs)
        JobScheduler.run(inputs, width: 2, followedLive: true, cancellation: Cancellation(), sync: false,
                         delegate: recorder)
        let calls = recorder.calls
        #expect(calls.filter { !$0.hasPrefix("report") } == [
            "make 0", "start 0", "end", "make 1", "start 1", "end", "make 2",
            "make 3", "start 3", "end", "make 4", "start 4", "end",
        ])
        #expect(calls.filter { $0.hasPrefix("report") } == (0 ..< 5).map { "report \($0)" })
        for (index, input) in inputs.enumerated() where index != 2 {
            let output = try #require(FileManager.default.contents(atPath: input + ".zst"))
            #expect(TestData.zstdDecode([UInt8](output)) == TestData.text(2000 + index, seed: 7))
        }
    }

    /// A delegate that makes a compression of each input but the third
    /// (which fails to be made) and records every call.
    final class Recorder: JobSchedulerDelegate {
        let inputs: [String]
        var calls: [String] = []

        init(inputs: [String]) {
            self.inputs = inputs
        }

        func plannedJob(_ index: Int) -> FileJob? { nil }

        func makeJob(_ index: Int) -> Result<FileJob, WeirError> {
            calls.append("make \(index)")
            if index == 2 { return .failure(.sameFile(path: inputs[index])) }
            return .success(JobSchedulerTests.compressing(inputs[index], to: inputs[index] + ".zst"))
        }

        func jobStarted(_ index: Int, _ job: FileJob) -> ProgressObserver? {
            calls.append("start \(index)")
            return nil
        }

        func jobEnded(succeeded: Bool) {
            calls.append("end")
        }

        func report(_ index: Int, made: Result<FileJob, WeirError>, outcome: FileJob.Outcome) {
            calls.append("report \(index)")
            if index == 2 {
                #expect(throws: WeirError.self) { try outcome.get() }
            } else {
                #expect((try? made.get())?.input == inputs[index])
                #expect((try? outcome.get())?.bytesIn == 2000 + index)
            }
        }
    }
}
