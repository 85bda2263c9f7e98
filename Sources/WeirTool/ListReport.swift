import Glibc
import Weir
import WeirCLI

/// `weir -l FILE...`: the table `zstd -l` prints, on stdout, with the same
/// columns and size format; with `-v`, zstd's block per file (`zstd -lv`)
/// followed by weir's rows of one frame each; with `-vv`, the block's sizes
/// in bytes, as zstd's. A file that is not zstd (.gz, .xz, .lz4, data
/// after the frames) gets zstd's line on stdout, and the exit status 1.
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
        if !verbose { print(ListTable.header) }
        for file in files {
            do throws(WeirError) {
                let listing = try FrameListing.read(path: file, windowShown: verbose)
                for warning in listing.warnings { console.warning(warning, file: file) }
                noteUnchecked(listing, file: file)
                listed.append(listing)
                if verbose {
                    printBlock(listing, name: FileName.displayed(file))
                } else {
                    print(ListTable.row(frames: listing.frames.count, skips: listing.skippableFrameCount,
                                        compressed: listing.fileSize, decompressed: listing.decompressedSize,
                                        check: listing.hasChecksum ? "XXH64" : "None", name: FileName.displayed(file)))
                }
            } catch where error.kind == .notZstd {
                // zstd's words, on stdout: another format, or data after the frames.
                failed = true
                print("File \"\(FileName.displayed(file))\" not compressed by zstd ")
                if verbose { print() }
            } catch {
                failed = true
                console.error(CommandHint.message(for: error))
            }
        }
        // zstd totals whenever several files are named, listed or not.
        if files.count > 1 && !verbose {
            print(ListTable.separator)
            var total: Int? = 0
            for listing in listed {
                if let size = listing.decompressedSize, let sum = total { total = sum + size } else { total = nil }
            }
            print(ListTable.row(frames: listed.reduce(0) { $0 + $1.frames.count },
                           skips: listed.reduce(0) { $0 + $1.skippableFrameCount },
                           compressed: listed.reduce(0) { $0 + $1.fileSize }, decompressed: total,
                           check: listed.allSatisfy(\.hasChecksum) ? "XXH64" : "",  // else blank, as zstd
                           name: "\(listed.count) files"))
        }
        fflush(nil)
        return failed ? 1 : 0
    }

    /// Says which sizes the listing could not check: those of frames whose
    /// headers declare none, which only the seek table gives (checked
    /// against the headers and stored checksums, not against the content;
    /// `-t` decodes them). Hidden by -q.
    private func noteUnchecked(_ listing: FrameListing, file: String) {
        let unchecked = listing.tableOnlySizes.count
        guard unchecked > 0, console.quietness == 0 else { return }
        if listing.frames.contains(where: \.headerUnread) {
            // Over HTTP the seek table is taken as it stands: a frame header checked is a request.
            console.write("weir: \(FileName.displayed(file)): note: read over HTTP, the listing is the seek table's, "
                          + "not checked against the frames' headers; weir -t decodes them to check\n")
            return
        }
        let frames = unchecked == 1 ? "1 frame" : "\(unchecked) frames"
        console.write("weir: \(FileName.displayed(file)): note: the content sizes of \(frames) come from the seek "
                      + "table alone (their headers declare none) and are not checked by -l; "
                      + "weir -t decodes them to check\n")
    }

    /// zstd's block for a file, then weir's frame rows and an empty line (`-v`).
    private func printBlock(_ listing: FrameListing, name: String) {
        let zstd = listing.frames.filter { !$0.isSkippable }
        let dictionaries = Set(zstd.map(\.dictionaryID))
        print(
            ListTable.verboseBlock(
                name: name, frames: zstd.count, skips: listing.skippableFrameCount,
                dictionaryID: (dictionaries.count == 1 ? dictionaries.first : nil) ?? 0,
                windowSize: Int(clamping: zstd.last?.windowSize ?? 0), compressed: listing.fileSize,
                decompressed: listing.decompressedSize,
                check: listing.hasChecksum ? "XXH64" : "None",
                checksum: zstd.count == 1 ? zstd[0].checksum : nil,
                exact: console.verbosity > 1), terminator: "")
        printFrames(listing)
        print()
    }

    /// The frame rows under a file (`-v`).
    private func printFrames(_ listing: FrameListing) {
        print(ListTable.frameHeader(fromSeekTable: listing.fromSeekTable))
        for frame in listing.frames {
            let kind = frame.isSkippable
                ? (frame.offset + frame.compressedSize == listing.fileSize && listing.fromSeekTable
                    ? "seek table" : "skippable")
                : "zstd"
            let check = frame.checksum.map { CFormat.string("%08x", $0) } ?? (frame.hasChecksum ? "XXH64" : "-")
            print(ListTable.frameRow(index: frame.index, offset: frame.offset, compressed: frame.compressedSize,
                                     decompressed: frame.decompressedSize, check: check, kind: kind))
        }
    }
}
