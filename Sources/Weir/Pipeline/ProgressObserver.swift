import Dispatch

/// Counts the bytes a pipeline reads and writes through two `DATA_ADD`
/// dispatch sources and reports the running totals to a handler.
///
/// The hot path (the read and write channels' queues) only calls
/// `add(data:)`, an atomic add that never blocks. libdispatch merges the adds
/// that arrive while the handler is busy, and the handler runs on `queue`, a
/// serial queue of the observer's own, which alone owns the totals. So the
/// cost of a progress display never lands on the pipeline.
///
/// Attach one to a pipeline (`observer:`), call ``activate()`` before `run()`
/// and ``finish()`` after it.
public final class ProgressObserver: @unchecked Sendable {
    /// The running totals, as the handler sees them.
    public struct Totals: Sendable, Equatable {
        /// Bytes read from the input so far.
        public var bytesIn: Int
        /// Bytes written to the output so far.
        public var bytesOut: Int
    }

    private let queue = DispatchQueue(label: "weir.progress")
    private let readSource: DispatchSourceUserDataAdd
    private let writeSource: DispatchSourceUserDataAdd
    private var totals = Totals(bytesIn: 0, bytesOut: 0)  // owned by `queue`

    /// - Parameter handler: runs on the observer's serial queue with the new
    ///   totals after each batch of adds; keep it short or rate-limit it.
    public init(handler: @escaping @Sendable (Totals) -> Void) {
        readSource = DispatchSource.makeUserDataAddSource(queue: queue)
        writeSource = DispatchSource.makeUserDataAddSource(queue: queue)
        readSource.setEventHandler { [unowned self] in
            totals.bytesIn += Int(readSource.data)
            handler(totals)
        }
        writeSource.setEventHandler { [unowned self] in
            totals.bytesOut += Int(writeSource.data)
            handler(totals)
        }
    }

    /// Starts delivering (sources start suspended).
    public func activate() {
        readSource.activate()
        writeSource.activate()
    }

    /// Called by the pipeline for every piece read; any thread.
    func bytesRead(_ count: Int) {
        if count > 0 { readSource.add(data: UInt(count)) }
    }

    /// Called by the pipeline for every piece written; any thread.
    func bytesWritten(_ count: Int) {
        if count > 0 { writeSource.add(data: UInt(count)) }
    }

    /// Cancels the sources and returns the totals the handler has seen. Adds
    /// not yet delivered may be missing: exact figures are the pipeline's
    /// ``Statistics``.
    @discardableResult
    public func finish() -> Totals {
        readSource.cancel()
        writeSource.cancel()
        return queue.sync { totals }
    }

    deinit {
        if !readSource.isCancelled { readSource.cancel() }
        if !writeSource.isCancelled { writeSource.cancel() }
    }
}
