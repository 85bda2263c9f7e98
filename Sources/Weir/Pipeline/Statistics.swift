/// What one run of a pipeline did.
public struct Statistics: Sendable, Equatable {
    /// Bytes read from the input.
    public var bytesIn: Int = 0
    /// Bytes written to the output.
    public var bytesOut: Int = 0
    /// Frames written (compression) or decoded (decompression).
    public var frames: Int = 0
    /// Wall-clock seconds from start to the last byte written.
    public var seconds: Double = 0
    /// Worker threads used.
    public var threads: Int = 1

    /// Creates empty statistics.
    public init() {}

    /// bytesOut / bytesIn, or 0 for an empty input.
    public var ratio: Double {
        bytesIn == 0 ? 0 : Double(bytesOut) / Double(bytesIn)
    }
}
