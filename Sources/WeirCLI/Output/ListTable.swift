/// The table `weir -l` prints, in `zstd -l`'s format to the character:
/// the same columns, sizes in zstd's human-readable form, the same totals
/// line; and, with `-v`, weir's own rows of one frame each.
package enum ListTable {
    /// The header line.
    package static let header = "Frames  Skips  Compressed  Uncompressed  Ratio  Check  Filename"
    /// The line above the totals of several files (with zstd's trailing space).
    package static let separator = "----------------------------------------------------------------- "

    /// One line in zstd's format: `%6d  %5d  %6.*f%4s  %8.*f%4s  %5.3f  %5s  %s`.
    package static func row(frames: Int, skips: Int, compressed: Int, decompressed: Int?, check checkName: String,
                    name: String) -> String {
        let packed = human(compressed)
        let head =
            CFormat.string("%6d  %5d  %6.*f", frames, skips, packed.precision, packed.value) + pad(packed.suffix, 4)
        guard let decompressed else {
            return head + "                       " + pad(checkName, 5) + "  " + name
        }
        let unpacked = human(decompressed)
        let ratio = compressed == 0 ? 0 : Double(decompressed) / Double(compressed)
        return head + CFormat.string("  %8.*f", unpacked.precision, unpacked.value) + pad(unpacked.suffix, 4)
            + CFormat.string("  %5.3f  ", ratio)
            + pad(checkName, 5) + "  " + name
    }

    /// The block `zstd -lv` prints for one file, in its words, ending with
    /// an empty line: frames, skippable frames (when any), the dictionary
    /// ID (0 when frames differ), the window, the sizes and ratio (the
    /// decompressed size when every frame declares it), the check (with its
    /// value when there is one frame). With `exact` (zstd's `-vv`), sizes
    /// in bytes, unscaled (`8388608 B (8388608 B)`), as zstd shows them
    /// above its default verbosity, up to 2^53 (a double's whole numbers).
    package static func verboseBlock(name: String, frames: Int, skips: Int, dictionaryID: UInt32, windowSize: Int,
                                     compressed: Int, decompressed: Int?, check: String, checksum: UInt32?,
                                     exact: Bool = false) -> String {
        func sized(_ size: Int) -> String {
            if exact && size < 1 << 53 { return "\(size) B (\(size) B)" }
            let human = human(size)
            return CFormat.string("%.*f", human.precision, human.value) + human.suffix + " (\(size) B)"
        }
        var lines = ["\(name) ", "# Zstandard Frames: \(frames)"]
        if skips > 0 { lines.append("# Skippable Frames: \(skips)") }
        lines += [
            "DictID: \(dictionaryID)", "Window Size: " + sized(windowSize), "Compressed Size: " + sized(compressed),
        ]
        if let decompressed {
            lines.append("Decompressed Size: " + sized(decompressed))
            lines.append(CFormat.string("Ratio: %.4f", compressed == 0 ? 0 : Double(decompressed) / Double(compressed)))
        }
        lines.append("Check: " + check + (checksum.map { CFormat.string(" %08x", $0) } ?? ""))
        return lines.joined(separator: "\n") + "\n"
    }

    /// The header of the frame rows under a file (`-v`).
    package static func frameHeader(fromSeekTable: Bool) -> String {
        "  Frame        Offset  Compressed  Uncompressed  Check     Kind"
            + (fromSeekTable ? "  (from the seek table)" : "")
    }

    /// One frame's row: its sizes in bytes, `?` for a size it does not declare.
    package static func frameRow(index: Int, offset: Int, compressed: Int, decompressed: Int?, check: String,
                                kind: String) -> String {
        let size = decompressed.map(String.init) ?? "?"
        return CFormat.string("  %5d  %12d  %10d  ", index, offset, compressed)
            + pad(size, 12) + "  " + check + String(repeating: " ", count: max(0, 8 - check.count)) + "  " + kind
    }

    /// zstd's `UTIL_makeHumanReadableSize`.
    package static func human(_ size: Int) -> (value: Double, suffix: String, precision: Int32) {
        let units: [(Int, String)] = [
            (60, " EiB"), (50, " PiB"), (40, " TiB"), (30, " GiB"), (20, " MiB"), (10, " KiB"),
        ]
        var value = Double(size)
        var suffix = " B"
        for (shift, name) in units where size >= 1 << shift {
            value = Double(size) / Double(1 << shift)
            suffix = name
            break
        }
        let precision: Int32
        if value >= 100 || UInt64(value) == UInt64(size) {
            precision = 0
        } else if value >= 10 {
            precision = 1
        } else if value > 1 {
            precision = 2
        } else {
            precision = 3
        }
        return (value, suffix, precision)
    }

    /// `%5s`: right-aligned in `width`.
    private static func pad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
