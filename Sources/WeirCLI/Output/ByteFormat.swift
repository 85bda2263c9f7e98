/// Byte counts in binary units: `512 B`, `1.50 KiB`, `191.5 MiB`, `1.27 GiB`.
///
/// Three significant figures: two decimals below 100 of a unit, one above.
package enum ByteFormat {
    /// `bytes` in the largest binary unit (B, KiB, MiB, GiB, TiB) that keeps
    /// the number at 1 or more.
    package static func string(_ bytes: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        // 1023.96 KiB would print as "1024.0 KiB": it goes up a unit too.
        while unit < units.count - 1 && (value >= 1024 || (unit > 0 && value >= 1023.95)) {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) B" }
        return CFormat.string(value >= 100 ? "%.1f " : "%.2f ", value) + units[unit]
    }

    /// A speed in bytes per second, as `890 MiB/s` (see ``string(_:)``).
    package static func speed(_ bytesPerSecond: Double) -> String {
        string(Int(max(0, bytesPerSecond).rounded())) + "/s"
    }
}
