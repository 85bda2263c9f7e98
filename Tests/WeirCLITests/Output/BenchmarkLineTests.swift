import Testing
import Weir
import WeirPrograms
import WeirCLI

/// `-b`'s lines, in zstd's layout.
@Suite("benchmark lines")
struct BenchmarkLineTests {
    func result(compressed: Double? = 0.5, decompressed: Double = 0.25, frames: Int = 163) -> Benchmark.Result {
        var result = Benchmark.Result()
        result.originalBytes = 1_363_783_680
        result.compressedBytes = 295_311_520
        result.frames = frames
        result.threads = 2
        result.compressionSeconds = compressed
        result.decompressionSeconds = decompressed
        return result
    }

    @Test("a row: level, the name's last 17 characters, sizes, ratio, MB/s both ways, what ran")
    func row() {
        let weir = result()
        #expect(
            BenchmarkLine.text(
                level: 3, name: "linux-6.1-source.tar", result: weir,
                label: BenchmarkLine.label("weir", result: weir))
                == " 3#ux-6.1-source.tar :1363783680 -> 295311520 (x4.618), 2727.6 MB/s, 5455.1 MB/s  weir -T2, 163 "
                    + "frames"
        )
        let one = result(compressed: 100, frames: 1)
        #expect(
            BenchmarkLine.text(level: -5, name: "a", result: one, label: BenchmarkLine.label("libzstd", result: one))
                == "-5#a                 :1363783680 -> 295311520 (x4.618),   13.6 MB/s, 5455.1 MB/s  libzstd -T2, 1 "
                    + "frame"
        )
    }

    @Test("decoding only: the compressed size first, one speed")
    func decoding() {
        let decoded = result(compressed: nil)
        #expect(BenchmarkLine.text(level: 3, name: "a.zst", result: decoded, label: "weir -T2, 163 frames")
                == " 3#a.zst             : 295311520 ->1363783680 (x4.618), decoding 5455.1 MB/s  weir -T2, 163 frames")
    }

    @Test("-q: zstd's short line")
    func quiet() {
        #expect(BenchmarkLine.quiet(level: 3, name: "a", result: result())
                == "-3    295311520 (4.618) 2727.57 MB/s 5455.1 MB/s  a")
    }
}
