import CFuzzSupport

/// libzstd's own decode of a whole input (`ZSTD_decompressStream`), the
/// reference weir's decoders are compared with.
public enum ReferenceDecoder {
    /// What libzstd makes of an input.
    public enum Outcome: Equatable {
        /// Decoded to these bytes, ending where a frame ends.
        case decoded([UInt8])
        /// An error, or the input ends inside a frame (or is empty).
        case failed
        /// More than ``capacity`` bytes of output, or a legacy frame:
        /// nothing to compare.
        case notComparable
    }

    /// The most output compared: an input of 64 KiB of RLE blocks can
    /// declare gigabytes, which would make every execution slow.
    public static let capacity = 8 << 20

    nonisolated(unsafe) private static var buffer = [UInt8](repeating: 0, count: capacity)

    /// Decodes `source`; `ignoreChecksum` as weir's `--no-check`. Not thread-safe
    /// (one shared buffer): libFuzzer calls a target from one thread.
    public static func decode(_ source: UnsafeRawBufferPointer, ignoreChecksum: Bool = false) -> Outcome {
        var produced = 0
        let outcome = buffer.withUnsafeMutableBytes { destination in
            weir_fuzz_reference_decode(source.baseAddress, source.count, destination.baseAddress, destination.count,
                                       &produced, ignoreChecksum ? 1 : 0)
        }
        switch Int(outcome) {
        case Int(WEIR_FUZZ_DECODED.rawValue): return .decoded(Array(buffer[0 ..< produced]))
        case Int(WEIR_FUZZ_FAILED.rawValue): return .failed
        default: return .notComparable
        }
    }

    /// libzstd's size of the frame `source` begins with (`ZSTD_findFrameCompressedSize`);
    /// nil when libzstd reports an error.
    public static func frameSize(_ source: UnsafeRawBufferPointer) -> Int? {
        let size = weir_fuzz_frame_size(source.baseAddress, source.count)
        return size < 0 ? nil : Int(size)
    }
}
