import WeirFormats

/// Frames made by weir's own compression context, for the tests of the layers that read them.
enum TestFrames {
    /// `input` compressed as one frame at level 3, with a checksum.
    static func frame(of input: [UInt8]) throws -> [UInt8] {
        let context = try CompressionContext(level: 3, checksum: true, path: "in")
        var frame = [UInt8](repeating: 0, count: Zstd.compressBound(input.count))
        let size = try input.withUnsafeBytes { source in
            try frame.withUnsafeMutableBytes { destination in
                try context.compressFrame(source, into: destination, path: "in")
            }
        }
        return Array(frame[..<size])
    }
}
