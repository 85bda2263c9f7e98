import FuzzSupport
@testable import Weir
@testable import WeirFormats
@testable import WeirSeekable
@testable import WeirSystem

// The list (-l) path: ``FrameListing/read(path:)`` on an arbitrary file,
// through its seek table when one describes the file, else by scanning.
//
// Input: the whole file (an in-memory file opened by path). Properties:
// - a listing's frames tile the file from offset 0 to its end, numbered
//   from 0; skippable frames list no content and no checksum; its totals
//   (content size, counts) are computed without trapping;
// - a listing made by scanning has exactly the frames a ``FrameScanner``
//   finds; one made from a seek table has the table's frames, then the table;
// - a file the listing refuses is refused with a format error.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzList(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    let file = MemoryFile(bytes)
    let listing: FrameListing
    do throws(WeirError) {
        listing = try FrameListing.read(path: file.path)
    } catch {
        require([WeirError.Kind.notZstd, .truncated, .corrupt].contains(error.kind), "listing refused with \(error.kind): \(error)")
        return 0
    }

    require(listing.fileSize == bytes.count, "file size \(listing.fileSize), \(bytes.count) bytes")
    var offset = 0
    for (index, frame) in listing.frames.enumerated() {
        require(frame.index == index && frame.offset == offset, "frame \(index) misplaced: \(frame)")
        require(frame.compressedSize > 0, "frame \(index) is empty")
        if frame.isSkippable {
            require(frame.decompressedSize == 0 && frame.checksum == nil && !frame.hasChecksum,
                    "skippable frame \(index) with content: \(frame)")
        } else if let content = frame.decompressedSize {
            require(content >= 0, "frame \(index) lists \(content) bytes of content")
        }
        if frame.checksum != nil { require(frame.hasChecksum, "frame \(index): a checksum it does not have") }
        offset += frame.compressedSize
    }
    require(offset == bytes.count, "the frames end at \(offset), the file at \(bytes.count)")
    require(listing.zstdFrameCount + listing.skippableFrameCount == listing.frames.count, "frame counts")
    _ = listing.decompressedSize
    _ = listing.hasChecksum

    if listing.fromSeekTable {
        require(listing.frames.last?.isSkippable == true, "a listing from a seek table that does not end with it")
        require(listing.warnings.isEmpty, "warnings on a listing from its seek table: \(listing.warnings)")
    } else {
        var scanner = FrameScanner(path: "fuzz")
        var frames: [FrameBoundary] = []
        do throws(WeirError) {
            frames = try scanner.feed(bytes)
            try scanner.finish()
        } catch {
            require(false, "listed by scanning, but the scanner refuses the file: \(error)")
        }
        require(frames.map(\.offset) == listing.frames.map(\.offset)
                    && frames.map(\.compressedSize) == listing.frames.map(\.compressedSize),
                "the listing's frames are not the scanner's")
    }
    return 0
}
