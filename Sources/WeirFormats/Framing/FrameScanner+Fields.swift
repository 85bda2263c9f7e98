import WeirSystem

/// The scanner's step for each field of the format once gathered whole:
/// the magic number, the header's descriptor and fields, each block's
/// header, the checksum; what ends a block and a frame.
extension FrameScanner {
    /// Acts on a field gathered whole in `gathered`, which began at `fieldOffset`.
    mutating func process(fieldOffset: Int, into found: inout [FrameBoundary]) throws(WeirError) {
        switch state {
        case .magic:
            let magic = UInt32(truncatingIfNeeded: littleEndian(0, 4))
            switch FrameHeader.kind(ofMagic: magic) {
            case .zstd:
                state = .descriptor
            case .skippable(let frameNibble):
                nibble = frameNibble
                state = .skippableSize
            case nil where frameCount == 0 && !startsOtherFormat:
                throw fail(.notZstd(path: path, operation: operation,
                                    "unknown magic number \(Self.hex(magic)) at offset \(fieldOffset)"))
            case nil where startsOtherFormat || (frameCount > 0 && tailPolicy == .anything)
                || (tailPolicy == .otherFormats && CompressedFormat.detect(gathered) != nil):
                (tailStart, offset, currentFrameStart) = (fieldOffset, fieldOffset, nil)
            case nil:
                let error = fail(.corrupt(path: path, operation: operation,
                                          "unknown magic number \(Self.hex(magic)) at offset \(fieldOffset): "
                                              + "the data after frame \(frameCount - 1) is not zstd"))
                // A decoder that reads on past the frames gets the ones before
                // it first (zstd writes them): thrown by the next call.
                if tailPolicy == .fails { throw error }
            }
        case .descriptor:
            let byte = gathered[0]
            if byte & 0x08 != 0 {
                throw fail(.corrupt(path: path, operation: operation,
                                    "reserved bit set in the frame header descriptor \(Self.hex(byte)) "
                                        + "at offset \(fieldOffset)"))
            }
            descriptor = byte
            state = .headerFields(count: FrameHeader.fieldsSize(descriptor: byte))
        case .headerFields:
            let header = FrameHeader(descriptor: descriptor, fields: gathered)
            currentHeader = header
            blockMaximum = header.blockMaximumSize
            state = .blockHeader
        case .blockHeader:
            let raw = Int(littleEndian(0, 3))
            let isLast = raw & 1 != 0
            let type = (raw >> 1) & 3
            let size = raw >> 3
            blockCount += 1
            if type == 3 {
                throw fail(.corrupt(path: path, operation: operation,
                                    "block \(blockCount - 1) at offset \(fieldOffset) has the reserved block type"))
            }
            if size > blockMaximum {
                throw fail(.corrupt(path: path, operation: operation,
                                    "block \(blockCount - 1) at offset \(fieldOffset) declares \(size) bytes, "
                                        + "more than the frame's maximum block size of \(blockMaximum)"))
            }
            // Raw and RLE blocks declare their decoded size; a compressed one
            // declares its compressed size and decodes to at most the maximum.
            contentBound += type == 2 ? blockMaximum : size
            let payload = type == 1 ? 1 : size
            if payload == 0 {
                endBlock(isLast: isLast, into: &found)
            } else {
                state = .blockPayload(remaining: payload, isLast: isLast)
            }
        case .checksum:
            let checksum = UInt32(truncatingIfNeeded: littleEndian(0, 4))
            complete(checksum: checksum, into: &found)
        case .skippableSize:
            let size = Int(littleEndian(0, 4))
            currentHeader = FrameHeader(kind: .skippable(nibble: nibble), headerSize: 8, contentSize: nil,
                                        windowSize: 0, hasChecksum: false, dictionaryID: 0, isSingleSegment: false)
            switch size {
            case 0: complete(into: &found)
            case 4: state = .skippableWord
            default: state = .skippablePayload(remaining: size)
            }
        case .skippableWord:
            skippableValue = UInt32(truncatingIfNeeded: littleEndian(0, 4))
            complete(into: &found)
        case .blockPayload, .skippablePayload:
            break  // skipping states gather nothing
        }
    }

    /// Moves past the end of a block: to the next block, the checksum, or the
    /// end of the frame.
    mutating func endBlock(isLast: Bool, into found: inout [FrameBoundary]) {
        if !isLast {
            state = .blockHeader
        } else if descriptor & 0x04 != 0 {
            state = .checksum
        } else {
            complete(into: &found)
        }
    }

    /// Reports the frame that just ended and readies the scanner for the next.
    mutating func complete(checksum: UInt32? = nil, into found: inout [FrameBoundary]) {
        let start = currentFrameStart ?? offset
        // The header is always known here: a frame ends only after its header.
        let header = currentHeader ?? FrameHeader(kind: .zstd, headerSize: 0, contentSize: nil, windowSize: 0,
                                                  hasChecksum: false, dictionaryID: 0, isSingleSegment: false)
        found.append(FrameBoundary(index: frameCount, offset: start, compressedSize: offset - start, header: header,
                                   blockCount: blockCount, contentBound: contentBound, contentChecksum: checksum,
                                   skippableValue: skippableValue))
        frameCount += 1
        state = .magic
        currentFrameStart = nil
        currentHeader = nil
        descriptor = 0
        blockCount = 0
        contentBound = 0
        blockMaximum = 0
        skippableValue = nil
    }

    /// The little-endian value of `count` gathered bytes from `position`.
    func littleEndian(_ position: Int, _ count: Int) -> UInt64 {
        FrameHeader.littleEndian(gathered, at: position, count: count)
    }
}
