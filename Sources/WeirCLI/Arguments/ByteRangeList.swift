import Weir

/// `--range=LIST`: byte ranges of the decompressed content, comma-separated,
/// each `START:END` (END excluded), `START:+LENGTH`, `START:` (to the end) or
/// `:END` (from the start). Numbers take weir's size suffixes: `K`, `M`, `G`,
/// `T` (also `KB`, `KiB`…: powers of 1024), so `--range=1G:+1M` is the
/// mebibyte at one gibibyte.
package struct ByteRangeList: Equatable, Sendable {
    /// The ranges, in the order given (an `end` of nil: the end of the content).
    package var items: [RangeExtraction.Range]

    /// The ranges of `text`; nil when it is not a valid list (an end before
    /// its start, an unknown suffix, a number past 63 bits).
    package init?(_ text: String) {
        var items: [RangeExtraction.Range] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let colon = part.firstIndex(of: ":") else { return nil }
            let startText = part[..<colon], endText = part[part.index(after: colon)...]
            let start: Int
            if startText.isEmpty { start = 0 } else {
                guard let value = Self.size(startText) else { return nil }
                start = value
            }
            var end: Int?
            if endText.hasPrefix("+") {
                guard let length = Self.size(endText.dropFirst()) else { return nil }
                let (sum, overflow) = start.addingReportingOverflow(length)
                guard !overflow else { return nil }
                end = sum
            } else if !endText.isEmpty {
                guard let value = Self.size(endText), value >= start else { return nil }
                end = value
            }
            items.append(RangeExtraction.Range(start: start, end: end))
        }
        guard !items.isEmpty else { return nil }
        self.items = items
    }

    /// The ranges over content of `size` bytes (an open end is `size`).
    package func ranges(size: Int) -> [Range<Int>] {
        items.map { $0.start ..< max($0.start, $0.end ?? size) }
    }

    /// Whether each range starts at or after the end of the one before: what
    /// one pass over a stream can serve.
    package var isAscending: Bool {
        zip(items, items.dropFirst()).allSatisfy { previous, next in
            guard let end = previous.end else { return false }
            return next.start >= end
        }
    }

    /// A size: digits, then an optional suffix.
    static func size(_ text: Substring) -> Int? {
        let digits = text.prefix(while: { $0.isASCII && $0.isNumber })
        guard !digits.isEmpty, let value = Int(digits) else { return nil }
        let shift: Int
        switch text.dropFirst(digits.count).lowercased() {
        case "", "b": shift = 0
        case "k", "kb", "kib": shift = 10
        case "m", "mb", "mib": shift = 20
        case "g", "gb", "gib": shift = 30
        case "t", "tb", "tib": shift = 40
        default: return nil
        }
        let (bytes, overflow) = value.multipliedReportingOverflow(by: 1 << shift)
        return overflow ? nil : bytes
    }
}
