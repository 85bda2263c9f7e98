/// One state of the live progress line, laid out to fit a terminal width.
///
/// Shown in this order, each field only when known:
///
///     (2/3) linux.tar  42% [=========>          ]  512.0 MiB =>  75.20 MiB (14.69%)   890.0 MiB/s 0:03 ETA 0:04
///
/// From a pipe, while the work is behind the bytes read (a chunk gathered
/// before it is compressed), those are shown too: `read   1.50 MiB`.
///
/// Numbers are padded to fixed widths so that the bar does not jitter as they
/// grow. The line stays one column short of `width` (writing the last column
/// makes some terminals wrap). When it does not fit, fields go in
/// ``dropOrder``, the file name first shortened from the left. The bar goes
/// before any of them: it is drawn only when every field fits, in the room
/// left (at least ``minimumBar``, at most ``maximumBar`` columns). Without a total there is no
/// percentage, no bar and no ETA: the bytes read lead the line instead.
///
/// Pure: a value in, a string out, no terminal I/O (see ``clear`` and
/// ``redraw(_:)`` for the control sequences a renderer writes).
package struct ProgressLine: Sendable, Equatable {
    /// `(n/N)` when several files are processed.
    package var counter: String?
    /// The file's name.
    package var name: String?
    /// How far the input has been read, 0 … 1; nil when its size is unknown.
    package var fraction: Double?
    /// Bytes read.
    package var bytesIn: Int
    /// Bytes written; nil hides it (`--test` writes nothing).
    package var bytesOut: Int?
    /// Compressed size / uncompressed size so far.
    package var ratio: Double?
    /// Bytes read from the input, shown while the work is behind them.
    package var received: Int?
    /// Input bytes per second, over a moving window.
    package var speed: Double?
    /// Seconds since the file was started.
    package var elapsed: Double
    /// Seconds still to go, shown only with a ``fraction``.
    package var eta: Double?

    /// The fields that can be left out, in the order they go when the line is
    /// too wide (the bar goes before all of them).
    package enum Field: Sendable, CaseIterable {
        case received, ratio, bytesOut, elapsed, counter, name, eta, speed, bytesIn
    }

    /// The order in which fields are dropped to fit the width. The bytes
    /// read go first, and alone they do not take the bar away (a line that
    /// showed it without them keeps it).
    package static let dropOrder: [Field] = [
        .received, .ratio, .bytesOut, .elapsed, .counter, .name, .eta, .speed, .bytesIn,
    ]
    /// The narrowest bar worth drawing (brackets excluded).
    package static let minimumBar = 8
    /// The widest bar drawn (brackets excluded), so that wide terminals keep it compact.
    package static let maximumBar = 50
    /// The file name is first shortened to this many columns, or a third of the width if more.
    package static let shortName = 12

    /// Moves to the start of the line and erases it: what a renderer writes
    /// to take the line away (at the end, before a message, on errors and signals).
    package static let clear = "\r\u{1B}[K"

    /// What a renderer writes to replace the line on screen with `line`.
    package static func redraw(_ line: String) -> String {
        "\r" + line + "\u{1B}[K"
    }

    /// Creates a line state.
    package init(counter: String? = nil, name: String? = nil, fraction: Double? = nil, bytesIn: Int,
                bytesOut: Int? = nil, ratio: Double? = nil, received: Int? = nil, speed: Double? = nil,
                elapsed: Double, eta: Double? = nil) {
        self.received = received
        self.counter = counter
        self.name = name
        self.fraction = fraction
        self.bytesIn = bytesIn
        self.bytesOut = bytesOut
        self.ratio = ratio
        self.speed = speed
        self.elapsed = elapsed
        self.eta = eta
    }

    private enum Slot: Equatable {
        case field(Field)
        case percent
    }

    private struct Segment {
        var slot: Slot
        var text: String
    }

    /// The line, at most `width - 1` columns wide (one column per character).
    package func text(width: Int) -> String {
        let usable = max(1, width - 1)
        var segments = self.segments()
        // A long name is shortened to a fair share of the width at once.
        shortenName(in: &segments, to: max(Self.shortName, usable / 3))
        var drops = Self.dropOrder[...]
        if fraction == nil { drops = drops.dropLast() }  // the bytes read lead a line without total
        let droppable = drops.count
        while Self.length(segments) > usable {
            let excess = Self.length(segments) - usable
            // Before the name goes, it is shortened as far as `shortName`.
            if drops.first == .name, let index = segments.firstIndex(where: { $0.slot == .field(.name) }),
               segments[index].text.count > Self.shortName {
                shortenName(in: &segments, to: max(Self.shortName, segments[index].text.count - excess))
                continue
            }
            guard let field = drops.popFirst() else { break }
            segments.removeAll { $0.slot == .field(field) }
        }
        var line = segments.map(\.text).joined(separator: " ")
        // The bar comes last: only when every field fits, in the room left.
        let barFits = drops.count == droppable || (drops.count == droppable - 1 && received != nil)
        if let fraction, barFits, let index = segments.firstIndex(where: { $0.slot == .percent }) {
            let room = usable - line.count - 1 - 2  // a space and the brackets
            if room >= Self.minimumBar {
                var withBar = segments.map(\.text)
                withBar.insert(Self.bar(fraction, width: min(room, Self.maximumBar)), at: index + 1)
                line = withBar.joined(separator: " ")
            }
        }
        if line.count > usable { line = String(line.prefix(usable)) }
        return line
    }

    /// `[======>    ]` with `width` columns between the brackets.
    package static func bar(_ fraction: Double, width: Int) -> String {
        let clamped = min(1, max(0, fraction.isFinite ? fraction : 0))
        let filled = min(width, Int(clamped * Double(width)))
        if filled == width { return "[" + String(repeating: "=", count: width) + "]" }
        return "[" + String(repeating: "=", count: filled) + ">" + String(repeating: " ", count: width - filled - 1)
            + "]"
    }

    private func segments() -> [Segment] {
        var segments: [Segment] = []
        if let counter { segments.append(Segment(slot: .field(.counter), text: counter)) }
        if let name { segments.append(Segment(slot: .field(.name), text: name)) }
        if let fraction {
            let percent = Int(min(1, max(0, fraction)) * 100)
            segments.append(Segment(slot: .percent, text: Self.pad("\(percent)%", 4)))
        }
        segments.append(Segment(slot: .field(.bytesIn), text: Self.pad(ByteFormat.string(bytesIn), 10)))
        if let bytesOut {
            segments.append(Segment(slot: .field(.bytesOut), text: "=> " + Self.pad(ByteFormat.string(bytesOut), 10)))
        }
        if let ratio {
            segments.append(Segment(slot: .field(.ratio), text: Self.pad(CFormat.string("(%.2f%%)", ratio * 100), 9)))
        }
        if let received {
            segments.append(Segment(slot: .field(.received), text: "read " + Self.pad(ByteFormat.string(received), 10)))
        }
        segments.append(Segment(slot: .field(.speed),
                                text: Self.pad(speed.map(ByteFormat.speed) ?? "- B/s", 12)))
        segments.append(Segment(slot: .field(.elapsed), text: ClockFormat.string(elapsed)))
        if fraction != nil {
            segments.append(Segment(slot: .field(.eta), text: "ETA " + (eta.map(ClockFormat.string) ?? "--:--")))
        }
        return segments
    }

    private func shortenName(in segments: inout [Segment], to limit: Int) {
        guard let index = segments.firstIndex(where: { $0.slot == .field(.name) }),
              segments[index].text.count > limit else { return }
        segments[index].text = "..." + segments[index].text.suffix(max(1, limit - 3))
    }

    private static func length(_ segments: [Segment]) -> Int {
        segments.reduce(0) { $0 + $1.text.count } + max(0, segments.count - 1)
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
}
