#if canImport(Glibc)
import Glibc
#endif
import Weir
import WeirCLI

/// `weir -l FILE...`: the table `zstd -l` prints, on stdout, with the same
/// columns and size format; `-v` adds one row per frame under each file.
struct ListReport {
    let files: [String]
    let verbose: Bool
    let console: Console

    /// Lists every file; returns the exit status (1 if any failed).
    func run() -> Int32 {
        if files.isEmpty || files.contains("-") {
            console.error("--list does not support reading from standard input")
            return 1
        }
        var failed = false
        var listed: [FrameListing] = []
        print("Frames  Skips  Compressed  Uncompressed  Ratio  Check  Filename")
        for file in files {
            do throws(WeirError) {
                let listing = try FrameListing.read(path: file)
                for warning in listing.warnings { console.warning(warning, file: file) }
                listed.append(listing)
                print(Self.row(frames: listing.frames.count, skips: listing.skippableFrameCount,
                               compressed: listing.fileSize, decompressed: listing.decompressedSize,
                               check: listing.hasChecksum ? "XXH64" : "None", name: FileName.displayed(file)))
                if verbose { printFrames(listing) }
            } catch {
                failed = true
                console.error(error.description)
            }
        }
        if listed.count > 1 {
            print("----------------------------------------------------------------- ")
            var total: Int? = 0
            for listing in listed {
                if let size = listing.decompressedSize, let sum = total { total = sum + size } else { total = nil }
            }
            print(Self.row(frames: listed.reduce(0) { $0 + $1.frames.count },
                           skips: listed.reduce(0) { $0 + $1.skippableFrameCount },
                           compressed: listed.reduce(0) { $0 + $1.fileSize }, decompressed: total,
                           check: listed.allSatisfy(\.hasChecksum) ? "XXH64"
                               : listed.allSatisfy({ !$0.hasChecksum }) ? "None" : "",  // mixed: blank, as zstd
                           name: "\(listed.count) files"))
        }
        fflush(nil)
        return failed ? 1 : 0
    }

    /// One line in zstd's format: `%6d  %5d  %6.*f%4s  %8.*f%4s  %5.3f  %5s  %s`.
    static func row(frames: Int, skips: Int, compressed: Int, decompressed: Int?, check checkName: String,
                    name: String) -> String {
        let packed = human(compressed)
        let head = CFormat.string("%6d  %5d  %6.*f", frames, skips, packed.precision, packed.value) + pad(packed.suffix, 4)
        guard let decompressed else {
            return head + "                       " + pad(checkName, 5) + "  " + name
        }
        let unpacked = human(decompressed)
        let ratio = compressed == 0 ? 0 : Double(decompressed) / Double(compressed)
        return head + CFormat.string("  %8.*f", unpacked.precision, unpacked.value) + pad(unpacked.suffix, 4)
            + CFormat.string("  %5.3f  ", ratio)
            + pad(checkName, 5) + "  " + name
    }

    /// The frame rows under a file (`-v`).
    private func printFrames(_ listing: FrameListing) {
        print("  Frame        Offset  Compressed  Uncompressed  Check     Kind\(listing.fromSeekTable ? "  (from the seek table)" : "")")
        for frame in listing.frames {
            let kind = frame.isSkippable
                ? (frame.offset + frame.compressedSize == listing.fileSize && listing.fromSeekTable ? "seek table" : "skippable")
                : "zstd"
            let size = frame.decompressedSize.map(String.init) ?? "?"
            let check = frame.checksum.map { CFormat.string("%08x", $0) } ?? (frame.hasChecksum ? "XXH64" : "-")
            print(CFormat.string("  %5d  %12d  %10d  ", frame.index, frame.offset, frame.compressedSize)
                + Self.pad(size, 12) + "  " + check + String(repeating: " ", count: max(0, 8 - check.count)) + "  " + kind)
        }
    }

    /// zstd's `UTIL_makeHumanReadableSize`.
    static func human(_ size: Int) -> (value: Double, suffix: String, precision: Int32) {
        let units: [(Int, String)] = [(60, " EiB"), (50, " PiB"), (40, " TiB"), (30, " GiB"), (20, " MiB"), (10, " KiB")]
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
