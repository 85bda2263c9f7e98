import Dispatch
import Foundation
import Testing
@testable import WeirSystem

/// The output end of the streaming API: pieces in number order, in slices,
/// each counted as written only once its consumer has taken it.
@Suite("Stream sink")
struct StreamSinkTests {
    private static func data(_ bytes: [UInt8]) -> DispatchData {
        bytes.withUnsafeBytes { DispatchData(bytes: $0) }
    }

    @Test("pieces come out in number order, in slices, and count as written once taken")
    func order() async throws {
        let sink = StreamSink(sliceSize: 4)
        let finished = Locked<[(Int, Int)]>([])
        sink.attach { index, size in finished.withLock { $0.append((index, size)) } }
        sink.submit(2, Self.data([9]))
        sink.submit(1, Self.data([]))
        sink.submit(0, Self.data([1, 2, 3, 4, 5, 6]))
        #expect(finished.current.isEmpty)  // nothing taken yet

        #expect(try await sink.next() == Data([1, 2, 3, 4]))
        #expect(finished.current.isEmpty)  // piece 0 is not all out
        #expect(try await sink.next() == Data([5, 6]))
        #expect(try await sink.next() == Data([9]))
        #expect(finished.current.map(\.0) == [0, 1, 2])
        #expect(finished.current.map(\.1) == [6, 0, 1])

        // The consumer waits for the next piece, then for the end.
        async let later = sink.next()
        try await Task.sleep(for: .milliseconds(50))
        sink.submit(3, Self.data([7, 7]))
        #expect(try await later == Data([7, 7]))
        sink.end(.success(()))
        #expect(try await sink.next() == nil)
    }

    struct Failed: Error {}

    @Test("after a failure, pieces held and later ones are dropped (-1) and the consumer gets the failure")
    func abandon() async throws {
        let sink = StreamSink(sliceSize: 2)
        let finished = Locked<[(Int, Int)]>([])
        sink.attach { index, size in finished.withLock { $0.append((index, size)) } }
        sink.submit(0, Self.data([1, 2, 3]))
        sink.submit(2, Self.data([4]))
        #expect(try await sink.next() == Data([1, 2]))
        sink.abandon()
        sink.submit(1, Self.data([5]))
        #expect(Set(finished.current.map(\.0)) == [0, 1, 2])
        #expect(finished.current.allSatisfy { $0.1 == -1 })
        sink.end(.failure(Failed()))
        await #expect(throws: Failed.self) { _ = try await sink.next() }
    }
}
