extension FrameScanner {
    /// What an unknown magic number after the first frame does.
    package enum TailPolicy: Sendable {
        /// It is corrupt data.
        case fails
        /// It ends the scan when it starts a frame of another format
        /// (``CompressedFormat``), else it is corrupt data, thrown by the
        /// next call (the frames before it are returned first).
        case otherFormats
        /// It ends the scan whatever it is (pass-through copies it).
        case anything
    }

    /// What the scanner expects next.
    enum State: Sendable {
        /// The 4-byte magic number of the next frame.
        case magic
        /// The frame header descriptor byte.
        case descriptor
        /// Window descriptor, dictionary id and Frame_Content_Size, together.
        case headerFields(count: Int)
        /// A 3-byte block header.
        case blockHeader
        /// Bytes of a block's payload still to skip (never 0).
        case blockPayload(remaining: Int, isLast: Bool)
        /// The 4-byte content checksum.
        case checksum
        /// The 4-byte size of a skippable frame.
        case skippableSize
        /// A 4-byte skippable payload, kept as `skippableValue`.
        case skippableWord
        /// Bytes of a skippable payload still to skip (never 0).
        case skippablePayload(remaining: Int)

        /// The size of the field this state gathers; nil for skipping states.
        var fieldSize: Int? {
            switch self {
            case .magic, .checksum, .skippableSize, .skippableWord: 4
            case .descriptor: 1
            case .headerFields(let count): count
            case .blockHeader: 3
            case .blockPayload, .skippablePayload: nil
            }
        }

        /// Where in a frame the input ended, for the `.truncated` message,
        /// with `blockCount` block headers read and `gathered` bytes of the
        /// current field.
        func truncationPlace(blockCount: Int, gathered: Int) -> String {
            switch self {
            case .magic:
                "inside the magic number"
            case .descriptor, .headerFields:
                "inside the frame header"
            case .blockHeader:
                "inside the header of block \(blockCount)"
            case .blockPayload(let remaining, _):
                "inside block \(blockCount - 1), \(remaining) bytes short"
            case .checksum:
                "inside the content checksum"
            case .skippableSize:
                "inside the skippable frame header"
            case .skippableWord:
                "inside the skippable payload, \(4 - gathered) bytes short"
            case .skippablePayload(let remaining):
                "inside the skippable payload, \(remaining) bytes short"
            }
        }
    }
}
