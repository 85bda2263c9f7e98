import WeirFormats

extension SeekTable {
    /// Where each entry's frame lies, in the file (from ``dataStart``) and in
    /// the content: what tests compare with the frames a scanner finds.
    func frameOffsets() -> [(compressedOffset: Int, compressedSize: Int, decompressedOffset: Int,
                            decompressedSize: Int, checksum: UInt32?)] {
        var compressed = dataStart, decompressed = 0
        return entries.map { entry in
            defer {
                compressed += Int(entry.compressedSize)
                decompressed += Int(entry.decompressedSize)
            }
            return (compressed, Int(entry.compressedSize), decompressed, Int(entry.decompressedSize),
                    hasChecksums ? entry.checksum : nil)
        }
    }
}
