import Dispatch

/// Counts the bytes a pipeline reads and writes through two `DATA_ADD`
/// dispatch sources and reports the running totals to a handler, at most
/// about once per `interval`.
///
/// The hot path (the read and write channels' queues) only calls
/// `add(data:)`, an atomic add that never blocks. libdispatch merges the adds
/// that arrive while the handler is busy, and the handlers run on `queue`, a
/// serial queue of the observer's own, which alone owns the totals and the
/// time of the last report. So the cost of a progress display never lands on
/// the pipeline: a slow terminal only delays the observer's queue.
///
/// When the handler is called:
/// - after a batch of adds, if at least `interval` has passed since the last
///   call (the rate limit: a redraw per `interval` whatever the data rate);
/// - by a timer on the same queue, every `interval`, if no batch did it: a
///   heartbeat, so that elapsed time and a moving-window speed keep moving
///   while the input stalls (a slow pipe).
/// So the first call comes about one `interval` after ``activate()``, and a
/// run shorter than that reports nothing.
///
/// Attach one to a pipeline (`observer:`), call ``activate()`` before `run()`
/// and ``finish()`` after it. One observer serves one run.
public final class ProgressObserver: @unchecked Sendable {
    /// The running totals, as the handler sees them.
    public struct Totals: Sendable, Equatable {
        /// Bytes read from the input so far.
        public var bytesIn: Int
        /// Bytes written to the output so far.
        public var bytesOut: Int
        /// Seconds since ``ProgressObserver/activate()``.
        public var seconds: Double

        /// Creates totals (for tests and renderers fed by hand).
        public init(bytesIn: Int = 0, bytesOut: Int = 0, seconds: Double = 0) {
            self.bytesIn = bytesIn
            self.bytesOut = bytesOut
            self.seconds = seconds
        }
    }

    /// The default time between two calls of the handler: 10 a second.
    public static let defaultInterval = 0.1

    private let queue = DispatchQueue(label: "weir.progress")
    private let readSource: DispatchSourceUserDataAdd
    private let writeSource: DispatchSourceUserDataAdd
    private let timer: DispatchSourceTimer
    private let interval: Double
    private let handler: @Sendable (Totals) -> Void
    private let activated = Locked(false)  // libdispatch must not free an inactive source
    // Owned by `queue`:
    private var totals = Totals()
    private var started: UInt64 = 0        // uptime nanoseconds at activate()
    private var lastReport: UInt64 = 0     // uptime nanoseconds of the last handler call

    /// Creates an observer that reports to `handler`; it starts suspended,
    /// until ``activate()``.
    ///
    /// - Parameters:
    ///   - interval: the least time, in seconds, between two calls of the
    ///     handler (default 0.1 s).
    ///   - handler: runs on the observer's serial queue with the totals so
    ///     far; it may take its time (adds keep being merged meanwhile).
    public init(interval: Double = ProgressObserver.defaultInterval,
                handler: @escaping @Sendable (Totals) -> Void) {
        self.interval = max(0.001, interval)
        self.handler = handler
        readSource = DispatchSource.makeUserDataAddSource(queue: queue)
        writeSource = DispatchSource.makeUserDataAddSource(queue: queue)
        timer = DispatchSource.makeTimerSource(queue: queue)
        readSource.setEventHandler { [unowned self] in
            totals.bytesIn += Int(readSource.data)
            reportIfDue()
        }
        writeSource.setEventHandler { [unowned self] in
            totals.bytesOut += Int(writeSource.data)
            reportIfDue()
        }
        timer.setEventHandler { [unowned self] in
            reportIfDue()
        }
    }

    /// Starts delivering (sources start suspended) and starts the clock.
    public func activate() {
        guard !activated.withLock({ was in defer { was = true }; return was }) else { return }
        queue.sync {
            started = DispatchTime.now().uptimeNanoseconds
            lastReport = started
        }
        let nanoseconds = Int(interval * 1e9)
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds),
                       leeway: .nanoseconds(nanoseconds / 5))
        readSource.activate()
        writeSource.activate()
        timer.activate()
    }

    /// Called by the pipeline for every piece read; any thread.
    func bytesRead(_ count: Int) {
        if count > 0 { readSource.add(data: UInt(count)) }
    }

    /// Called by the pipeline for every piece written; any thread.
    func bytesWritten(_ count: Int) {
        if count > 0 { writeSource.add(data: UInt(count)) }
    }

    /// Calls the handler if `interval` has passed since the last call; on `queue`.
    private func reportIfDue() {
        let now = DispatchTime.now().uptimeNanoseconds
        guard Double(now &- lastReport) >= interval * 1e9 else { return }
        lastReport = now
        totals.seconds = Double(now &- started) / 1e9
        handler(totals)
    }

    /// Stops the sources and the timer, and returns the totals seen so far;
    /// the handler is not called again once this returns. Adds not yet
    /// delivered may be missing: exact figures are the pipeline's
    /// ``Statistics``.
    @discardableResult
    public func finish() -> Totals {
        stop()
        return queue.sync {
            if started > 0 { totals.seconds = Double(DispatchTime.now().uptimeNanoseconds &- started) / 1e9 }
            return totals
        }
    }

    /// Cancels the sources and the timer; activates them first if they never
    /// were, as libdispatch must not free an inactive source.
    private func stop() {
        readSource.cancel()
        writeSource.cancel()
        timer.cancel()
        if !activated.withLock({ was in defer { was = true }; return was }) {
            readSource.activate()
            writeSource.activate()
            timer.activate()
        }
    }

    deinit {
        stop()
    }
}
