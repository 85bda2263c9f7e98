import Weir
import WeirCLI

/// Draws the live progress line of the file being processed on stderr.
///
/// For each file, ``begin(name:file:files:total:mode:)`` makes a
/// ``Weir/ProgressObserver`` for the pipeline; its handler, on the observer's
/// own serial queue and at most ten times a second, feeds a ``ProgressMeter``
/// and redraws the line in place (`\r`, the line, erase to the end), fitted to
/// the terminal's width. ``end()`` takes the line away.
///
/// With `--progress=json` (`json`), each update is a ``ProgressRecord`` on a
/// line of its own instead, four a second, and ``end()`` writes the file's
/// last one (`"event": "end"`): nothing is drawn over, nothing cleared.
///
/// Threads: `begin` and `end` run on the main thread; drawing runs on the
/// observer's queue; ``stop()`` on the signal queue; ``interrupt(_:)`` on any
/// thread that writes a message. The meter and whether a line is on screen are
/// guarded by `lock` (its `Screen`), so a message, a redraw and a clear never interleave, and
/// nothing is drawn after `end` or `stop`. `observer` is the main thread's
/// (behind a lock all the same, taken once per file).
final class ProgressDisplay: Sendable {
    /// What a message, a redraw and a clear share.
    private struct Screen {
        var meter: ProgressMeter?   // nil: draw nothing
        var onScreen = false
        var stopped = false
        var jsonName = ""           // the input as JSON names it
        var level: Int?             // compressing: the level now
    }
    private let lock = Locked(Screen())
    private let observer = Locked<ProgressObserver?>(nil)    // main thread only
    /// Write ``ProgressRecord`` lines rather than draw a line.
    let json: Bool

    /// The time between two JSON records: at least two a second, as asked
    /// of a stream another program follows, and few enough to be read.
    static let jsonInterval = 0.25

    init(json: Bool = false) {
        self.json = json
    }

    /// Starts the line of one file; returns the observer to give its pipeline,
    /// already activated.
    ///
    /// - Parameters:
    ///   - name: the file's name as shown.
    ///   - file: its place among the files, from 1.
    ///   - files: how many files there are (the line shows `(n/N)` if more than one).
    ///   - total: the input's size, if known.
    ///   - mode: which way the bytes go.
    ///   - jsonName: the input as JSON records name it (`"-"` for stdin).
    ///   - level: compressing, the first frame's level.
    ///   - levelChanged: told of level changes (`--adapt -v`).
    ///   - arrives: the input arrives (a pipe): the line shows the bytes
    ///     read while the work is behind them.
    func begin(name: String, file: Int, files: Int, total: Int?, mode: OperationKind, jsonName: String = "",
               level: Int? = nil, levelChanged: (@Sendable (LevelChange) -> Void)? = nil,
               arrives: Bool = false) -> ProgressObserver {
        end()
        lock.withLock { screen in
            if !screen.stopped {
                screen.meter = ProgressMeter(name: name, file: file, files: files, total: total, mode: mode,
                                             showsReceived: arrives)
                screen.jsonName = jsonName
                screen.level = level
            }
        }
        var told = levelChanged
        if json && level != nil {
            // The records carry the level now (under --adapt, the last chosen).
            told = { [weak self] change in
                self?.lock.withLock { $0.level = change.to }
                levelChanged?(change)
            }
        }
        let observer = ProgressObserver(interval: json ? Self.jsonInterval : ProgressObserver.defaultInterval,
                                        handler: { [weak self] totals in self?.draw(totals) }, levelChanged: told)
        self.observer.withLock { $0 = observer }
        observer.activate()
        return observer
    }

    /// Stops the observer, draws the line once more with its final totals
    /// (100% when the whole input was taken; in JSON, the `end` record with
    /// `status`), then takes it away.
    func end(status: ProgressRecord.Status = .ok) {
        let last = observer.withLock { observer in
            defer { observer = nil }
            return observer
        }?.finish()
        if let last { draw(last, event: .end, status: status) }
        clear(stopping: false)
    }

    /// Takes the line away for good: nothing is drawn afterwards (a signal).
    func stop() {
        clear(stopping: true)
    }

    /// Runs `body` (which writes a message on stderr) with the line taken
    /// away; the next redraw puts it back below the message.
    func interrupt(_ body: () -> Void) {
        lock.withLock { screen in
            if screen.onScreen {
                StandardError.write(ProgressLine.clear)
                screen.onScreen = false
            }
            body()
        }
    }

    private func clear(stopping: Bool) {
        lock.withLock { screen in
            screen.meter = nil
            if stopping { screen.stopped = true }
            if screen.onScreen {
                StandardError.write(ProgressLine.clear)
                screen.onScreen = false
            }
        }
    }

    /// On the observer's queue (and once from ``end()``).
    private func draw(_ totals: ProgressObserver.Totals, event: ProgressRecord.Event = .progress,
                      status: ProgressRecord.Status? = nil) {
        lock.withLock { screen in
            guard var meter = screen.meter else { return }
            meter.update(totals)
            screen.meter = meter
            if json {
                let record = ProgressRecord(event: event, meter: meter, input: screen.jsonName, level: screen.level,
                                            frames: totals.frames, status: status)
                StandardError.write(record.line() + "\n")
                return
            }
            StandardError.write(ProgressLine.redraw(meter.text(width: TerminalWidth.current())))
            screen.onScreen = true
        }
    }
}
