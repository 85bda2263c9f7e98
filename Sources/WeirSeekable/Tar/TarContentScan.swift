import Dispatch
import Glibc
import WeirFormats
import WeirPipeline
import WeirSystem
import WeirTar

/// `weir --index` on a `.tar.zst` another tool wrote: decodes the file's
/// content once, in order, and hands it to a ``TarScanner``, for the member
/// index appended with the seek table (docs/members.md).
///
/// Memory: one read buffer and one decoded buffer, walked as it fills: the
/// content is never held whole. Decoding stops at the first block when the content does not
/// start as a tar.
package enum TarContentScan {
    /// Bytes of the file read at a time.
    static let inputSize = 1 << 20
    /// Bytes of content decoded into each buffer handed to the scanner.
    static let outputSize = 4 << 20

    /// The member index of the content of `file` (zstd and skippable
    /// frames, its first `end` bytes decoded), compressed at `level`; nil
    /// when the content is not a whole tar. Without `wholeFile`, only
    /// whether it starts as one: an empty frame when it does, after its
    /// first buffer. `observer`, if any, is told the file's bytes decoded
    /// and the content's bytes made, as a decompression's.
    ///
    /// - Throws: `WeirError` when the file cannot be read or does not
    ///   decode (corrupt, a checksum that fails).
    ///
    /// With `cursor` (the file's one frame, from its start), the content
    /// is decoded by it, block after block, and `recorder` gets a
    /// checkpoint of it at intervals (the mount's, ``FrameCheckpoints``);
    /// its checksum is checked by the cursor unless the options say not.
    static func index(of file: Descriptor, end: Int, options: DecompressionOptions,
                      level: Int = 3, wholeFile: Bool = true, observer: ProgressObserver? = nil,
                      cancellation: Cancellation? = nil,
                      cursor: FrameCursor? = nil, recorder: FrameCheckpoints.Recorder? = nil)
        throws(WeirError) -> TarScanner.Found? {
        let context = try DecompressionContext(windowLogMax: options.windowLimit.logMax,
                                               verifyChecksum: options.verifyChecksum, path: file.path)
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: inputSize, alignment: 16)
        defer { input.deallocate() }
        var scanner: TarScanner?
        var offset = 0, produced = 0
        var output = UnsafeMutableRawBufferPointer(start: malloc(outputSize), count: outputSize)
        var filled = 0
        /// Hands the decoded buffer to the scanner (the first decides
        /// whether there is one); false when the content is not a tar.
        func handOver() -> Bool {
            guard filled > 0, scanner != nil || wholeFile || produced == 0 else { return true }
            // A custom deallocator: `.free` crashes (swift_retain, Swift 6.3; as GzipMemberScan).
            nonisolated(unsafe) let owned = output.baseAddress
            let data = DispatchData(bytesNoCopy: UnsafeRawBufferPointer(rebasing: output[0 ..< filled]),
                                    deallocator: .custom(nil, { free(owned) }))
            output = UnsafeMutableRawBufferPointer(start: malloc(outputSize), count: outputSize)
            produced += filled
            observer?.bytesWritten(filled)
            filled = 0
            if scanner == nil {
                guard TarScanner.startsTar(data) else { return false }
                scanner = TarScanner(level: level)
            }
            scanner?.feed(data)
            return true
        }
        defer { free(output.baseAddress) }
        if let cursor {
            recorder?.record(cursor)
            var read = cursor.offset
            while let block = try cursor.next() {
                if cancellation?.isCancelled == true { throw WeirError.cancelled(path: file.path, operation: .read) }
                var at = 0
                while at < block.count {
                    let count = min(block.count - at, output.count - filled)
                    UnsafeMutableRawBufferPointer(rebasing: output[filled ..< filled + count])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: block[at ..< at + count]))
                    (at, filled) = (at + count, filled + count)
                    if filled == output.count, !handOver() { return nil }
                }
                recorder?.record(cursor)
                observer?.bytesRead(cursor.offset - read)
                read = cursor.offset
            }
            offset = end
        }
        while offset < end {
            if cancellation?.isCancelled == true { throw WeirError.cancelled(path: file.path, operation: .read) }
            let span = UnsafeMutableRawBufferPointer(rebasing: input[0 ..< min(inputSize, end - offset)])
            let count = try file.read(into: span, at: offset, operation: .readMemberIndex)
            guard count > 0 else {
                throw WeirError.truncated(path: file.path, operation: .readMemberIndex,
                                          "the file ends at offset \(offset)")
            }
            var consumed = 0
            let source = UnsafeRawBufferPointer(rebasing: input[0 ..< count])
            while consumed < count {
                _ = try context.decompressStream(source, consumed: &consumed, into: output, filled: &filled)
                if filled == output.count, !handOver() { return nil }
                if !wholeFile, produced > 0 { break }
            }
            if !wholeFile, produced > 0 { break }
            observer?.bytesRead(count)
            offset += count
        }
        if !wholeFile {
            guard handOver(), scanner != nil else { return nil }
            return TarScanner.Found(frame: MemberIndex.IndexFrame(head: [], spill: nil, tail: []), members: 0)
        }
        guard handOver(), let scanner else { return nil }
        return try scanner.finish(contentSize: produced, path: file.path)
    }

    /// The record list of the tar in the file at `path`, made by one
    /// decode of its content (a `.tar.zst` another tool wrote, for `weir
    /// mount`); nil when the content is not a whole tar. Nothing is written.
    /// `observer`, if any, follows the decode (the file's bytes as input).
    ///
    /// - Throws: `WeirError` when the file cannot be read or does not decode.
    ///
    /// With `checkpoints` (`file`'s one frame, its bytes the whole file),
    /// the content is decoded by CZstdSplit where it takes the frame
    /// (``FrameCursor/start(file:at:end:windowLimit:verifyChecksum:)``),
    /// and checkpoints of the decoder are made as it goes (`weir mount`;
    /// none when it does not take it).
    package static func records(path: String, options: DecompressionOptions,
                                observer: ProgressObserver? = nil,
                                checkpoints: (file: Descriptor, recorder: FrameCheckpoints.Recorder)? = nil)
        throws(WeirError) -> MemberIndex.Records? {
        let file: Descriptor
        if let given = checkpoints?.file { file = given } else { file = try Descriptor.openForReading(path) }
        defer { if checkpoints == nil { file.close() } }
        let size = try file.status().size
        var cursor: FrameCursor?
        if checkpoints != nil {
            cursor = try FrameCursor.start(file: file, at: 0, end: size, windowLimit: 1 << options.windowLimit.logMax,
                                           verifyChecksum: options.verifyChecksum)
        }
        guard let found = try index(of: file, end: size, options: options, observer: observer,
                                    cursor: cursor, recorder: cursor == nil ? nil : checkpoints?.recorder)
        else { return nil }
        var frame: [UInt8] = []
        frame.reserveCapacity(found.frame.count)
        try found.frame.forEachPiece(size: 1 << 20, path: path) { piece throws(WeirError) in
            frame.append(contentsOf: piece)
        }
        return try MemberIndex.records(frame: frame, path: path, offset: 0)
    }
}
