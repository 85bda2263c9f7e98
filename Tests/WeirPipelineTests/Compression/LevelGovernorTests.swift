import Testing
@testable import WeirPipeline
@testable import WeirSystem

/// The choice of each chunk's level under --adapt, on a clock the test moves.
@Suite("Level governor (--adapt)")
struct LevelGovernorTests {
    /// A governor on a hand-moved clock, and the changes it reported.
    final class Harness: Sendable {
        let now = Locked<UInt64>(1_000_000_000)
        let changes = Locked<[LevelChange]>([])
        let governor: LevelGovernor

        init(level: Int, range: ClosedRange<Int>, workers: Int = 2) {
            let now = self.now, changes = self.changes
            governor = LevelGovernor(level: level, range: range, workers: workers, clock: { now.current },
                                     onChange: { change in changes.withLock { $0.append(change) } })
        }

        func wait(milliseconds: UInt64) { now.withLock { $0 += milliseconds * 1_000_000 } }

        /// The first chunk is compressed at once: choices may begin.
        func begin() -> LevelGovernor {
            governor.workerStarted()
            governor.workerFinished(chunk: 0)
            return governor
        }
    }

    @Test(
        """
        workers always busy and the writer never: two levels lower per choice, skipping 0, never below min; 150 ms \
        measures
        """
    )
    func cpuBound() {
        let harness = Harness(level: 5, range: -2...19)
        let governor = harness.begin()
        governor.workerStarted()
        governor.workerStarted()
        var levels: [Int] = []
        for chunk in 0..<8 {
            harness.wait(milliseconds: 150)
            levels.append(governor.level(forChunk: chunk, offset: chunk << 20))
            // The chunk at the new level is compressed (a worker ends it, another takes the next).
            governor.workerFinished(chunk: chunk)
            governor.workerStarted()
        }
        #expect(levels == [3, 1, -1, -2, -2, -2, -2, -2], "\(levels)")
        #expect(harness.changes.current.map(\.to) == [3, 1, -1, -2])
        #expect(harness.changes.current.first == LevelChange(from: 5, to: 3, inputOffset: 0, seconds: 0.15))
        #expect(governor.levelsUsed == -2...5)
    }

    @Test("workers busy and the writer busy a fifth of the time: one level lower per choice")
    func cpuBoundWriterBusy() {
        let harness = Harness(level: 3, range: -5...19)
        let governor = harness.begin()
        governor.workerStarted()
        governor.workerStarted()
        var levels: [Int] = []
        for chunk in 0..<3 {
            governor.writerBusy(true)
            harness.wait(milliseconds: 40)
            governor.writerBusy(false)
            harness.wait(milliseconds: 160)
            levels.append(governor.level(forChunk: chunk, offset: 0))
            governor.workerFinished(chunk: chunk)
            governor.workerStarted()
        }
        #expect(levels == [2, 1, -1], "\(levels)")
    }

    @Test("workers idle while the writer drains: one level higher per two measures, never above max")
    func outputBound() {
        let harness = Harness(level: 3, range: 1...5)
        let governor = harness.begin()
        governor.writerBusy(true)
        var levels: [Int] = []
        for chunk in 0..<6 {
            governor.workerStarted()
            harness.wait(milliseconds: 10)
            governor.workerFinished(chunk: chunk)
            harness.wait(milliseconds: 190)
            levels.append(governor.level(forChunk: chunk + 10, offset: 0))
            governor.workerStarted()
            governor.workerFinished(chunk: chunk + 10)
        }
        #expect(levels == [3, 4, 4, 5, 5, 5], "\(levels)")
    }

    @Test("workers and writer both busy: balanced, the level stays")
    func balanced() {
        let harness = Harness(level: 6, range: 1...19)
        let governor = harness.begin()
        governor.writerBusy(true)
        governor.workerStarted()
        governor.workerStarted()
        for chunk in 0..<4 {
            harness.wait(milliseconds: 200)
            #expect(governor.level(forChunk: chunk, offset: 0) == 6)
        }
        #expect(harness.changes.current.isEmpty)
    }

    @Test("after a change, none until the first chunk at the new level is compressed; higher on two measures")
    func waitsForItsEffect() {
        let harness = Harness(level: 3, range: 1...19)
        let governor = harness.begin()
        harness.wait(milliseconds: 1)
        #expect(governor.level(forChunk: 0, offset: 0) == 3, "a measure of 1 ms decides nothing")
        harness.wait(milliseconds: 200)
        #expect(governor.level(forChunk: 1, offset: 0) == 3, "idle workers: a first measure asks")
        harness.wait(milliseconds: 200)
        #expect(governor.level(forChunk: 2, offset: 0) == 4, "and a second takes it")
        governor.workerStarted()
        governor.workerStarted()
        harness.wait(milliseconds: 200)
        #expect(governor.level(forChunk: 3, offset: 0) == 4, "busy workers, but chunk 2 is not compressed yet")
        governor.workerFinished(chunk: 2)
        governor.workerStarted()
        harness.wait(milliseconds: 200)
        #expect(governor.level(forChunk: 4, offset: 0) == 2, "now lower: two levels, the writer never busy")
        harness.wait(milliseconds: 200)
        #expect(governor.level(forChunk: 5, offset: 0) == 2, "chunk 4 is not compressed yet")
    }

    @Test("no choice before the first chunk is compressed: the workers were being started")
    func waitsForTheFirstChunk() {
        let harness = Harness(level: 3, range: 1...19)
        let governor = harness.governor
        harness.wait(milliseconds: 200)
        #expect(governor.level(forChunk: 3, offset: 0) == 3)
        governor.workerStarted()
        governor.workerFinished(chunk: 0)
        harness.wait(milliseconds: 200)
        #expect(governor.level(forChunk: 4, offset: 0) == 3)
        harness.wait(milliseconds: 200)
        #expect(governor.level(forChunk: 5, offset: 0) == 4, "idle workers since, twice: one level higher")
    }

    @Test("the first level is the one asked for, put in the range; steps skip 0")
    func steps() {
        #expect(Harness(level: 3, range: 5...9).governor.level(forChunk: 0, offset: 0) == 5)
        #expect(Harness(level: 19, range: 1...4).governor.level(forChunk: 0, offset: 0) == 4)
        #expect(LevelGovernor.step(1, by: -1, in: -5...5) == -1)
        #expect(LevelGovernor.step(-1, by: 1, in: -5...5) == 1)
        #expect(LevelGovernor.step(1, by: -1, in: 0...5) == 1, "0 is no level: stay at the range's end")
        #expect(LevelGovernor.step(5, by: 1, in: 0...5) == 5)
    }
}
