import Foundation
import Glibc
import Testing
@testable import Weir
@testable import WeirPipeline
@testable import WeirSystem
@testable import WeirTestSupport

@Suite("Commit queue")
struct CommitQueueTests {
    /// `count` text files in a new folder, each compressed by a finished job
    /// (its output complete, not yet committed) that removes its input.
    private static func finishedJobs(
        _ count: Int, in folder: URL
    ) -> [(input: String, finished: Result<FinishedJob, WeirError>)] {
        (0 ..< count).map { index in
            let input = folder.appendingPathComponent("f\(index)").path
            _ = FileManager.default.createFile(
                atPath: input, contents: Data(TestData.text(5000 + index, seed: UInt64(index))))
            let job = FileJob(input: input, operation: .compress(CompressionOptions(threads: 1)),
                              destination: .file(input + ".zst"), removeInput: true)
            return (input, Result { () throws(WeirError) in try job.process(smallFiles: SmallFileCompressor()) })
        }
    }

    @Test("outputs take their names only at the commit, in order, and their inputs go after")
    func namesAtCommit() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queue = CommitQueue(sync: true)
        let jobs = Self.finishedJobs(3, in: folder)
        for (index, job) in jobs.enumerated() { queue.add(10 + index, job.finished) }
        for job in jobs {
            #expect(FileManager.default.fileExists(atPath: job.input))
            #expect(!FileManager.default.fileExists(atPath: job.input + ".zst"))
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".weir-") }.count
                == 3)
        let outcomes = queue.commitAll()
        #expect(outcomes.map(\.tag) == [10, 11, 12])
        for (index, job) in jobs.enumerated() {
            #expect((try? outcomes[index].outcome.get())?.bytesIn == 5000 + index)
            #expect(!FileManager.default.fileExists(atPath: job.input))
            let output = try #require(FileManager.default.contents(atPath: job.input + ".zst"))
            #expect(TestData.zstdDecode([UInt8](output)) == TestData.text(5000 + index, seed: UInt64(index)))
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["f0.zst", "f1.zst", "f2.zst"])
        #expect(queue.isEmpty)
    }

    @Test("a job whose name is taken meanwhile fails in its place and keeps its input; the others commit")
    func failureKeepsInput() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queue = CommitQueue(sync: true)
        let jobs = Self.finishedJobs(3, in: folder)
        for (index, job) in jobs.enumerated() { queue.add(index, job.finished) }
        queue.add(3, .failure(.sameFile(path: "x")))
        _ = FileManager.default.createFile(atPath: jobs[1].input + ".zst", contents: Data("theirs".utf8))
        let outcomes = queue.commitAll()
        #expect(outcomes.map(\.tag) == [0, 1, 2, 3])
        #expect(throws: WeirError.self) { try outcomes[1].outcome.get() }
        #expect((try? outcomes[1].outcome.get()) == nil)
        if case .failure(let error) = outcomes[1].outcome { #expect(error.kind == .outputExists) }
        if case .failure(let error) = outcomes[3].outcome { #expect(error == .sameFile(path: "x")) }
        #expect(FileManager.default.contents(atPath: jobs[1].input + ".zst") == Data("theirs".utf8))
        #expect(FileManager.default.fileExists(atPath: jobs[1].input))
        #expect(!FileManager.default.fileExists(atPath: jobs[0].input))
        #expect(!FileManager.default.fileExists(atPath: jobs[2].input))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [
                "f0.zst", "f1", "f1.zst", "f2.zst",
            ])
    }

    @Test("a group handed off commits on a thread of its own and wakes its owner; outcomes come back in order")
    func handOff() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let woken = DispatchSemaphore(value: 0)
        let queue = CommitQueue(sync: true) { woken.signal() }
        let jobs = Self.finishedJobs(4, in: folder)
        queue.add(0, jobs[0].finished)
        queue.add(1, jobs[1].finished)
        #expect(queue.handOff())
        queue.add(2, jobs[2].finished)
        #expect(woken.wait(timeout: .now() + 30) == .success)
        queue.waitForCommitting()
        var outcomes = queue.committed()
        #expect(!FileManager.default.fileExists(atPath: jobs[0].input))
        #expect(FileManager.default.fileExists(atPath: jobs[3].input))
        queue.add(3, jobs[3].finished)
        outcomes += queue.commitAll()
        #expect(outcomes.map(\.tag) == [0, 1, 2, 3])
        for (index, job) in jobs.enumerated() {
            #expect((try? outcomes[index].outcome.get())?.bytesIn == 5000 + index)
            #expect(!FileManager.default.fileExists(atPath: job.input))
            #expect(FileManager.default.fileExists(atPath: job.input + ".zst"))
        }
        #expect(queue.isEmpty)
    }

    @Test("discarding leaves the inputs and no output, temporary or not")
    func discard() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queue = CommitQueue(sync: false)
        for (index, job) in Self.finishedJobs(2, in: folder).enumerated() { queue.add(index, job.finished) }
        queue.discard()
        #expect(queue.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["f0", "f1"])
    }

    @Test("a group is due by its age; a job with no output file does not wait")
    func dueByAge() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queue = CommitQueue(sync: true)
        queue.add(0, .success(FinishedJob(statistics: Statistics(), output: nil, input: "-", removesInput: false)))
        #expect(!queue.isDue)
        #expect(queue.deadline == nil)
        queue.add(1, Self.finishedJobs(1, in: folder)[0].finished)
        #expect(!queue.isDue)
        let deadline = try #require(queue.deadline)
        while DispatchTime.now() < deadline { usleep(20_000) }
        #expect(queue.isDue)
        #expect(queue.commitAll().count == 2)
        #expect(queue.deadline == nil)
    }
}
