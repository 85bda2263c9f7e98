import Glibc

/// The width of the terminal the progress line is drawn on, read again at
/// each redraw so that a resized window is followed.
enum TerminalWidth {
    /// When nothing says otherwise (stderr is a file, COLUMNS unset).
    static let fallback = 80

    /// The columns of the terminal on stderr (`TIOCGWINSZ`), else `COLUMNS`,
    /// else ``fallback``.
    static func current() -> Int {
        var size = winsize()
        if ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            return Int(size.ws_col)
        }
        if let text = getenv("COLUMNS"), let columns = Int(String(cString: text)), columns > 0 {
            return columns
        }
        return fallback
    }
}
