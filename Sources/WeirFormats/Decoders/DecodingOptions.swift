/// What the member decoders are made with: the part of a run's
/// ``DecompressionOptions`` a decoder reads (`-M`, `--long`, `--no-check`,
/// `-D`, `--patch-from`, `--pass-through`), so that the decoders, below the
/// engine, never hold the run's options.
package struct DecodingOptions: Sendable {
    /// The largest window a frame may ask for.
    package var windowLimit: WindowLimit
    /// Whether zstd frames' checksums are verified.
    package var verifyChecksum: Bool
    /// The dictionary zstd frames are decoded with.
    package var dictionary: ZstdDictionary?
    /// The old file every zstd frame is decoded against.
    package var patchReference: PatchReference?
    /// Whether what is in no known format is copied as it is.
    package var passThrough: Bool

    package init(windowLimit: WindowLimit, verifyChecksum: Bool = true, dictionary: ZstdDictionary? = nil,
                 patchReference: PatchReference? = nil, passThrough: Bool = false) {
        self.windowLimit = windowLimit
        self.verifyChecksum = verifyChecksum
        self.dictionary = dictionary
        self.patchReference = patchReference
        self.passThrough = passThrough
    }
}
