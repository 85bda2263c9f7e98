/// How ``DecompressionPipeline`` decompresses.
public struct DecompressionOptions: Sendable, Equatable {
    /// Whether content checksums are verified (`--no-check` turns it off).
    public var verifyChecksum: Bool
    /// The most memory a frame's window may take, in bytes; nil keeps
    /// libzstd's default limit of 128 MiB (windowLog 27).
    public var memoryLimit: Int?
    /// The size of each read of compressed input.
    public var readSize: Int

    /// Creates options; every parameter has zstd's default.
    public init(verifyChecksum: Bool = true, memoryLimit: Int? = nil, readSize: Int = 1 << 20) {
        self.verifyChecksum = verifyChecksum
        self.memoryLimit = memoryLimit
        self.readSize = readSize
    }

    /// The window log matching `memoryLimit`: the largest power of two that fits.
    var windowLogMax: Int? {
        guard let memoryLimit else { return nil }
        var log = 10
        while log < 31 && (1 << (log + 1)) <= memoryLimit { log += 1 }
        return log
    }
}
