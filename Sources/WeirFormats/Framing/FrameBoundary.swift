/// One complete frame found by ``FrameScanner``: where it lies in the stream
/// and what its header declares.
package struct FrameBoundary: Equatable, Sendable {
    /// The frame's position in the stream, from 0 (skippable frames count).
    package var index: Int
    /// The stream offset of the frame's first byte (its magic number).
    package var offset: Int
    /// The frame's size in the stream: header, blocks and checksum, or, for a
    /// skippable frame, 8 + its payload size. It is what
    /// `ZSTD_findFrameCompressedSize` returns for the frame.
    package var compressedSize: Int
    /// What the frame's header declares.
    package var header: FrameHeader
    /// The number of blocks in a zstd frame (at least 1); 0 for skippable frames.
    package var blockCount: Int
    /// The most content the frame's blocks can decode to: a raw or RLE
    /// block's declared size, Block_Maximum_Size for a compressed block. A
    /// frame without a declared content size gets an output buffer of it
    /// (pzstd's frames: 64 full blocks and an empty last one, exactly 8 MiB).
    package var contentBound: Int
    /// The content checksum stored at the end of a zstd frame (the low 32
    /// bits of XXH64 of the content, exactly the per-frame checksum of the
    /// seekable format), unchecked; nil when the frame has none.
    package var contentChecksum: UInt32?
    /// For a skippable frame whose payload is exactly 4 bytes, that payload
    /// as a little-endian u32: in pzstd files, the compressed size of the
    /// next frame. Nil otherwise.
    package var skippableValue: UInt32?

    /// Creates a boundary description.
    ///
    /// `contentBound` defaults to `blockCount` compressed blocks' worth.
    package init(index: Int, offset: Int, compressedSize: Int, header: FrameHeader, blockCount: Int,
                contentBound: Int? = nil, contentChecksum: UInt32? = nil, skippableValue: UInt32? = nil) {
        self.index = index
        self.offset = offset
        self.compressedSize = compressedSize
        self.header = header
        self.blockCount = blockCount
        self.contentBound = contentBound ?? blockCount * header.blockMaximumSize
        self.contentChecksum = contentChecksum
        self.skippableValue = skippableValue
    }

    /// The stream offset just past the frame's last byte.
    package var end: Int { offset + compressedSize }
}
