import Dispatch
import WeirSystem

/// Counts the bytes a pipeline reads and writes through two `DATA_ADD`
/// dispatch sources and reports the running totals to a handler once per
/// `interval` (ten times a second by default).
///
/// The hot path (the read and write channels' queues) only calls
/// `add(data:)`, an atomic add that never blocks. Everything else runs on
/// `queue`, a serial queue of the observer's own, which alone owns the totals
/// and the gates below; so a slow handler (a slow terminal) only delays that
/// queue, never the pipeline.
///
/// Coalescing. An add to an active source wakes its queue; on a pipe that is
/// one wake-up per 64 KiB piece, some 16,000 per GiB: a share of a
/// compression's CPU time worth saving (bench/results/2026-11-27-comment-
/// numbers.md, "Progress wake-ups"). So each source is gated: its
/// handler folds the count in and suspends the source; adds to a suspended
/// source only accumulate, waking nothing; the timer, once per `interval`,
/// resumes both sources (each then runs once with the sum of its adds) and
/// then reports. At most two handler runs and one report per interval,
/// whatever the data rate, and a report even while nothing arrives (a
/// heartbeat: elapsed time and a moving-window speed keep moving on a stalled
/// pipe). The first report comes one `interval` after ``activate()``.
///
/// Attach one to a pipeline (`observer:`), call ``activate()`` before `run()`
/// and ``finish()`` after it. One observer serves one run.
///
/// Time comes from a `Clock`: the system's uptime and a dispatch timer,
/// or, for tests, a clock the caller sets and ticks (`tick()`), so what a
/// test asserts never depends on how busy the machine is.
public final class ProgressObserver: @unchecked Sendable {  // DispatchSources; mutable state on serial `queue`
    /// The running totals, as the handler sees them.
    public struct Totals: Sendable, Equatable {
        /// Bytes of the input the work has taken so far: compressing, those
        /// the compressor took (a chunk read ahead counts once compressed);
        /// otherwise those read.
        public var bytesIn: Int
        /// Bytes written to the output so far.
        public var bytesOut: Int
        /// Frames written so far, compressing; decoding, frames decoded.
        public var frames: Int = 0
        /// Bytes read from the input so far (or mapped): ahead of
        /// ``bytesIn`` by what waits for the work (a chunk being gathered
        /// from a slow pipe, chunks read ahead).
        public var bytesReceived: Int = 0
        /// Seconds since ``ProgressObserver/activate()``.
        public var seconds: Double

        /// Creates totals (for tests and renderers fed by hand).
        public init(bytesIn: Int = 0, bytesOut: Int = 0, seconds: Double = 0) {
            self.bytesIn = bytesIn
            self.bytesOut = bytesOut
            self.seconds = seconds
        }
    }

    /// The default time between two reports: ten a second.
    public static let defaultInterval = 0.1

    /// Where the observer's time and ticks come from.
    package struct Clock: Sendable {
        /// Nanoseconds on a monotonic scale.
        let now: @Sendable () -> UInt64
        /// Ticks come from a dispatch timer once per interval; false: only
        /// from `tick()`.
        let timed: Bool

        /// The system's uptime, ticked by a dispatch timer.
        package static let system = Clock(now: { DispatchTime.now().uptimeNanoseconds }, timed: true)

        /// A clock that reads `now` and ticks only when told (tests).
        package static func manual(now: @escaping @Sendable () -> UInt64) -> Clock {
            Clock(now: now, timed: false)
        }
    }

    private let queue = DispatchQueue(label: "weir.progress")
    private let readSource: DispatchSourceUserDataAdd
    /// Bytes read from the input, gated as the others.
    private let receivedSource: DispatchSourceUserDataAdd
    /// Frames written; not gated: at most one add per frame.
    private let frameSource: DispatchSourceUserDataAdd
    private let writeSource: DispatchSourceUserDataAdd
    private let timer: DispatchSourceTimer
    private let interval: Double
    private let clock: Clock
    private let handler: @Sendable (Totals) -> Void
    /// Told of each level change under `--adapt`, on the pipeline's
    /// reading thread, as it happens; nil: not told.
    public let levelChanged: (@Sendable (LevelChange) -> Void)?
    private let activated = Locked(false)  // libdispatch must not free an inactive source
    // Owned by `queue`:
    private var totals = Totals()
    private var started: UInt64?           // the clock's nanoseconds at activate()
    private var readGated = false          // readSource suspended by its handler
    private var writeGated = false         // writeSource suspended by its handler
    private var receivedGated = false      // receivedSource suspended by its handler
    private var finishing = false          // no more gating nor reports

    /// - Parameters:
    ///   - interval: seconds between two reports (default 0.1).
    ///   - handler: runs on the observer's serial queue with the totals so
    ///     far; it may take its time (adds keep accumulating meanwhile).
    ///   - levelChanged: told of each level change under `--adapt`, on the
    ///     pipeline's reading thread: it must be quick (it delays the next
    ///     chunk's read).
    public convenience init(interval: Double = ProgressObserver.defaultInterval,
                            handler: @escaping @Sendable (Totals) -> Void,
                            levelChanged: (@Sendable (LevelChange) -> Void)? = nil) {
        self.init(interval: interval, clock: .system, handler: handler, levelChanged: levelChanged)
    }

