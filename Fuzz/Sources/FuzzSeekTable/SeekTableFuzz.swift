import FuzzSupport
@testable import Weir
@testable import WeirFormats
@testable import WeirSystem

// The seek table parser on arbitrary tails of files, and the check of a
// table against the frames a scanner finds (``SeekTableCheck``).
//
// Input: the whole file (an in-memory file, read with `pread` as weir reads
// a real one). Properties:
// - no footer magic in the last 4 bytes (or fewer than 9 bytes): no table;
// - a table read is the file's last `encodedSize` bytes: encoding it again
//   gives them back (but for the descriptor's two unused bits), its frames
//   tile the bytes from `dataStart` to the table, and `read` returns the
//   same table when `dataStart` ≥ 0 and refuses it as corrupt otherwise;
// - `SeekTable.entriesAtEnd` and `atEnd` (the index's reads, through
//   `SeekTable.decode`) throw the same error for a table they cannot read;
// - the check against the scanned frames names an entry the table has.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSeekTable(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    let file = MemoryFile(bytes)
    let count = bytes.count
    let hasFooterMagic = count >= SeekTable.footerSize && littleEndian32(bytes, at: count - 4) == SeekTable.footerMagic

    var table: SeekTable?
    var readError: WeirError?
    do throws(WeirError) {
        table = try SeekTable.entriesAtEnd(of: Descriptor(file.fd, path: "fuzz"), fileSize: count)
    } catch {
        readError = error
    }
    let strict: Result<SeekTable?, WeirError>
    do throws(WeirError) {
        strict = .success(try SeekTable.atEnd(of: Descriptor(file.fd, path: "fuzz"), fileSize: count))
    } catch {
        strict = .failure(error)
    }

    if let readError {
        require(hasFooterMagic, "an error without the footer magic: \(readError)")
        require(readError.kind == .corrupt, "a table error of kind \(readError.kind): \(readError)")
        require(strict == .failure(readError), "read() and readEntries() disagree: \(strict) vs \(readError)")
    } else if let table {
        require(hasFooterMagic, "a table without the footer magic")
        checkTable(table, bytes: bytes)
        if table.dataStart >= 0 {
            require(strict == .success(table), "read() gave \(strict) for a table starting at \(table.dataStart)")
        } else if case .failure(let error) = strict {
            require(error.kind == .corrupt, "a table before the file's start refused as \(error.kind)")
        } else {
            require(false, "read() accepted a table starting at \(table.dataStart)")
        }
    } else {
        require(!hasFooterMagic, "the footer magic, but no table and no error")
        require(strict == .success(nil), "read() gave \(strict) where readEntries() found no table")
    }

    checkAgainstFrames(table: table, readError: readError, bytes: bytes)
    return 0
}

/// A table read from `bytes` is their last `encodedSize` bytes.
func checkTable(_ table: SeekTable, bytes: UnsafeRawBufferPointer) {
    let count = bytes.count
    require(table.encodedSize <= count, "a table of \(table.encodedSize) bytes in a \(count)-byte file")
    require(table.tableOffset == count - table.encodedSize,
            "table at \(table.tableOffset), but its \(table.encodedSize) bytes start at \(count - table.encodedSize)")
    var tail = Array(bytes[(count - table.encodedSize)...])
    tail[tail.count - 5] &= 0xFC  // descriptor bits 0–1: unused, written as 0
    require(table.encoded() == tail, "the table does not encode back to the bytes it was read from")
    var offset = table.dataStart
    var content = 0
    for entry in table.entries {
        offset += Int(entry.compressedSize)
        content += Int(entry.decompressedSize)
    }
    require(offset == table.tableOffset, "the table's frames end at \(offset), the table starts at \(table.tableOffset)")
    require(content == table.decompressedTotal, "content \(content), decompressedTotal \(table.decompressedTotal)")
}

/// Runs the file's frames through ``SeekTableCheck`` as the decoder and `-l` do.
func checkAgainstFrames(table: SeekTable?, readError: WeirError?, bytes: UnsafeRawBufferPointer) {
    var check = SeekTableCheck(table: table, readError: readError, fileSize: bytes.count)
    var scanner = FrameScanner(path: "fuzz")
    var complete = false
    do throws(WeirError) {
        for frame in try scanner.feed(bytes) {
            if let expected = check.frameFound(frame) {
                let entries = table?.entries.count ?? 0
                require(expected.entry >= 0 && expected.entry < entries, "expectation for entry \(expected.entry) of \(entries)")
                require(frame.header.contentSize == nil, "an expectation for a frame that declares its size")
            }
        }
        try scanner.finish()
        complete = true
    } catch {
        // A stream that is not zstd throughout: the check only sees the frames before the damage.
    }
    if complete { check.finish() }
    if let mismatch = check.mismatch, let entry = mismatch.entry {
        let entries = table?.entries.count ?? 0
        require(entry >= 0 && entry < entries, "mismatch names entry \(entry) of \(entries): \(mismatch.detail)")
    }
    if table == nil, let mismatch = check.mismatch {
        require(mismatch.entry == nil, "a mismatch naming entry \(mismatch.entry!) without a table")
    }
}

/// The little-endian u32 at `offset`.
func littleEndian32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
    (0 ..< 4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * UInt32($1)) }
}
