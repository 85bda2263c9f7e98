import Weir
import WeirPrograms

/// The lines of `-b`, in zstd's layout, one per level and kind of run:
///
///      3#linux.tar          :1363783680 -> 295311520 (x4.618),  612.4 MB/s, 2206.2 MB/s  weir -T2, 163 frames
///      3#linux.tar          :1363783680 -> 294162315 (x4.636),  501.3 MB/s, 1024.9 MB/s  libzstd -T2, 1 frame
///
/// and with -q zstd's short line (`-3   295311520 (4.618) 612.40 MB/s 2206.2 MB/s  linux.tar`).
package enum BenchmarkLine {
    /// The row: level, name (its last 17 characters), sizes, ratio, speeds
    /// (MB/s, 10^6 bytes), then what ran. Decoding only (`-b -d`): the
    /// compressed size first, and the decoding speed alone.
    package static func text(level: Int, name: String, result: Benchmark.Result, label: String) -> String {
        let shown = String(name.suffix(17))
        let padded = shown + String(repeating: " ", count: max(0, 17 - shown.count))
        let accuracy: Int32 = result.ratio < 10 ? 3 : 2
        let decoding = result.decompressionSpeed / 1e6
        guard let compression = result.compressionSpeed.map({ $0 / 1e6 }) else {
            return CFormat.string("%2d#", level) + padded
                + CFormat.string(" :%10lld ->%10lld (x%5.*f), decoding %6.1f MB/s  ", Int64(result.compressedBytes),
                                 Int64(result.originalBytes), accuracy, result.ratio, decoding) + label
        }
        return CFormat.string("%2d#", level) + padded
            + CFormat.string(" :%10lld ->%10lld (x%5.*f), %6.*f MB/s, %6.1f MB/s  ", Int64(result.originalBytes),
                             Int64(result.compressedBytes), accuracy, result.ratio, compression < 10 ? 2 : 1,
                             compression, decoding) + label
    }

    /// What ran: `weir -T2, 163 frames` or `libzstd -T2, 1 frame`.
    package static func label(_ tool: String, result: Benchmark.Result) -> String {
        "\(tool) -T\(result.threads), \(result.frames) frame\(result.frames == 1 ? "" : "s")"
    }

    /// zstd's `-q` line of a level: `-3   295311520 (4.618) 612.40 MB/s 2206.2 MB/s  NAME`.
    package static func quiet(level: Int, name: String, result: Benchmark.Result) -> String {
        CFormat.string(
            "-%-3d%11lld (%5.3f) %6.2f MB/s %6.1f MB/s  ", level, Int64(result.compressedBytes), result.ratio,
            (result.compressionSpeed ?? 0) / 1e6, result.decompressionSpeed / 1e6) + name
    }

    /// zstd's `-q` header: `bench weir 0.1.0 (libzstd 1.5.4): input N bytes, S seconds, K KB blocks`.
    package static func header(version: String, inputBytes: Int, seconds: Int, blockSize: Int) -> String {
        "bench weir \(version) (libzstd \(Zstd.libraryVersion)): input \(inputBytes) bytes, \(seconds) seconds, "
            + "\(blockSize >> 10) KB blocks"
    }
}
