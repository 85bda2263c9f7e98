import WeirFormats

extension DecompressionOptions {
    /// What the member decoders of a run with these options are made with.
    package var decoding: DecodingOptions {
        DecodingOptions(windowLimit: windowLimit, verifyChecksum: verifyChecksum, dictionary: dictionary,
                        patchReference: patchReference, passThrough: passThrough)
    }
}
