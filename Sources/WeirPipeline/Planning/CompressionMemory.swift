import WeirFormats
import WeirSystem

/// What one compression worker holds once its input's size is known, and
/// whether that fits this process's memory limit (a cgroup's): a run the
/// kernel would kill is refused before it starts, with the `--long` window
/// that fits when one does.
///
/// `WorkerPlan` chooses the workers before any input is opened, with an
/// upper bound (618 MiB for `--long=27 -19`, which finishes in 128 MiB on
/// a 20 MB file); it shrinks chunks, but not a window asked for. Here the
/// model is of what surely stays resident for this input, so that no run
/// that fits is refused (``surePeak(_:inputSize:regularFile:)``):
/// - one libzstd context for this input's frames
///   (`CompressionContext.estimatedSize`, the window and tables sized down
///   to the frame's size as libzstd sizes them for a pledged size): its
///   tables are zeroed when a frame starts, so every page of them is touched;
/// - the chunks read whole into memory before they are compressed (a file
///   read, not mapped: under a `--long` window above 8 MiB; a pipe of known
///   size): the first, and the next one read ahead while it compresses. A
///   mapped file's pages are the page cache's, which the kernel takes back;
/// - with `verify`, the first chunk's decoded copy.
///
/// Neither weir's own memory nor the compressed output is counted: the
/// first is what of its libraries the page cache holds already (a 1 MB
/// run under `--long=27` was charged 4 MiB in all), the second is not known
/// before the run. A pipe of unknown size counts no chunk: a short one fits
/// (`echo hi | weir --long=27` took 11 MiB of a 64 MiB group).
///
/// Measured in a cgroup v1 memory group (max_usage_in_bytes), 2026-11-27,
/// against the model: `--long=27 -19` on 20 MB, 111 MiB (102 modelled);
/// `--long=27` on 20 MB, 30 MiB (22), on 200 MB 284 MiB (200). In 64 MiB,
/// on 200 MB, `--long=25` and up are killed (modelled 67 MiB and up) while
/// `--long=23` finishes (2 modelled; 42 with ``likelyPeak(_:inputSize:)``).
package enum CompressionMemory {
    /// weir's own charge to its cgroup in ``likelyPeak(_:inputSize:)``: the
    /// most measured compressing 1 MB (8 MiB at `-1`).
    static let likelyBaseBytes = 8 << 20

    /// What one worker surely holds compressing an input of `inputSize`
    /// bytes (nil: a pipe of unknown size) with `options` (as planned, before
    /// `CompressionOptions/fitted(toInputSize:)`); `regularFile`: whether the
    /// input is a file, which may be mapped rather than read.
    package static func surePeak(_ options: CompressionOptions, inputSize: Int?, regularFile: Bool) -> Int {
        let fitted = oneWorker(options).fitted(toInputSize: inputSize)
        let frame = frameSize(fitted, inputSize: inputSize)
        let reads = !regularFile || !fitted.resolvedMapInput
        var resident = 0
        if let inputSize {
            if reads {
                let ahead =
                    fitted.resolvedChunksInFlight > 1 ? min(max(0, inputSize - fitted.chunkSize), fitted.chunkSize) : 0
                resident += frame + ahead
            }
            if fitted.verify { resident += frame }
        }
        return context(fitted, frame: frame) + resident
    }

    /// An upper estimate of what one worker holds: weir at its most
    /// measured (``likelyBaseBytes``), the context, and every chunk in flight
    /// whole (mapped or read) with its output buffer filled
    /// (`compressBound`: an input that does not compress). What
    /// ``fittingWindow(_:inputSize:limit:)`` advises must fit with this.
    static func likelyPeak(_ options: CompressionOptions, inputSize: Int?) -> Int {
        let fitted = oneWorker(options).fitted(toInputSize: inputSize)
        let frame = frameSize(fitted, inputSize: inputSize)
        let chunks = inputSize.map { max(1, ($0 + fitted.chunkSize - 1) / fitted.chunkSize) } ?? .max
        let inFlight = min(fitted.resolvedChunksInFlight, chunks)
        let verification = fitted.verify ? frame : 0
        return likelyBaseBytes + context(fitted, frame: frame) + inFlight * (frame + Zstd.compressBound(frame))
            + verification
    }

    /// Refuses to compress an input of `inputSize` bytes (nil: unknown)
    /// with `options` when one worker surely holds more than
    /// ``CompressionOptions/memoryLimit``; nothing to check without one, for
    /// another format than zstd or a patch (`--patch-from`).
    ///
    /// - Throws: `WeirError` `.memoryLimit` naming `path`, with the
    ///   `WeirError.Hint.compressionMemory(longWindowLog:)` that fits.
    package static func check(_ options: CompressionOptions, inputSize: Int?, regularFile: Bool,
                              path: String) throws(WeirError) {
        guard let limit = options.memoryLimit, options.format == .zstd, options.patchReference == nil else { return }
        let peak = surePeak(options, inputSize: inputSize, regularFile: regularFile)
        guard peak > limit else { return }
        let frame = oneWorker(options).fitted(toInputSize: inputSize).chunkSize
        throw WeirError.compressionMemory(path: path, needed: peak, limit: limit, frame: frame,
                                          fitting: fittingWindow(options, inputSize: inputSize, limit: limit))
    }

    /// The largest `--long` window below the one asked for whose run on
    /// this input fits ``WorkerPlan/singleWorkerShare`` of `limit` by
    /// ``likelyPeak(_:inputSize:)``; nil without `--long` (or with the window
    /// set by `--zstd=wlog=`), or when none does.
    static func fittingWindow(_ options: CompressionOptions, inputSize: Int?, limit: Int) -> Int? {
        guard let asked = options.longWindowLog, options.parameters.windowLog == nil else { return nil }
        let room = Int(Double(limit) * WorkerPlan.singleWorkerShare)
        var trial = options
        // A chunk the window raised (the command resolves it before the
        // plan) is the level's again under a smaller window.
        if options.chunkSize == min(1 << asked, CompressionOptions.maximumChunkSize) {
            trial.chunkSize = CompressionOptions.defaultChunkSize(level: options.level)
        }
        for log in stride(from: asked - 1, through: CompressionOptions.longWindowLogs.lowerBound, by: -1) {
            trial.longWindowLog = log
            if likelyPeak(trial, inputSize: inputSize) <= room { return log }
        }
        return nil
    }

    /// `options` for one worker (the question is whether even one fits).
    private static func oneWorker(_ options: CompressionOptions) -> CompressionOptions {
        var one = options
        one.threads = 1
        return one
    }

    /// The size of the first frame: the chunk, or a smaller input whole.
    private static func frameSize(_ fitted: CompressionOptions, inputSize: Int?) -> Int {
        min(fitted.chunkSize, max(1, inputSize ?? fitted.chunkSize))
    }

    /// libzstd's estimate of one context for frames of `frame` bytes.
    private static func context(_ fitted: CompressionOptions, frame: Int) -> Int {
        CompressionContext.estimatedSize(
            level: fitted.level, windowLog: fitted.resolvedWindowLog, longDistance: fitted.longWindowLog != nil,
            parameters: fitted.parameters, chunkSize: frame)
    }
}
