import Weir

/// The progress of one file, fed with the running totals of a
/// ``Weir/ProgressObserver`` and turned into a ``ProgressLine``: percentage
/// and ETA against a known total, the ratio so far, the speed over a moving
/// window.
///
/// Two counts of the input: the bytes the work took (``bytesIn``: compressed,
/// or decoded) and the bytes read (``received``), ahead of it by what waits
/// for the work. The speed is the slower of their rates over the window,
/// leaving out one that did not move: a file mapped at once, or a pipe
/// gathering a chunk, has one rate idle while the run still moves at the
/// other's (a slow pipe showed `0 B/s` until a chunk was compressed).
///
/// Time is whatever the caller says it is (the observer's seconds since the
/// start), so tests drive it with a fake clock.
package struct ProgressMeter: Sendable {
    /// The file's name as shown.
    package let name: String
    /// `(file/files)` is shown when `files` > 1.
    package let file: Int
    /// See `file`.
    package let files: Int
    /// The input's size, when known (a regular file, or `--size-hint`).
    package let total: Int?
    /// Which way the bytes go: compress reads it as out / in, decompress as
    /// in / out, test has no output and no ratio.
    package let mode: OperationKind
    /// Bytes read so far.
    package private(set) var bytesIn = 0
    /// Bytes read (or mapped) so far.
    package private(set) var received = 0
    /// Show the bytes read while the work is behind them (an input that
    /// arrives: a pipe, where a chunk is gathered before it is worked on).
    package let showsReceived: Bool
    /// Bytes written so far.
    package private(set) var bytesOut = 0
    /// Seconds since the start.
    package private(set) var seconds = 0.0
    private var window: SpeedWindow
    private var receivedWindow: SpeedWindow

    /// - Parameters:
    ///   - name: the file's name.
    ///   - file: its place among the files, from 1.
    ///   - files: how many files there are.
    ///   - total: the input's size, if known.
    ///   - mode: which way the bytes go.
    ///   - speedWindow: the span of the moving speed window, in seconds.
    ///   - showsReceived: show the bytes read while the work is behind them.
    package init(name: String, file: Int = 1, files: Int = 1, total: Int?, mode: OperationKind, speedWindow: Double = 3,
                 showsReceived: Bool = false) {
        self.showsReceived = showsReceived
        self.name = name
        self.file = file
        self.files = files
        self.total = total
        self.mode = mode
        window = SpeedWindow(span: speedWindow, start: 0)
        receivedWindow = SpeedWindow(span: speedWindow, start: 0)
    }

    /// Takes the running totals at `seconds` since the start.
    package mutating func update(bytesIn: Int, bytesOut: Int, seconds: Double, received: Int = 0) {
        self.bytesIn = bytesIn
        self.bytesOut = bytesOut
        self.received = max(self.received, received)
        self.seconds = max(self.seconds, seconds)
        window.record(time: self.seconds, bytes: bytesIn)
        receivedWindow.record(time: self.seconds, bytes: self.received)
    }

    /// Takes a progress observer's totals.
    package mutating func update(_ totals: ProgressObserver.Totals) {
        update(
            bytesIn: totals.bytesIn, bytesOut: totals.bytesOut, seconds: totals.seconds, received: totals.bytesReceived)
    }

    /// Input bytes per second over the moving window: the slower of the
    /// work's rate and the reading's, leaving out one that did not move
    /// (see the type's notes); nil before any time passed.
    package var speed: Double? {
        let work = window.bytesPerSecond
        guard let reading = receivedWindow.bytesPerSecond, reading > 0 else { return work }
        guard let work, work > 0 else { return reading }
        return min(work, reading)
    }

    /// How far the input has been read, 0 … 1; nil without a usable total
    /// (unknown, empty, or already passed: a wrong `--size-hint` shows no
    /// false percentage).
    package var fraction: Double? {
        guard let total, total > 0, bytesIn <= total else { return nil }
        return Double(bytesIn) / Double(total)
    }

    /// Seconds to the end at the current speed; nil without a total or speed.
    package var eta: Double? {
        guard let total, fraction != nil, let speed, speed > 0 else { return nil }
        return Double(total - bytesIn) / speed
    }

    /// Compressed / uncompressed so far; nil before both sides have bytes.
    package var ratio: Double? {
        switch mode {
        case .compress: return bytesIn > 0 && bytesOut > 0 ? Double(bytesOut) / Double(bytesIn) : nil
        case .decompress: return bytesIn > 0 && bytesOut > 0 ? Double(bytesIn) / Double(bytesOut) : nil
        case .test: return nil
        }
    }

    /// The line's state now.
    package var line: ProgressLine {
        ProgressLine(counter: files > 1 ? "(\(file)/\(files))" : nil, name: name, fraction: fraction,
                     bytesIn: bytesIn, bytesOut: mode == .test ? nil : bytesOut, ratio: ratio,
                     received: showsReceived && received > bytesIn ? received : nil,
                     speed: speed, elapsed: seconds, eta: eta)
    }

    /// The line now, fitted to `width` columns.
    package func text(width: Int) -> String {
        line.text(width: width)
    }
}
