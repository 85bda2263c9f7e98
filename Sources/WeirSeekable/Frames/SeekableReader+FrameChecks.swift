import WeirFormats
import WeirPipeline
import WeirSystem

/// What a decoded frame is checked against: its seek-table entry, its
/// header and its checksum (docs/decompression.md: a reader checks every
/// frame it decodes, and what the headers and sizes alone rule out).
extension SeekableReader {
    /// The error for `frame`, listed as `listed` bytes, that failed to decode
    /// with `error`: when its size is the table's alone (its header, read
    /// now when it was taken unread, `declared` none), the frame is
    /// measured first, and a size other than the table's is the error (its
    /// content did not fit, or fell short); else `error`, naming the frame.
    func failure(of frame: FrameListing.Frame, listed: Int, _ error: WeirError,
                         declared: Bool) -> WeirError {
        let located = DecodeSession.located(error, index: frame.index, offset: frame.offset)
        guard frame.sizeFromTableOnly, !declared else { return located }
        do throws(WeirError) {
            let measured = try FrameMeasure.contentSizes(of: [frame], in: file, options: options,
                                                         dictionary: dictionary)
            if let decoded = measured.first, decoded != listed {
                return tableMismatch(frame, listed: listed, decoded: decoded)
            }
            return located
        } catch {
            return error
        }
    }

    /// Checks the first bytes of `frame` (its header, and more) against its
    /// seek table entry, which lists `listed` bytes of content, when the
    /// frame was taken from the table unread (``FrameListing/Frame/headerUnread``):
    /// a zstd frame must start there, declaring the entry's content size or
    /// none. This is what opening the file no longer reads, checked for the
    /// frames a read decodes, before any of their content goes out.
    ///
    /// - Returns: the header, for a frame taken unread; nil for one whose
    ///   header was checked when the file was opened.
    /// - Throws: `WeirError` `.corrupt` (a corrupt seek table), naming the frame and its offset.
    func checkHeader(of frame: FrameListing.Frame, listed: Int,
                             head: UnsafeRawBufferPointer) throws(WeirError) -> FrameHeader? {
        guard frame.headerUnread else { return nil }
        guard let header = FrameHeader(startOf: head) else {
            throw WeirError.corruptSeekTable(
                path: path, operation: .decompress,
                "frame \(frame.index) at offset \(frame.offset) does not start with a zstd frame header, "
                    + "but its seek table entry lists \(listed) bytes of content")
        }
        if let declared = header.contentSize, declared != UInt64(listed) {
            throw WeirError.corruptSeekTable(
                path: path, operation: .decompress,
                "frame \(frame.index) at offset \(frame.offset) declares \(declared) bytes of content, "
                    + "but its seek table entry lists \(listed)")
        }
        return header
    }

    /// Checks the checksum `frame` ends with (`stored`, its last 4 bytes)
    /// against its seek table entry's, when the frame was taken from the
    /// table unread and checksums are verified (`--no-check` checks neither).
    ///
    /// - Throws: `WeirError` `.corrupt` (a corrupt seek table), naming the frame and its offset.
    func checkChecksum(of frame: FrameListing.Frame, stored: UnsafeRawBufferPointer) throws(WeirError) {
        guard frame.headerUnread, options.verifyChecksum, let listed = frame.checksum, stored.count == 4 else { return }
        let value = stored.loadUnaligned(as: UInt32.self).littleEndian
        guard value != listed else { return }
        throw WeirError.corruptSeekTable(
            path: path, operation: .decompress,
            "frame \(frame.index) at offset \(frame.offset) ends with the checksum \(FrameScanner.hex(value)), "
                + "but its seek table entry lists \(FrameScanner.hex(listed))")
    }

    /// `frame` decoded to `decoded` bytes where its index (its seek table
    /// entry; a header's size is checked by libzstd) lists `listed`.
    package func tableMismatch(_ frame: FrameListing.Frame, listed: Int, decoded: Int) -> WeirError {
        WeirError.indexMismatch(path: path, operation: .decompress, frame: frame.index, offset: frame.offset,
                                decoded: decoded, listed: listed,
                                source: frame.sizeFromTableOnly ? "its seek table entry lists" : "its index lists")
    }
}
