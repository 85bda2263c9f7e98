import Foundation
import Testing
@testable import Weir
import SystemPackage

/// The observer counts through DATA_ADD sources and calls its handler on its
/// own queue, rate-limited, with a heartbeat while nothing arrives.
@Suite("Progress observer")
struct ProgressObserverTests {
    /// The handler's calls, as it saw them.
    final class Calls: @unchecked Sendable {
        let seen = Locked<[ProgressObserver.Totals]>([])
        var all: [ProgressObserver.Totals] { seen.current }
    }

    @Test("adds from many threads are summed; the handler runs at most about once per interval")
    func rateLimited() {
        let calls = Calls()
        let observer = ProgressObserver(interval: 0.1) { totals in calls.seen.withLock { $0.append(totals) } }
        observer.activate()
        let deadline = Date().addingTimeInterval(0.6)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            while Date() < deadline {
                observer.bytesRead(1000)
                observer.bytesWritten(10)
            }
        }
        let last = observer.finish()
        let seen = calls.all
        #expect(seen.count >= 3 && seen.count <= 9, "\(seen.count) calls in 0.6 s")
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.bytesIn <= $1.bytesIn && $0.seconds < $1.seconds })
        if let first = seen.first, let final = seen.last, seen.count > 1 {
            #expect((final.seconds - first.seconds) / Double(seen.count - 1) >= 0.09)  // a report per interval
        }
        // Every add made before finish() is in its totals.
        #expect(last.bytesIn > 0 && last.bytesIn % 1000 == 0)
        #expect(last.bytesOut * 100 == last.bytesIn)
        #expect(last.seconds >= 0.55)
    }

    @Test("a heartbeat while nothing arrives, so elapsed time moves; nothing after finish()")
    func heartbeat() {
        let calls = Calls()
        let observer = ProgressObserver(interval: 0.05) { totals in calls.seen.withLock { $0.append(totals) } }
        observer.activate()
        usleep(400_000)
        observer.finish()
        let count = calls.all.count
        #expect(count >= 3, "\(count) heartbeats")
        #expect(calls.all.allSatisfy { $0.bytesIn == 0 && $0.bytesOut == 0 })
        usleep(200_000)
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
            CompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: outFD),
                                inputName: "in", outputName: "out",
                                options: CompressionOptions(threads: 2, chunkSize: 256 << 10), observer: observer).result()
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
