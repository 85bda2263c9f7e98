import Glibc
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
        print(ListTable.header)
        for file in files {
            do throws(WeirError) {
                let listing = try FrameListing.read(path: file)
                for warning in listing.warnings { console.warning(warning, file: file) }
                listed.append(listing)
                print(ListTable.row(frames: listing.frames.count, skips: listing.skippableFrameCount,
                               compressed: listing.fileSize, decompressed: listing.decompressedSize,
                               check: listing.hasChecksum ? "XXH64" : "None", name: FileName.displayed(file)))
                if verbose { printFrames(listing) }
            } catch {
                failed = true
                console.error(CommandHint.message(for: error))
            }
        }
        if listed.count > 1 {
            print(ListTable.separator)
            var total: Int? = 0
            for listing in listed {
                if let size = listing.decompressedSize, let sum = total { total = sum + size } else { total = nil }
            }
            print(ListTable.row(frames: listed.reduce(0) { $0 + $1.frames.count },
                           skips: listed.reduce(0) { $0 + $1.skippableFrameCount },
                           compressed: listed.reduce(0) { $0 + $1.fileSize }, decompressed: total,
                           check: listed.allSatisfy(\.hasChecksum) ? "XXH64"
                               : listed.allSatisfy({ !$0.hasChecksum }) ? "None" : "",  // mixed: blank, as zstd
                           name: "\(listed.count) files"))
        }
        fflush(nil)
        return failed ? 1 : 0
    }

    /// The frame rows under a file (`-v`).
    private func printFrames(_ listing: FrameListing) {
        print(ListTable.frameHeader(fromSeekTable: listing.fromSeekTable))
        for frame in listing.frames {
            let kind = frame.isSkippable
                ? (frame.offset + frame.compressedSize == listing.fileSize && listing.fromSeekTable ? "seek table" : "skippable")
                : "zstd"
            let check = frame.checksum.map { CFormat.string("%08x", $0) } ?? (frame.hasChecksum ? "XXH64" : "-")
            print(ListTable.frameRow(index: frame.index, offset: frame.offset, compressed: frame.compressedSize,
                                     decompressed: frame.decompressedSize, check: check, kind: kind))
        }
    }
}
