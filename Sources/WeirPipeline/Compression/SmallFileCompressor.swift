import Dispatch
import Glibc
import WeirFormats
import WeirSystem
import WeirTar

/// Compresses a regular file that makes one frame, on the calling thread,
/// without a pipeline: no reading thread, no worker queue, and a context kept
/// from one file to the next. ``FileJob`` writes the result.
///
/// For a tree of small files (`-r`), setting up ``CompressionPipeline`` per
/// file costs more than compressing it. The bytes written are the ones the
/// pipeline writes for that file: its options fitted to the file's size,
/// the one frame from `CompressionContext.compressFrame(_:into:path:)` with
/// the same parameters (one frame: no seek table).
///
/// Used by one thread at a time (each thread running jobs has its own), so
/// the context and buffers need no lock.
package final class SmallFileCompressor {
    /// The largest file taken: its input and output buffers stay small.
    package static let maximumSize = CompressionOptions.minimumSplitChunk

    private var context: CompressionContext?
    /// The check of `verify`, made by the first file that asks for it.
    private var verifier: FrameVerifier?
    private var contextOptions: CompressionOptions?
    private var input: [UInt8] = []
    private var output: [UInt8] = []

    /// Creates one with no context yet (made by the first file).
    package init() {}

    /// Whether a regular file of `size` bytes makes one frame with `options`
    /// and is small enough. Not with `--no-mmap` (the input is then read
    /// through DispatchIO, as asked), a dictionary, `--long` or a patch's
    /// old file (`--patch-from`), which only the pipeline sets up.
    package static func accepts(size: Int, options: CompressionOptions) -> Bool {
        size <= maximumSize && size <= options.fitted(toInputSize: size).chunkSize
            && options.mapInput && options.dictionary == nil && options.longWindowLog == nil
            && options.patchReference == nil && options.format == .zstd
    }

    /// Whether `file`, of `size` bytes, must go through the pipeline for
    /// its member index: with `options` writing one (docs/members.md), a
    /// content whose first block carries `ustar` at offset 257 is scanned as
    /// a tar, which only the pipeline does (this path writes one frame and
    /// no table). One read of its first block; a failed read leaves the file here.
    package static func wantsMemberIndex(_ file: Descriptor, size: Int, options: CompressionOptions) -> Bool {
        guard options.memberIndex, options.seekTable, size >= TarHeaderCheck.block,
              let head = try? file.read(count: 512, at: 0, operation: .read), head.count == 512 else { return false }
        return head.withUnsafeBytes { TarScanner.startsTar($0) }
    }

    /// Compresses the `size` bytes of `file` (see the type) and hands the
    /// frame to `write`, lent for the call: the buffers stay this
    /// compressor's, ready for the next file.
    ///
    /// - Returns: the statistics of the file but its time.
    /// - Throws: `WeirError` naming the file: the file changed size while
    ///   read, a read failed, or libzstd failed; or what `write` threw.
    package func compress(_ file: Descriptor, size: Int, outputName: String, options requested: CompressionOptions,
                          observer: ProgressObserver?,
                          write: (UnsafeRawBufferPointer) throws(WeirError) -> Void) throws(WeirError) -> Statistics {
        let options = requested.fitted(toInputSize: size)
        let inputName = file.path
        let context = try self.context(for: options, path: inputName)
        if input.count < size + 1 { input = [UInt8](repeating: 0, count: size + 1) }
        // One byte more than the size: a file that grew since fstat is not cut short silently.
        let got = try input.withUnsafeMutableBytes { buffer in
            Result { () throws(WeirError) in
                try file.read(
                    into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<(size + 1)]), at: 0, operation: .read)
            }
        }.get()
        guard got == size else {
            throw WeirError.changedWhileRead(path: inputName, operation: .read, shrank: false)
        }
        observer?.bytesRead(size)
        let bound = Zstd.compressBound(size)
        if output.count < bound { output = [UInt8](repeating: 0, count: bound) }
        let frameSize = try input.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { destination in
                Result { () throws(WeirError) in
                    try context.compressFrame(UnsafeRawBufferPointer(rebasing: source[..<size]), into: destination,
                                              path: inputName)
                }
            }
        }.get()
        if options.verify { try verify(frameSize: frameSize, size: size, options: options, path: inputName) }
        try output.withUnsafeBytes { frame in
            Result { () throws(WeirError) in try write(UnsafeRawBufferPointer(rebasing: frame[..<frameSize])) }
        }.get()
        var statistics = Statistics()
        statistics.bytesIn = size
        statistics.bytesOut = frameSize
        statistics.frames = 1
        statistics.threads = options.resolvedThreads
        statistics.chunkBytes = options.chunkSize
        statistics.windowLog = output.withUnsafeBytes { FrameHeader(startOf: $0)?.windowLog }
        return statistics
    }

    /// Checks the frame in `output` against the `size` bytes of `input` (`verify`).
    private func verify(frameSize: Int, size: Int, options: CompressionOptions, path: String) throws(WeirError) {
        if verifier == nil { verifier = try FrameVerifier(dictionary: nil, path: path) }
        if options.damagedFrameForTesting == 0 {
            output.withUnsafeMutableBytes {
                FrameVerifier.damage(UnsafeMutableRawBufferPointer(rebasing: $0[..<frameSize]))
            }
        }
        try input.withUnsafeBytes { source in
            output.withUnsafeBytes { frame in
                Result { () throws(WeirError) in
                    try verifier?.check(UnsafeRawBufferPointer(rebasing: frame[..<frameSize]),
                                        against: UnsafeRawBufferPointer(rebasing: source[..<size]), frame: 0, offset: 0,
                                        path: path)
                }
            }
        }.get()
    }

    /// The context for `options`: the last one when its parameters are the same.
    private func context(for options: CompressionOptions, path: String) throws(WeirError) -> CompressionContext {
        if let context, let previous = contextOptions, previous.level == options.level,
           previous.checksum == options.checksum, previous.contentSize == options.contentSize,
           previous.resolvedWindowLog == options.resolvedWindowLog, previous.parameters == options.parameters {
            return context
        }
        let made = try CompressionContext(
            level: options.level, checksum: options.checksum, contentSize: options.contentSize,
            windowLog: options.resolvedWindowLog, parameters: options.parameters, path: path)
        context = made
        contextOptions = options
        return made
    }
}
