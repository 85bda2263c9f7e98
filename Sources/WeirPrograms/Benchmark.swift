import Weir
import CZstd
import Dispatch
import Glibc
import SystemPackage

/// zstd's benchmark mode (`-b`), measuring what weir does beside what
/// libzstd does for the same settings, on a ``BenchmarkSample`` in memory.
///
/// - ``weir(_:_:decodeOnly:)`` runs weir's own file pipelines on each part,
///   memory file to memory file: its parallel independent frames, its
///   threads, its ordered writer, start-up included, as `weir FILE` runs; and
///   its parallel decoder as `weir -t FILE.zst` runs (after one decoding into
///   memory files, compared with the sample).
/// - ``libzstd(_:workers:blockSize:)`` does what `zstd -b -T N` does: one
///   `ZSTD_compress2` per part (or per `-B` block) with libzstd's own N
///   workers, and one `ZSTD_decompressDCtx` per part, on one thread.
///
/// Each direction is run until it has taken at least ``seconds`` (at least
/// once), and its fastest run counts, as zstd counts it. Every decoded
/// output is compared with the sample: a difference is an error.
package struct Benchmark: Sendable {
    /// What one row of results measured.
    package struct Result: Sendable, Equatable {
        /// Bytes of the sample (decompressed).
        package var originalBytes = 0
        /// Bytes compressed (frames and seek tables).
        package var compressedBytes = 0
        /// Frames written (or, decoding only, decoded).
        package var frames = 0
        /// Threads at work: weir's workers, or libzstd's.
        package var threads = 1
        /// The fastest compression of the whole sample, in seconds; nil when
        /// only decoding.
        package var compressionSeconds: Double?
        /// The fastest decompression of the whole sample, in seconds.
        package var decompressionSeconds = 0.0

        /// Compression speed in bytes of the sample per second.
        package var compressionSpeed: Double? { compressionSeconds.map { Double(originalBytes) / max($0, 1e-9) } }
        /// Decompression speed in bytes of the sample per second.
        package var decompressionSpeed: Double { Double(originalBytes) / max(decompressionSeconds, 1e-9) }
        /// Nothing measured yet.
        package init() {}

        /// originalBytes / compressedBytes, as zstd's `(x2.345)`.
        package var ratio: Double { Double(originalBytes) / Double(max(compressedBytes, 1)) }
    }

    /// The bytes measured.
    package let sample: BenchmarkSample
    /// The least time each measurement runs for (`-i`); 0 runs it once.
    package let seconds: Double

    /// A benchmark of `sample`, each measurement running at least `seconds`.
    package init(sample: BenchmarkSample, seconds: Double) {
        self.sample = sample
        self.seconds = seconds
    }

    // MARK: weir

    /// weir's pipelines on the sample: each part compressed as `weir FILE`
    /// would, then decoded once into memory files (compared with the sample)
    /// and timed as `weir -t` decodes; with `decodeOnly`, the parts are zstd
    /// data and are only decoded.
    package func weir(_ compression: CompressionOptions, _ decompression: DecompressionOptions,
                      decodeOnly: Bool = false) throws(WeirError) -> Result {
        var result = Result()
        result.threads = compression.resolvedThreads
        var compressed: [FileDescriptor] = []
        defer { for file in compressed { try? file.close() } }
        if !decodeOnly {
            for _ in sample.parts { compressed.append(try BenchmarkSample.memoryFile(path: sample.name)) }
            var written = (bytes: 0, frames: 0)
            result.compressionSeconds = try fastest { () throws(WeirError) in
                written = (0, 0)
                for (part, output) in zip(sample.parts, compressed) {
                    try rewind(part.descriptor, output)
                    let statistics = try CompressionPipeline(
                        input: part.descriptor, output: output,
                        inputName: sample.name, outputName: sample.name, options: compression).run()
                    try cut(output, at: statistics.bytesOut)
                    written.bytes += statistics.bytesOut
                    written.frames += statistics.frames
                }
            }
            result.compressedBytes = written.bytes
            result.frames = written.frames
        }
        let sources = decodeOnly ? sample.parts.map(\.descriptor) : compressed
        let decoded = try sources.map { _ throws(WeirError) in try BenchmarkSample.memoryFile(path: sample.name) }
        defer { for file in decoded { try? file.close() } }
        // Once into memory files, compared with the sample; then timed as
        // `weir -t` decodes: every frame and checksum, nothing written (as
        // zstd -b decodes into a buffer, with no system call).
        var read = (original: 0, compressed: 0, frames: 0)
        for (source, output) in zip(sources, decoded) {
            try rewind(source, output)
            let statistics = try DecompressionPipeline(
                input: source, output: output,
                inputName: sample.name, outputName: sample.name, options: decompression).run()
            try cut(output, at: statistics.bytesOut)
            read.original += statistics.bytesOut
            read.compressed += statistics.bytesIn
            read.frames += statistics.frames
        }
        result.decompressionSeconds = try fastest { () throws(WeirError) in
            for source in sources {
                guard lseek(source.rawValue, 0, SEEK_SET) == 0 else {
                    throw WeirError.system(errno, path: sample.name, operation: .read)
                }
                _ = try DecompressionPipeline(input: source, output: nil, inputName: sample.name,
                                              outputName: sample.name, options: decompression).run()
            }
        }
        if decodeOnly {
            result.originalBytes = read.original
            result.compressedBytes = read.compressed
            result.frames = read.frames
        } else {
            result.originalBytes = sample.size
            for (part, output) in zip(sample.parts, decoded) {
                try expectSame(part.bytes, output)
            }
        }
        return result
    }

    // MARK: libzstd

    /// libzstd as `zstd -b` uses it: each part (or each `blockSize` block of
    /// it) one frame from `ZSTD_compress2` with `workers` of libzstd's own
    /// threads (0: none), decoded by `ZSTD_decompressDCtx` on this thread.
    /// With `decodeOnly`, the parts are zstd data, each decoded whole into
    /// the size its frames declare; nil when a frame declares none (zstd's
    /// `-b -d` refuses those).
    package func libzstd(_ compression: CompressionOptions, workers: Int, blockSize: Int?,
                         decodeOnly: Bool = false) throws(WeirError) -> Result? {
        var result = Result()
        result.threads = max(1, workers)
        let path = sample.name
        let cdict = try compression.dictionary.map { d throws(WeirError) in
            try CompressionDictionary(d, level: compression.level, path: path)
        }
        let context = try CompressionContext(level: compression.level, checksum: compression.checksum,
                                             contentSize: compression.contentSize,
                                             windowLog: compression.resolvedWindowLog,
                                             longDistance: compression.longWindowLog != nil, dictionary: cdict,
                                             dictionaryID: compression.dictionaryID,
                                             parameters: compression.parameters, path: path)
        try context.setWorkers(workers, path: path)
        let ddict = try compression.dictionary.map { d throws(WeirError) in try DecompressionDictionary(d) }
        let decoder = try DecompressionContext(windowLogMax: 31, verifyChecksum: compression.checksum,
                                               dictionary: ddict, path: path)
        // The frames of each part: offset and size in `frames`, and the
        // original bytes each decodes to.
        var blocks: [(part: Int, range: Range<Int>)] = []
        for (index, part) in sample.parts.enumerated() {
            let step = blockSize.map { max(1, $0) } ?? max(1, part.bytes.count)
            for start in stride(from: 0, to: max(part.bytes.count, 1), by: step) {
                blocks.append((index, start..<min(part.bytes.count, start + step)))
            }
        }
        if decodeOnly {
            var sizes: [Int] = []
            for part in sample.parts {
                let size = ZSTD_findDecompressedSize(part.bytes.baseAddress, part.bytes.count)
                guard size != ZSTD_CONTENTSIZE_UNKNOWN else { return nil }
                guard size != ZSTD_CONTENTSIZE_ERROR, size < UInt64(Int.max) else {
                    throw WeirError.notZstd(path: path, operation: .decompress)
                }
                sizes.append(Int(size))
            }
            let outputs = sizes.map { UnsafeMutableRawBufferPointer.allocate(byteCount: max($0, 1), alignment: 64) }
            defer { for output in outputs { output.deallocate() } }
            result.decompressionSeconds = try fastest { () throws(WeirError) in
                for (part, output) in zip(sample.parts, outputs) {
                    _ = try decoder.decompressFrame(part.bytes, into: output)
                }
            }
            result.originalBytes = sizes.reduce(0, +)
            result.compressedBytes = sample.size
            result.frames = sample.parts.count
            return result
        }
        let bounds = blocks.map { Zstd.compressBound($0.range.count) }
        let frames = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bounds.reduce(0, +)), alignment: 64)
        defer { frames.deallocate() }
        var sizes = [Int](repeating: 0, count: blocks.count)
        result.compressionSeconds = try fastest { () throws(WeirError) in
            var offset = 0
            for (index, block) in blocks.enumerated() {
                let source = UnsafeRawBufferPointer(rebasing: sample.parts[block.part].bytes[block.range])
                sizes[index] = try context.compressFrame(
                    source, into: UnsafeMutableRawBufferPointer(rebasing: frames[offset..<offset + bounds[index]]),
                    path: path)
                offset += bounds[index]
            }
        }
        let decoded = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, sample.size), alignment: 64)
        defer { decoded.deallocate() }
        result.decompressionSeconds = try fastest { () throws(WeirError) in
            var from = 0, to = 0
            for (index, block) in blocks.enumerated() {
                let frame = UnsafeRawBufferPointer(rebasing: frames[from..<from + sizes[index]])
                let got = try decoder.decompressFrame(
                    frame, into: UnsafeMutableRawBufferPointer(rebasing: decoded[to..<to + block.range.count]))
                guard got == block.range.count else { throw mismatch() }
                from += bounds[index]
                to += got
            }
        }
        var to = 0
        for part in sample.parts {
            let got = UnsafeRawBufferPointer(rebasing: decoded[to..<to + part.bytes.count])
            guard Self.same(part.bytes, got) else { throw mismatch() }
            to += part.bytes.count
        }
        result.originalBytes = sample.size
        result.compressedBytes = sizes.reduce(0, +)
        result.frames = blocks.count
        return result
    }

    // MARK: Helpers

    /// Runs `body` until the runs have taken ``seconds`` (at least once);
    /// the fastest run's seconds.
    private func fastest(_ body: () throws(WeirError) -> Void) throws(WeirError) -> Double {
        var best = Double.infinity
        var spent = 0.0
        repeat {
            let start = DispatchTime.now().uptimeNanoseconds
            try body()
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            best = min(best, elapsed)
            spent += elapsed
        } while spent < seconds
        return best
    }

    /// Puts `input` and `output` at their start, before a run. The output
    /// keeps its pages from the run before (``cut(_:at:)`` only drops its
    /// tail), so that runs after the first write into memory already had,
    /// as libzstd's rows do.
    private func rewind(_ input: FileDescriptor, _ output: FileDescriptor) throws(WeirError) {
        guard lseek(input.rawValue, 0, SEEK_SET) == 0, lseek(output.rawValue, 0, SEEK_SET) == 0 else {
            throw WeirError.system(errno, path: sample.name, operation: .write)
        }
    }

    /// Ends `output` after the `size` bytes a run wrote.
    private func cut(_ output: FileDescriptor, at size: Int) throws(WeirError) {
        guard ftruncate(output.rawValue, off_t(size)) == 0 else {
            throw WeirError.system(errno, path: sample.name, operation: .truncate)
        }
    }

    /// Throws unless the memory file `decoded` holds exactly `original`.
    private func expectSame(_ original: UnsafeRawBufferPointer, _ decoded: FileDescriptor) throws(WeirError) {
        let size = Int(lseek(decoded.rawValue, 0, SEEK_END))
        guard size == original.count else { throw mismatch() }
        guard size > 0 else { return }
        guard let base = mmap(nil, size, PROT_READ, MAP_SHARED, decoded.rawValue, 0), base != MAP_FAILED else {
            throw WeirError.system(errno, path: sample.name, operation: .map)
        }
        defer { munmap(base, size) }
        guard let expected = original.baseAddress, memcmp(base, expected, size) == 0 else { throw mismatch() }
    }

    /// Whether `first` and `second` hold the same bytes (two empty ones do).
    private static func same(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> Bool {
        guard first.count == second.count else { return false }
        // Without an address a buffer is empty, and so (same count) is the other.
        guard let one = first.baseAddress, let other = second.baseAddress else { return true }
        return memcmp(one, other, first.count) == 0
    }

    /// A round trip that did not give the sample back.
    private func mismatch() -> WeirError {
        WeirError.corrupt(path: sample.name, operation: .test, "the benchmark's decoded bytes differ from the original")
    }
}