    /// An observer on `clock` (`Clock.manual(now:)` in tests).
    package init(interval: Double = ProgressObserver.defaultInterval, clock: Clock,
                 handler: @escaping @Sendable (Totals) -> Void,
                 levelChanged: (@Sendable (LevelChange) -> Void)? = nil) {
        self.interval = max(0.001, interval)
        self.clock = clock
        self.handler = handler
        self.levelChanged = levelChanged
        readSource = DispatchSource.makeUserDataAddSource(queue: queue)
        receivedSource = DispatchSource.makeUserDataAddSource(queue: queue)
        frameSource = DispatchSource.makeUserDataAddSource(queue: queue)
        writeSource = DispatchSource.makeUserDataAddSource(queue: queue)
        timer = DispatchSource.makeTimerSource(queue: queue)
        frameSource.setEventHandler { [unowned self] in totals.frames += Int(frameSource.data) }
        readSource.setEventHandler { [unowned self] in
            totals.bytesIn += Int(readSource.data)
            if !finishing && !readGated {
                readSource.suspend()
                readGated = true
            }
        }
        receivedSource.setEventHandler { [unowned self] in
            totals.bytesReceived += Int(receivedSource.data)
            if !finishing && !receivedGated {
                receivedSource.suspend()
                receivedGated = true
            }
        }
        writeSource.setEventHandler { [unowned self] in
            totals.bytesOut += Int(writeSource.data)
            if !finishing && !writeGated {
                writeSource.suspend()
                writeGated = true
            }
        }
        timer.setEventHandler { [unowned self] in
            openGates()
            // After the sources that just resumed have delivered their sums.
            queue.async { [unowned self] in report() }
        }
    }

    /// One tick of a `Clock.manual(now:)` clock, as the timer's: the adds
    /// made before the call are delivered, then the handler runs once with
    /// the totals at the clock's time; returns after the handler. Nothing
    /// before ``activate()`` or after ``finish()``.
    package func tick() {
        guard queue.sync(execute: { started != nil && !finishing }) else { return }
        queue.sync { openGates() }
        queue.sync { report() }  // after the resumed sources' deliveries, queued before it
    }

    /// Starts counting and reporting (sources start inactive), and the clock.
    public func activate() {
        guard !activated.withLock({ was in defer { was = true }; return was }) else { return }
        queue.sync { started = clock.now() }
        let nanoseconds = Int(interval * 1e9)
        if clock.timed {
            timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds),
                           leeway: .nanoseconds(nanoseconds / 10))
        }
        readSource.activate()
        receivedSource.activate()
        writeSource.activate()
        frameSource.activate()
        timer.activate()
    }

    /// Called by the pipeline for every piece of input its work took
    /// (``Totals/bytesIn``); any thread.
    package func bytesRead(_ count: Int) {
        if count > 0 { readSource.add(data: UInt(count)) }
    }

    /// Called by the pipeline for every piece read from the input
    /// (``Totals/bytesReceived``); any thread.
    func bytesReceived(_ count: Int) {
        if count > 0 { receivedSource.add(data: UInt(count)) }
    }

    /// Called by the pipeline for every frame written (decoding: decoded); any thread.
    package func frameWritten() {
        frameSource.add(data: 1)
    }

    /// Called by the pipeline for every piece written; any thread.
    package func bytesWritten(_ count: Int) {
        if count > 0 { writeSource.add(data: UInt(count)) }
    }

    /// Resumes the gated sources, which then deliver what accumulated; on `queue`.
    private func openGates() {
        if readGated {
            readGated = false
            readSource.resume()
        }
        if writeGated {
            writeGated = false
            writeSource.resume()
        }
        if receivedGated {
            receivedGated = false
            receivedSource.resume()
        }
    }

    /// Calls the handler with the totals now; on `queue`.
    private func report() {
        guard !finishing, let started else { return }
        totals.seconds = Double(clock.now() &- started) / 1e9
        handler(totals)
    }

    /// Stops reporting and returns the totals, with the adds made before the
    /// call delivered; the handler is not called again once this returns.
    /// The exact figures of a run are still the pipeline's ``Statistics``.
    @discardableResult
    public func finish() -> Totals {
        stop()
        return queue.sync {
            if let started { totals.seconds = Double(clock.now() &- started) / 1e9 }
            return totals
        }
    }

    /// Stops the timer, lets the sources deliver what is pending, cancels
    /// them. Sources must be active and not suspended when they are freed.
    private func stop() {
        guard activated.withLock({ was in defer { was = true }; return was }) else {
            readSource.cancel()
            receivedSource.cancel()
            writeSource.cancel()
            frameSource.cancel()
            timer.cancel()
            readSource.activate()
            receivedSource.activate()
            writeSource.activate()
            frameSource.activate()
            timer.activate()
            return
        }
        timer.cancel()
        queue.sync {
            guard !finishing else { return }
            finishing = true
            openGates()
        }
        queue.sync {}  // the resumed sources' last deliveries run before this
        readSource.cancel()
        receivedSource.cancel()
        writeSource.cancel()
        frameSource.cancel()
    }

    deinit {
        stop()
    }
}
