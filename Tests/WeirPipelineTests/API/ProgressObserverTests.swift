import Foundation
import SystemPackage
import Testing
@testable import WeirPipeline
@testable import WeirSystem
@testable import WeirTestSupport

/// The observer counts through DATA_ADD sources and calls its handler on its
/// own queue, rate-limited, with a heartbeat while nothing arrives.
@Suite("Progress observer")
struct ProgressObserverTests {
    /// The handler's calls, as it saw them.
    final class Calls: @unchecked Sendable {
        let seen = Locked<[ProgressObserver.Totals]>([])
        var all: [ProgressObserver.Totals] { seen.current }
    }

    /// A clock the test sets: nanoseconds, moved only by `advance`.
    final class TestClock: Sendable {
        let nanoseconds = Locked<UInt64>(1_000_000_000)
        func advance(_ seconds: Double) { nanoseconds.withLock { $0 += UInt64(seconds * 1e9) } }
        var clock: ProgressObserver.Clock { .manual(now: { [nanoseconds] in nanoseconds.current }) }
    }

    @Test("adds from many threads are summed; one report per tick, with the adds made before it, at the clock's time")
    func summedPerTick() {
        let calls = Calls()
        let time = TestClock()
        let observer = ProgressObserver(clock: time.clock) { totals in calls.seen.withLock { $0.append(totals) } }
        observer.activate()
        for round in 1 ... 5 {
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                for _ in 0 ..< 500 {
                    observer.bytesRead(1000)
                    observer.bytesWritten(10)
                }
            }
            time.advance(0.1)
            observer.tick()
            // However many adds there were, and however they were gated, one report.
            #expect(calls.all.count == round)
            #expect(calls.all.last == ProgressObserver.Totals(bytesIn: round * 2_000_000, bytesOut: round * 20_000,
                                                              seconds: Double(round) / 10))
        }
        time.advance(0.05)
        let last = observer.finish()
        #expect(last == ProgressObserver.Totals(bytesIn: 10_000_000, bytesOut: 100_000, seconds: 0.55))
        observer.tick()
        #expect(calls.all.count == 5)  // nothing after finish()
    }

    @Test("a heartbeat while nothing arrives, so elapsed time moves; nothing after finish()")
    func heartbeat() {
        let calls = Calls()
        let time = TestClock()
        let observer = ProgressObserver(clock: time.clock) { totals in calls.seen.withLock { $0.append(totals) } }
        observer.tick()
        #expect(calls.all.isEmpty)  // nothing before activate()
        observer.activate()
        for _ in 0 ..< 3 {
            time.advance(0.05)
            observer.tick()
        }
        observer.finish()
        #expect(calls.all == [0.05, 0.1, 0.15].map { ProgressObserver.Totals(seconds: $0) })
        observer.tick()
        #expect(calls.all.count == 3)
    }

    @Test("on the system clock, the timer reports by itself until finish()")
    func timerTicks() {
        let calls = Calls()
        let twoReports = DispatchSemaphore(value: 0)
        let observer = ProgressObserver(interval: 0.01) { totals in
            if calls.seen.withLock({ $0.append(totals); return $0.count }) == 2 { twoReports.signal() }
        }
        observer.activate()
        observer.bytesRead(7)
        // A generous bound for a loaded machine; the test asserts only that reports come.
        #expect(twoReports.wait(timeout: .now() + 60) == .success)
        let last = observer.finish()
        let count = calls.all.count
        #expect(last.bytesIn == 7)
        #expect(calls.all.allSatisfy { $0.bytesIn <= 7 })
        #expect(zip(calls.all, calls.all.dropFirst()).allSatisfy { $0.seconds <= $1.seconds })
        observer.tick()  // a timed clock: ticks only by its timer, and none after finish()
        #expect(calls.all.count == count)
    }

    @Test("an observer never activated goes away cleanly")
    func neverActivated() {
        var observer: ProgressObserver? = ProgressObserver { _ in }
        observer?.bytesRead(5)
        #expect(observer?.finish() == ProgressObserver.Totals())
        observer = nil
        _ = ProgressObserver { _ in }
    }

    @Test("attached to a pipeline: the totals reach the real byte counts")
    func pipeline() throws {
        let input = TestData.text(3_000_000)
        let calls = Calls()
        let observer = ProgressObserver(interval: 0.01) { totals in calls.seen.withLock { $0.append(totals) } }
        observer.activate()
        let outcome = PipeHarness.run(input: input, pieceSize: 65536) { inFD, outFD in
            CompressionPipeline(
                input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: outFD),
                inputName: "in", outputName: "out",
                options: CompressionOptions(threads: 2, chunkSize: 256 << 10), observer: observer
            ).result()
        }
        let last = observer.finish()
        let statistics = try outcome.result.get()
        #expect(last.bytesIn == statistics.bytesIn)
        #expect(last.bytesOut <= statistics.bytesOut)  // the seek table may go out after the last frame is counted
        #expect(last.bytesOut > 0)
        // A fast run may end before the first tick; whatever was reported
        // grows monotonically up to the final totals.
        let seen = calls.all
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.bytesIn <= $1.bytesIn && $0.bytesOut <= $1.bytesOut })
        #expect(seen.allSatisfy { $0.bytesIn <= last.bytesIn && $0.bytesOut <= last.bytesOut })
    }
}
