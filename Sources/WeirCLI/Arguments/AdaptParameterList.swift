/// `--adapt=LIST`, read as zstd 1.5.4 reads it (`parseAdaptParameters`):
/// `min=N` and `max=N`, comma-separated, in any order and repeatable (the
/// last wins), N a number as zstd reads one (no digits: 0; `K`, `M`) after
/// an optional `-`;
/// nothing else, nothing after, and min not above max.
package enum AdaptParameterList {
    /// The range `list` sets over `range` (zstd's defaults: the lowest and
    /// the highest level); nil when it is not valid.
    package static func parse(_ list: String, over range: ClosedRange<Int>) -> ClosedRange<Int>? {
        var lowest = range.lowerBound, highest = range.upperBound
        var rest = Substring(list)
        while true {
            let isMin = rest.hasPrefix("min=")
            guard isMin || rest.hasPrefix("max=") else { return nil }
            rest = rest.dropFirst(4)
            let negative = rest.hasPrefix("-")
            if negative { rest = rest.dropFirst() }
            // zstd's readIntFromChar: an unsigned 32-bit number (K and M
            // suffixes too), an error beyond it, taken as an int.
            guard let magnitude = TrainingParameterList.number(&rest) else { return nil }
            let value = (negative ? -1 : 1) * Int(Int32(truncatingIfNeeded: magnitude))
            if isMin { lowest = value } else { highest = value }
            guard rest.hasPrefix(",") else { break }
            rest = rest.dropFirst()
        }
        guard rest.isEmpty, lowest <= highest else { return nil }
        return lowest...highest
    }
}
