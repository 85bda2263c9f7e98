import WeirSystem

/// Checks a file's seek table against the frames a ``FrameScanner`` finds
/// in it, frame by frame as they come, and says how they first disagree.
///
/// The frames, not the table, are the truth: decoders cut frames where the
/// scanner finds them and frames carry their own checksums, so a damaged
/// table can never make wrong output. The check only tells whether the table
/// can be trusted (`weir -d` warns and goes on, `weir -t` fails).
///
/// Matching. An entry's frame starts where the entries after it, counted back
/// from the table, put it (its offset; the table
/// sits right after the last frame it describes, so one wrong size shifts
/// only the entries before it). A frame found at an entry's offset is that
/// entry's: its compressed size, the content size its header declares and
/// its checksum must be the entry's; a frame without a declared content size
/// is checked once decoded (``decodedSize(entry:listed:frame:decoded:)``).
/// Frames before the first entry's offset are not described (the table of
/// the last part of a concatenation). Between two frames that match entries,
/// entries and frames that do not line up are one damage: it is reported as
/// the compressed size of the last entry before the realignment, measured
/// against the frame found there. A table that cannot be read at all counts
/// only when the file really ends with a skippable frame of the seek table's
/// magic (otherwise the footer magic was a coincidence of the last frame's
/// bytes); the read error is then the mismatch's cause, and its detail
/// (``WeirError/seekTableProblem``) the mismatch's.
///
/// Used by one thread at a time (the decoder's reading thread, or `-l`).
package struct SeekTableCheck: Sendable {
    /// How the table first disagrees with the frames.
    package struct Mismatch: Equatable, Sendable {
        /// The entry at fault, from 0; nil when the table cannot be read.
        var entry: Int?
        /// What differs, naming the entry and the frame.
        package var detail: String
        /// The error behind it: why the table cannot be read, when that is the mismatch.
        package var cause: WeirError?

        /// Whether this mismatch comes first in the table (the one to report).
        package func precedes(_ other: Mismatch) -> Bool { (entry ?? -1) < (other.entry ?? -1) }
    }

    /// The entry a frame belongs to and the content size it lists, for a
    /// frame whose size is only known once decoded.
    package struct Expectation: Equatable, Sendable {
        package var entry: Int
        package var size: Int
    }

    private let hasTable: Bool
    private let entries: [SeekTable.Entry]
    private let hasChecksums: Bool
    private let firstOffset: Int
    private let tableOffset: Int
    private let fileSize: Int
    private let streamBase: Int
    /// Why the table cannot be read, when it cannot.
    private let readError: WeirError?
    /// The next entry to match, and where its frame should start.
    private var cursor = 0
    private var cursorOffset: Int
    /// Since the last frame that matched an entry, an entry or a frame did not line up.
    private var stray = false
    /// The last frame found (its file offset in `offset`).
    private var lastFrame: FrameBoundary?
    /// The first disagreement; nothing more is checked after it.
    package private(set) var mismatch: Mismatch?

    /// Prepares a check.
    ///
    /// - Parameters:
    ///   - table: the table, from ``SeekTable/decode(fileSize:path:reading:)``;
    ///     nil when there is none or it cannot be read.
    ///   - readError: why it cannot be read, when reading it threw.
    ///   - fileSize: the file's size.
    ///   - streamBase: the file offset of the stream's first byte (stdin may
    ///     start mid-file); entries before it are not checked.
    package init(table: SeekTable?, readError: WeirError?, fileSize: Int, streamBase: Int = 0) {
        entries = table?.entries ?? []
        hasChecksums = table?.hasChecksums ?? false
        firstOffset = table?.dataStart ?? 0
        tableOffset = table?.tableOffset ?? fileSize
        self.fileSize = fileSize
        self.streamBase = streamBase
        self.readError = table == nil ? readError : nil
        cursorOffset = firstOffset
        hasTable = table != nil
    }

    /// Takes the next frame found, in stream order.
    ///
    /// - Returns: the entry whose content size the frame must decode to,
    ///   when the frame matches an entry and its header declares no size.
    package mutating func frameFound(_ frame: FrameBoundary) -> Expectation? {
        guard mismatch == nil else { return nil }
        var frame = frame
        frame.offset += streamBase
        defer { lastFrame = frame }
        guard hasTable else {
            if isSeekTableFrame(frame) {
                mismatch = readError.map { Mismatch(entry: nil, detail: $0.seekTableProblem, cause: $0) }
                    ?? Mismatch(entry: nil, detail: "the file ends with a seek table frame without the footer magic "
                                    + FrameScanner.hex(SeekTable.footerMagic))
            }
            return nil
        }
        // Entries whose frame should have started before this one (astray,
        // unless they lie before the stream's start, which is not read).
        while cursor < entries.count && cursorOffset < frame.offset {
            if cursorOffset >= streamBase || cursorOffset < 0 { stray = true }
            cursorOffset += Int(entries[cursor].compressedSize)
            cursor += 1
        }
        if frame.offset < cursorOffset {
            // A frame no entry starts at: before the described part, or astray.
            if frame.offset >= firstOffset && !frame.header.isSkippable { stray = true }
            return nil
        }
        if stray {
            mismatch = strayMismatch(realignedAt: frame.offset)
            return nil
        }
        guard cursor < entries.count else { return nil }  // the table's own frame
        let index = cursor
        let entry = entries[index]
        cursorOffset += Int(entry.compressedSize)
        cursor += 1
        let listed = Int(entry.decompressedSize)
        if Int(entry.compressedSize) != frame.compressedSize {
            mismatch = Self.compressedSize(entry: index, listed: Int(entry.compressedSize), frame: frame)
        } else if frame.header.isSkippable {
            if listed != 0 {
                mismatch = Mismatch(entry: index, detail: "entry \(index) lists \(listed) bytes of content, but frame "
                                        + "\(frame.index) at offset \(frame.offset) is a skippable frame")
            }
        } else if let declared = frame.header.contentSize, declared != UInt64(listed) {
            mismatch = Mismatch(entry: index, detail: "entry \(index) lists \(listed) bytes of content, but frame "
                                    + "\(frame.index) at offset \(frame.offset) declares \(declared)")
        } else if hasChecksums, let checksum = frame.contentChecksum, checksum != entry.checksum {
            mismatch = Mismatch(
                entry: index,
                detail: "entry \(index) lists the checksum \(FrameScanner.hex(entry.checksum)), "
                    + "but frame \(frame.index) at offset \(frame.offset) ends with \(FrameScanner.hex(checksum))")
        } else if frame.header.contentSize == nil {
            return Expectation(entry: index, size: listed)
        }
        return nil
    }

    /// Declares the end of the input: entries still astray are a mismatch.
    package mutating func finish() {
        guard mismatch == nil, stray else { return }
        mismatch = strayMismatch(realignedAt: nil)
    }

    /// The mismatch of a frame that decoded to another size than its entry lists.
    ///
    /// - Parameter frame: the frame, as the scanner reported it (stream offset).
    package static func decodedSize(entry: Int, listed: Int, frame: FrameBoundary, streamBase: Int = 0,
                            decoded: Int) -> Mismatch {
        Mismatch(entry: entry, detail: "entry \(entry) lists \(listed) bytes of content, but frame \(frame.index) "
                     + "at offset \(frame.offset + streamBase) decodes to \(decoded)")
    }

    /// Whether `frame` is a seek table's skippable frame ending the file.
    private func isSeekTableFrame(_ frame: FrameBoundary) -> Bool {
        frame.header.kind == .skippable(nibble: UInt8(SeekTable.skippableMagic & 0xF))
            && frame.offset + frame.compressedSize == fileSize
    }

    /// The mismatch of entries and frames that stopped lining up, reported as
    /// the entry just before the frame at `offset` that lines up again (the
    /// table's own frame when nil is given at the end of the input).
    private func strayMismatch(realignedAt offset: Int?) -> Mismatch {
        let index = max(0, cursor - 1)
        guard index < entries.count else {
            return Mismatch(entry: nil, detail: "the table lists no frames, yet frames do not line up with it")
        }
        if let last = lastFrame, offset == nil || last.offset + last.compressedSize == offset {
            return Self.compressedSize(entry: index, listed: Int(entries[index].compressedSize), frame: last)
        }
        return Mismatch(
            entry: index,
            detail: "entry \(index) lists a compressed size of \(entries[index].compressedSize) "
                + "bytes, which puts no frame where the next one starts")
    }

    private static func compressedSize(entry: Int, listed: Int, frame: FrameBoundary) -> Mismatch {
        Mismatch(entry: entry, detail: "entry \(entry) lists a compressed size of \(listed) bytes, but frame "
                     + "\(frame.index) at offset \(frame.offset) is \(frame.compressedSize) bytes")
    }
}
