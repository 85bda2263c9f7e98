import Dispatch
import FoundationEssentials

/// The output end of a pipeline run for the streaming API: numbered pieces
/// are put back in order and handed to the stream's consumer in slices of at
/// most `sliceSize` bytes, one slice per ``next()``.
///
/// Back-pressure: a piece counts as written — its `onFinished`, which frees
/// its in-flight place in the pipeline — only when its last slice has been
/// taken, so a consumer that stops asking stops the pipeline.
///
/// Threads: pieces arrive from any thread, slices are taken from any task;
/// the state is behind one lock, and `onFinished` and the consumer's
/// continuation run outside it.
package final class StreamSink: PieceSink {
    package typealias Finished = @Sendable (_ index: Int, _ size: Int) -> Void

    private struct State {
        var pending: [Int: DispatchData] = [:]
        var next = 0
        /// The piece being sliced, and how much of it has been taken.
        var current: (index: Int, data: DispatchData, offset: Int)?
        var failed = false
        /// Pieces after this one are dropped (``abandon(after:)``).
        var lastKept = Int.max
        /// Set when the run has ended: nil for a success.
        var outcome: Result<Void, any Error>?
        var waiter: CheckedContinuation<Data?, any Error>?
        var onFinished: Finished = { _, _ in }
    }

    /// The most bytes one slice holds.
    let sliceSize: Int
    private let state = Locked(State())

    package init(sliceSize: Int) {
        self.sliceSize = sliceSize
    }

    /// Sets what is told of each piece written or dropped; before the run starts.
    package func attach(onFinished: @escaping Finished) {
        state.withLock { $0.onFinished = onFinished }
    }

    package func submit(_ index: Int, _ data: DispatchData) {
        let delivery = state.withLock { state -> Delivery in
            if state.failed || index > state.lastKept {
                return Delivery(finished: [(index, -1)], onFinished: state.onFinished)
            }
            state.pending[index] = data
            guard state.waiter != nil else { return Delivery() }
            return Self.take(&state, sliceSize: sliceSize)
        }
        delivery.run()
    }

    package func abandon() {
        state.withLock { state -> Delivery in
            state.failed = true
            var dropped = Self.drop(after: -1, &state)
            if let current = state.current { dropped.append(current.index) }
            state.current = nil
            return Delivery(finished: dropped.map { ($0, -1) }, onFinished: state.onFinished)
        }.run()
    }

    package func abandon(after index: Int) {
        state.withLock { state -> Delivery in
            Delivery(finished: Self.drop(after: index, &state).map { ($0, -1) }, onFinished: state.onFinished)
        }.run()
    }

    /// Under the lock: drops the pieces after `index` that wait, and any
    /// that arrives later; returns the numbers dropped now.
    private static func drop(after index: Int, _ state: inout State) -> [Int] {
        state.lastKept = min(state.lastKept, index)
        let dropped = state.pending.keys.filter { $0 > state.lastKept }
        for key in dropped { state.pending.removeValue(forKey: key) }
        return dropped
    }

    /// Nothing to close: the consumer learns of the end from ``end(_:)``.
    package func close(stop: Bool) {}

    /// The run has ended (`outcome` holds its failure, if any): the consumer
    /// gets the end, or the failure, once it has taken every slice.
    package func end(_ outcome: Result<Void, any Error>) {
        state.withLock { state -> Delivery in
            state.outcome = outcome
            guard state.waiter != nil else { return Delivery() }
            return Self.take(&state, sliceSize: sliceSize)
        }.run()
    }

    /// The next slice of output, nil at the end; throws the run's failure.
    package func next() async throws -> Data? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
            state.withLock { state -> Delivery in
                state.waiter = continuation
                return Self.take(&state, sliceSize: sliceSize)
            }.run()
        }
    }

    /// What a change of state hands out, done outside the lock.
    private struct Delivery {
        var finished: [(Int, Int)] = []
        var onFinished: Finished = { _, _ in }
        var waiter: CheckedContinuation<Data?, any Error>?
        var answer: Result<Data?, any Error> = .success(nil)

        func run() {
            for (index, size) in finished { onFinished(index, size) }
            waiter?.resume(with: answer)
        }
    }

    /// Under the lock: answers the waiting consumer if there is a slice to
    /// give, or the end; pieces that are done (empty ones too) are reported.
    private static func take(_ state: inout State, sliceSize: Int) -> Delivery {
        var delivery = Delivery(onFinished: state.onFinished)
        while state.current == nil, let piece = state.pending.removeValue(forKey: state.next) {
            if piece.count == 0 {
                delivery.finished.append((state.next, 0))
            } else {
                state.current = (state.next, piece, 0)
            }
            state.next += 1
        }
        if let current = state.current {
            let end = min(current.offset + sliceSize, current.data.count)
            var slice = Data(capacity: end - current.offset)
            current.data.subdata(in: current.offset..<end).enumerateBytes { bytes, _, _ in slice.append(bytes) }
            if end == current.data.count {
                delivery.finished.append((current.index, current.data.count))
                state.current = nil
            } else {
                state.current = (current.index, current.data, end)
            }
            delivery.waiter = state.waiter
            delivery.answer = .success(slice)
            state.waiter = nil
        } else if let outcome = state.outcome {
            delivery.waiter = state.waiter
            switch outcome {
            case .success: delivery.answer = .success(nil)
            case .failure(let error): delivery.answer = .failure(error)
            }
            state.waiter = nil
        }
        return delivery
    }
}
