import Dispatch
import WeirSystem

/// Finds the frame boundaries of a zstd stream without decoding it and
/// without holding whole frames.
///
/// Feed it the stream's bytes in order, in pieces of any size split at any
/// byte; each ``feed(_:)-(DispatchData)`` returns the frames that ended inside
/// that piece, as ``FrameBoundary`` values, in stream order. Call
/// ``finish()`` after the last piece: it throws `.truncated` when the stream
/// ended inside a frame.
///
///     var scanner = FrameScanner(path: name)
///     for piece in pieces {
///         for frame in try scanner.feed(piece) { … frame.offset, frame.compressedSize … }
///         if let start = scanner.currentFrameStart, scanner.currentFrameBytes > limit {
///             … stream the frame that began at `start` instead of buffering it …
///         }
///     }
///     try scanner.finish()
///
/// What it reads (RFC 8878): for a zstd frame, the magic number, the frame
/// header (descriptor, window descriptor, dictionary id, Frame_Content_Size),
/// every 3-byte block header, and the optional 4-byte content checksum; block
/// payloads are skipped unread (an RLE block's payload is its one byte).
/// For a skippable frame (magic `0x184D2A50`…`0x184D2A5F`), the magic and the
/// u32 size; the payload is skipped unread (a 4-byte payload is kept, as
/// ``FrameBoundary/skippableValue``: pzstd's hint). pzstd files therefore
/// come out as alternating skippable and zstd frames; the seekable format's
/// table comes out as a skippable frame of nibble 14.
///
/// What it rejects, with a ``WeirError`` naming the frame index and offsets:
/// - `.notZstd`: the stream does not start with a zstd or skippable magic.
/// - `.corrupt`: an unknown magic after the first frame (trailing garbage),
///   the reserved bit of the frame header descriptor set, a block of the
///   reserved type, a Block_Size above min(Window_Size, 128 KiB).
/// - `.truncated` (from ``finish()``): the stream ended inside a frame.
///
/// What it does not check: anything inside block payloads, checksums, that
/// the content adds up to Frame_Content_Size, legacy (pre-v0.8) frames (they
/// are rejected as unknown magic), whether a decoder accepts the window size.
///
/// Cost: O(1) memory — the only bytes kept across pieces are those of one
/// header field (at most `maxBufferedBytes`); payloads are never copied.
/// Time is O(number of pieces + number of blocks): a 128 KiB block costs one
/// 3-byte header read.
///
/// Once it has thrown, a scanner is spent: every later call throws the same
/// error. Frames that ended earlier in the piece whose feed threw are not
/// returned but kept in ``endedBeforeFailure`` (``frameCount`` counts them):
/// a decoder writes them before it reports the damage, as zstd does.
package struct FrameScanner: Sendable {
    /// Block_Maximum_Size is at most 128 KiB, whatever the window.
    static let blockSizeMax = 128 * 1024
    /// The most bytes a scanner keeps between pieces: window descriptor (1),
    /// dictionary id (4) and Frame_Content_Size (8), gathered as one field.
    static let maxBufferedBytes = 13

    /// How errors name the stream.
    package let path: String
    /// How errors name the operation (`"scan"` unless the caller says otherwise).
    package let operation: WeirError.Operation
    /// Bytes of the stream fed so far: the stream offset of the next byte.
    package internal(set) var offset = 0
    /// Frames that ended so far.
    package internal(set) var frameCount = 0
    /// The stream offset where the frame now in progress began; nil between
    /// frames (and before the first byte).
    package internal(set) var currentFrameStart: Int?
    /// The header of the frame now in progress, once it has been read whole;
    /// nil between frames and while the header is incomplete.
    package internal(set) var currentHeader: FrameHeader?

    /// What an unknown magic number after the first frame does: by default
    /// it fails (`.corrupt`); a decoder that reads the other formats asks
    /// the scan to end there instead (``tailStart``), as zstd 1.5.4 tells
    /// each frame's format by its magic number. Such a decoder also gets a
    /// stream that starts with another format's frame, from offset 0.
    package var tailPolicy = TailPolicy.fails
    /// Where the data the scan left to its caller starts (``tailPolicy``):
    /// ``offset`` stops there, and later feeds scan nothing.
    package internal(set) var tailStart: Int?

    /// The frames that ended in the piece whose feed threw, before the
    /// damage, in order; empty until a feed throws.
    package private(set) var endedBeforeFailure: [FrameBoundary] = []

    var state: State = .magic
    /// The bytes of the field being gathered; never more than `maxBufferedBytes`.
    var gathered: [UInt8] = []
    var failure: WeirError?
    /// The current zstd frame's header descriptor byte.
    var descriptor: UInt8 = 0
    /// The current frame's skippable nibble, while its size is gathered.
    var nibble: UInt8 = 0
    /// The current frame's Block_Maximum_Size.
    var blockMaximum = 0
    /// Block headers read in the current frame.
    var blockCount = 0
    /// The most content the current frame's blocks read so far decode to.
    var contentBound = 0
    var skippableValue: UInt32?

    /// Creates a scanner positioned at the start of a stream.
    ///
    /// - Parameters:
    ///   - path: the stream's name, for error messages.
    ///   - operation: the operation errors report (default `"scan"`).
    package init(path: String, operation: WeirError.Operation = .scan) {
        self.path = path
        self.operation = operation
        gathered.reserveCapacity(Self.maxBufferedBytes)
    }

    /// Bytes of the frame now in progress fed so far (0 between frames).
    package var currentFrameBytes: Int {
        currentFrameStart.map { offset - $0 } ?? 0
    }

    /// The most content the blocks of the frame in progress read so far
    /// decode to (0 between frames): a raw or RLE block's size, the block
    /// maximum for a compressed one. It only grows as the frame goes on.
    package var currentContentBound: Int {
        currentFrameStart == nil ? 0 : contentBound
    }

    /// Header bytes kept from earlier pieces (for tests of the memory bound).
    var bufferedByteCount: Int { gathered.count }

    /// Scans the next piece of the stream, region by region.
    ///
    /// - Returns: the frames that ended inside `data`, in order.
    /// - Throws: ``WeirError`` `.notZstd` or `.corrupt`, naming the frame
    ///   index and offset; then the scanner is spent.
    package mutating func feed(_ data: DispatchData) throws(WeirError) -> [FrameBoundary] {
        if let failure { throw failure }
        var found: [FrameBoundary] = []
        var caught: WeirError?
        data.enumerateBytes { region, _, stop in
            do throws(WeirError) {
                try self.scan(UnsafeRawBufferPointer(region), into: &found)
            } catch {
                caught = error
                stop = true
            }
        }
        if let caught {
            endedBeforeFailure = found
            throw caught
        }
        return found
    }

    /// Scans the next piece of the stream, given as raw bytes.
    ///
    /// - Returns: the frames that ended inside `bytes`, in order.
    /// - Throws: as ``feed(_:)-(DispatchData)``.
    package mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(WeirError) -> [FrameBoundary] {
        if let failure { throw failure }
        var found: [FrameBoundary] = []
        do throws(WeirError) {
            try scan(bytes, into: &found)
        } catch {
            endedBeforeFailure = found
            throw error
        }
        return found
    }

    /// Declares the end of the stream.
    ///
    /// An empty stream is zero frames, not an error: a caller that needs at
    /// least one frame checks ``frameCount``.
    ///
    /// - Throws: ``WeirError`` `.truncated` when the stream ended inside a
    ///   frame, naming the frame's index, where it began and where the input
    ///   ended; or the error an earlier call threw.
    package mutating func finish() throws(WeirError) {
        if let failure { throw failure }
        guard let start = currentFrameStart else { return }
        if case .magic = state, (frameCount > 0 && tailPolicy == .anything) || startsOtherFormat {
            // 1 to 3 bytes after the last frame: the caller's (pass-through);
            // or a stream too short for a magic number that starts another format.
            (tailStart, offset, currentFrameStart) = (start, start, nil)
            return
        }
        let place = state.truncationPlace(blockCount: blockCount, gathered: gathered.count)
        throw fail(.truncated(path: path, operation: operation, "the input ends at offset \(offset), \(place)"))
    }

    /// Whether the stream starts with a frame of another format than zstd
    /// (`gathered` holds its first bytes), which a decoder that reads other
    /// formats takes from offset 0 (``tailStart``).
    var startsOtherFormat: Bool {
        guard frameCount == 0, tailPolicy != .fails, let format = CompressedFormat.detect(gathered) else {
            return false
        }
        return format != .zstd
    }

    /// Runs the state machine over one contiguous region.
    private mutating func scan(_ bytes: UnsafeRawBufferPointer, into found: inout [FrameBoundary]) throws(WeirError) {
        var index = 0
        let count = bytes.count
        while index < count && tailStart == nil && failure == nil {
            switch state {
            case .blockPayload(let remaining, let isLast):
                let step = min(remaining, count - index)
                index += step
                offset += step
                if step == remaining {
                    endBlock(isLast: isLast, into: &found)
                } else {
                    state = .blockPayload(remaining: remaining - step, isLast: isLast)
                }
            case .skippablePayload(let remaining):
                let step = min(remaining, count - index)
                index += step
                offset += step
                if step == remaining {
                    complete(into: &found)
                } else {
                    state = .skippablePayload(remaining: remaining - step)
                }
            default:
                let size = state.fieldSize ?? 0
                if case .magic = state, gathered.isEmpty { currentFrameStart = offset }
                let step = min(size - gathered.count, count - index)
                gathered.append(contentsOf: bytes[index ..< index + step])
                index += step
                offset += step
                if gathered.count == size {
                    try process(fieldOffset: offset - size, into: &found)
                    gathered.removeAll(keepingCapacity: true)
                }
            }
        }
    }

    /// Records and returns `error`, placed in the frame in progress.
    mutating func fail(_ error: WeirError) -> WeirError {
        let error = error.located(frame: frameCount, offset: currentFrameStart ?? offset, .scanned)
        failure = error
        return error
    }

    /// `0x` and the value in hexadecimal, zero-padded to its type's width.
    package static func hex<T: FixedWidthInteger>(_ value: T) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, T.bitWidth / 4 - digits.count)) + digits
    }
}
