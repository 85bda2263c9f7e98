/// What the header of one frame declares, read without decoding anything
/// (RFC 8878, section 3.1).
///
/// ``FrameScanner`` fills one in as soon as a frame's header is complete
/// (``FrameScanner/currentHeader``) and hands it over again in the frame's
/// ``FrameBoundary`` when the frame ends.
package struct FrameHeader: Equatable, Sendable {
    /// Which kind of frame this is.
    package enum Kind: Equatable, Sendable {
        /// A zstd frame: magic `0xFD2FB528`.
        case zstd
        /// A skippable frame: magic `0x184D2A50 + nibble`, `nibble` in 0…15
        /// (pzstd writes nibble 0, the seekable format's table nibble 14).
        case skippable(nibble: UInt8)
    }

    /// The magic number of a zstd frame, little-endian in the frame.
    static let zstdMagic: UInt32 = 0xFD2F_B528
    /// The magic number of a skippable frame of nibble 0; `magic & 0xFFFF_FFF0`
    /// of any skippable frame.
    static let skippableMagic: UInt32 = 0x184D_2A50

    /// The kind of frame a magic number starts, if it starts one.
    package static func kind(ofMagic magic: UInt32) -> Kind? {
        if magic == zstdMagic { return .zstd }
        if magic & 0xFFFF_FFF0 == skippableMagic { return .skippable(nibble: UInt8(magic & 0xF)) }
        return nil
    }

    /// Whether `bytes` begin with the magic number of a zstd or skippable
    /// frame; fewer than four bytes never do.
    package static func startsFrame(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 4 else { return false }
        return kind(ofMagic: bytes.prefix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }) != nil
    }

    /// The frame's kind.
    package var kind: Kind
    /// Bytes from the start of the magic number to the first block header
    /// (zstd: 6 to 18; skippable: 8, the magic and the size).
    package var headerSize: Int
    /// Frame_Content_Size, when the header carries it; nil when it does not
    /// and for skippable frames. It is what the header declares, unchecked.
    package var contentSize: UInt64?
    /// Window_Size: from the window descriptor, or the content size for a
    /// single-segment frame; 0 for skippable frames. Up to 2⁴¹ + 7·2³⁸ by
    /// format; decoders refuse windows above their own limit.
    package var windowSize: UInt64
    /// Whether the frame ends with a 4-byte content checksum.
    package var hasChecksum: Bool
    /// Dictionary_ID, or 0 when the header has none (the RFC gives 0 the
    /// meaning "no dictionary").
    package var dictionaryID: UInt32
    /// Whether Single_Segment_Flag is set (no window descriptor: the window
    /// is the whole content).
    package var isSingleSegment: Bool

    /// Creates a header description.
    package init(kind: Kind, headerSize: Int, contentSize: UInt64?, windowSize: UInt64,
                hasChecksum: Bool, dictionaryID: UInt32, isSingleSegment: Bool) {
        self.kind = kind
        self.headerSize = headerSize
        self.contentSize = contentSize
        self.windowSize = windowSize
        self.hasChecksum = hasChecksum
        self.dictionaryID = dictionaryID
        self.isSingleSegment = isSingleSegment
    }

    /// The largest Block_Size this frame's blocks may declare:
    /// min(Window_Size, 128 KiB); 0 for skippable frames.
    package var blockMaximumSize: Int {
        Int(min(windowSize, UInt64(FrameScanner.blockSizeMax)))
    }

    /// Window_Size as a power of two, rounded up: the window a decoder holds
    /// for this frame (`--long=N`, `-M 2^N`); 0 for skippable frames.
    package var windowLog: Int {
        windowSize == 0 ? 0 : WindowLimit.windowLog(windowSize)
    }

    /// Whether this is a skippable frame.
    package var isSkippable: Bool {
        if case .skippable = kind { return true }
        return false
    }
}

extension FrameHeader {
    /// The size of the fields after a zstd frame's descriptor byte: window
    /// descriptor, Dictionary_ID and Frame_Content_Size.
    static func fieldsSize(descriptor: UInt8) -> Int {
        let singleSegment = descriptor & 0x20 != 0
        return (singleSegment ? 0 : 1) + dictionaryIDSize(descriptor) + contentSizeSize(descriptor)
    }

    /// Reads a zstd frame's header from its descriptor byte and the
    /// ``fieldsSize(descriptor:)`` bytes that follow it.
    init(descriptor: UInt8, fields: [UInt8]) {
        let singleSegment = descriptor & 0x20 != 0
        var position = 0
        var windowSize: UInt64 = 0
        if !singleSegment {
            let windowDescriptor = fields[0]
            let windowLog = 10 + UInt64(windowDescriptor >> 3)
            let base: UInt64 = 1 << windowLog
            windowSize = base + (base / 8) * UInt64(windowDescriptor & 7)
            position = 1
        }
        let dictionarySize = Self.dictionaryIDSize(descriptor)
        let dictionaryID = UInt32(truncatingIfNeeded: Self.littleEndian(fields, at: position, count: dictionarySize))
        position += dictionarySize
        let fcsSize = Self.contentSizeSize(descriptor)
        var contentSize: UInt64?
        if fcsSize > 0 {
            let value = Self.littleEndian(fields, at: position, count: fcsSize)
            contentSize = fcsSize == 2 ? value + 256 : value
        }
        if singleSegment { windowSize = contentSize ?? 0 }
        self.init(kind: .zstd, headerSize: 5 + fields.count, contentSize: contentSize,
                  windowSize: windowSize, hasChecksum: descriptor & 0x04 != 0,
                  dictionaryID: dictionaryID, isSingleSegment: singleSegment)
    }

    /// The header at the start of a zstd frame held in memory, such as one
    /// just compressed; nil when `frame` does not start with a whole one.
    package init?(startOf frame: UnsafeRawBufferPointer) {
        guard frame.count >= 5, frame.loadUnaligned(as: UInt32.self).littleEndian == Self.zstdMagic else { return nil }
        let descriptor = frame[4]
        let end = 5 + Self.fieldsSize(descriptor: descriptor)
        guard frame.count >= end else { return nil }
        self.init(descriptor: descriptor, fields: Array(frame[5 ..< end]))
    }

    /// The size of the Dictionary_ID field a descriptor announces.
    private static func dictionaryIDSize(_ descriptor: UInt8) -> Int {
        [0, 1, 2, 4][Int(descriptor & 3)]
    }

    /// The size of the Frame_Content_Size field a descriptor announces.
    private static func contentSizeSize(_ descriptor: UInt8) -> Int {
        let flag = Int(descriptor >> 6)
        if flag == 0 { return descriptor & 0x20 != 0 ? 1 : 0 }
        return [0, 2, 4, 8][flag]
    }

    /// The little-endian value of `count` bytes of `bytes` from `position`.
    static func littleEndian(_ bytes: [UInt8], at position: Int, count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in stride(from: count - 1, through: 0, by: -1) {
            value = value << 8 | UInt64(bytes[position + index])
        }
        return value
    }
}
