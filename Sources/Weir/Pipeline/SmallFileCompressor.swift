import Dispatch
import Glibc

/// Compresses a regular file that makes one frame, on the calling thread,
/// without a pipeline: no reading thread, no worker queue, no channel, and a
/// context kept from one file to the next.
///
/// For a tree of small files (`-r`), setting up ``CompressionPipeline`` per
/// file costs more than compressing it. The bytes written are the ones the
/// pipeline writes for that file: its options fitted to the file's size,
/// the one frame from `CompressionContext.compressFrame(_:into:path:)` with
/// the same parameters, then the seek table of one entry.
///
/// Used by one thread at a time (each thread running jobs has its own), so
/// the context and buffers need no lock.
public final class SmallFileCompressor {
    /// The largest file taken: its input and output buffers stay small.
    public static let maximumSize = CompressionOptions.minimumSplitChunk

    private var context: CompressionContext?
    private var contextOptions: CompressionOptions?
    private var input: [UInt8] = []
    private var output: [UInt8] = []

    /// Creates one with no context yet (made by the first file).
    public init() {}

    /// Whether a regular file of `size` bytes makes one frame with `options`
    /// and is small enough. Not with `--no-mmap` (the input is then read
    /// through DispatchIO, as asked), a dictionary or `--long`, which only
    /// the pipeline sets up.
    static func accepts(size: Int, options: CompressionOptions) -> Bool {
        size <= maximumSize && size <= options.fitted(toInputSize: size).chunkSize
            && options.mapInput && options.dictionary == nil && options.longWindowLog == nil
    }

    /// Compresses the `size` bytes of `fd` into `outputFD` (see the type).
    ///
    /// - Throws: ``WeirError`` naming the file: the file changed size while
    ///   read, a read or write failed, or libzstd failed.
    func compress(_ fd: Int32, size: Int, to outputFD: Int32, inputName: String, outputName: String,
                  options requested: CompressionOptions, observer: ProgressObserver?) throws(WeirError) -> Statistics {
        let started = DispatchTime.now()
        let options = requested.fitted(toInputSize: size)
        let context = try self.context(for: options, path: inputName)
        if input.count < size + 1 { input = [UInt8](repeating: 0, count: size + 1) }
        // One byte more than the size: a file that grew since fstat is not cut short silently.
        let got = try input.withUnsafeMutableBytes { buffer in
            Result { () throws(WeirError) in
                try Descriptor(fd, path: inputName).read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<(size + 1)]),
                                                         at: 0, operation: .read)
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
                    // No copy: the DispatchData only lends the buffer to the call.
                    let chunk = size == 0 ? DispatchData.empty
                        : DispatchData(bytesNoCopy: UnsafeRawBufferPointer(rebasing: source[..<size]), deallocator: .custom(nil, {}))
                    return try context.compressFrame(chunk, into: destination, path: inputName)
                }
            }
        }.get()
        var table: [UInt8] = []
        if options.seekTable {
            let recorder = SeekTableRecorder(checksums: options.checksum, path: outputName)
            output.withUnsafeBytes {
                recorder.compressed(0, decompressedSize: size, frame: UnsafeRawBufferPointer(rebasing: $0[..<frameSize]))
            }
            recorder.written(0, size: frameSize)
            table = Array(try recorder.encoded())
        }
        // Frame and table in one DispatchIO write, as every output of weir.
        try output.withUnsafeBytes { frame in
            Result { () throws(WeirError) in
                var data = DispatchData(bytesNoCopy: UnsafeRawBufferPointer(rebasing: frame[..<frameSize]),
                                        deallocator: .custom(nil, {}))
                table.withUnsafeBytes { data.append($0) }
                try Self.write(data, to: outputFD, path: outputName)
            }
        }.get()
        let written = frameSize + table.count
        observer?.bytesWritten(written)
        var statistics = Statistics()
        statistics.bytesIn = size
        statistics.bytesOut = written
        statistics.frames = 1
        statistics.threads = options.resolvedThreads
        statistics.chunkBytes = options.chunkSize
        statistics.windowLog = output.withUnsafeBytes { FrameHeader(startOf: $0)?.windowLog }
        statistics.seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        return statistics
    }

    /// Writes `data` with `dispatch_write` and waits for it: the buffer it
    /// borrows is the caller's until then.
    private static func write(_ data: DispatchData, to fd: Int32, path: String) throws(WeirError) {
        let done = DispatchSemaphore(value: 0)
        let failure = Locked<Int32>(0)
        DispatchIO.write(toFileDescriptor: fd, data: data, runningHandlerOn: .global()) { _, error in
            failure.withLock { $0 = error }
            done.signal()
        }
        done.wait()
        let error = failure.current
        if error != 0 { throw WeirError.system(error, path: path, operation: .write) }
    }

    /// The context for `options`: the last one when its parameters are the same.
    private func context(for options: CompressionOptions, path: String) throws(WeirError) -> CompressionContext {
        if let context, let previous = contextOptions, previous.level == options.level,
           previous.checksum == options.checksum, previous.contentSize == options.contentSize,
           previous.resolvedWindowLog == options.resolvedWindowLog {
            return context
        }
        let made = try CompressionContext(level: options.level, checksum: options.checksum, contentSize: options.contentSize,
                                          windowLog: options.resolvedWindowLog, path: path)
        context = made
        contextOptions = options
        return made
    }
}
