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
    }
    private let lock = Locked(Screen())
    private let observer = Locked<ProgressObserver?>(nil)    // main thread only

    /// Starts the line of one file; returns the observer to give its pipeline,
    /// already activated.
    ///
    /// - Parameters:
    ///   - name: the file's name as shown.
    ///   - file: its place among the files, from 1.
    ///   - files: how many files there are (the line shows `(n/N)` if more than one).
    ///   - total: the input's size, if known.
    ///   - mode: which way the bytes go.
    ///   - levelChanged: told of level changes (`--adapt -v`).
    func begin(name: String, file: Int, files: Int, total: Int?, mode: OperationKind,
               levelChanged: (@Sendable (LevelChange) -> Void)? = nil) -> ProgressObserver {
        end()
        lock.withLock { screen in
            if !screen.stopped {
                screen.meter = ProgressMeter(name: name, file: file, files: files, total: total, mode: mode)
            }
        }
        let observer = ProgressObserver(handler: { [weak self] totals in self?.draw(totals) }, levelChanged: levelChanged)
        self.observer.withLock { $0 = observer }
        observer.activate()
        return observer
    }

    /// Stops the observer, draws the line once more with its final totals
    /// (100% when the whole input was taken), then takes it away.
    func end() {
        let last = observer.withLock { observer in
            defer { observer = nil }
            return observer
        }?.finish()
        if let last { draw(last) }
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

    /// On the observer's queue.
    private func draw(_ totals: ProgressObserver.Totals) {
        lock.withLock { screen in
            guard var meter = screen.meter else { return }
            meter.update(totals)
            screen.meter = meter
            StandardError.write(ProgressLine.redraw(meter.text(width: TerminalWidth.current())))
            screen.onScreen = true
        }
    }
}
