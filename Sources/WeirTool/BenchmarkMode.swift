import Glibc
import Weir
import WeirCLI
import WeirPrograms

/// `-b`: zstd's benchmark mode, with its flags (`-b#`, `-e#`, `-i#`, `-B#`,
/// `-S`, `-d`, `--priority=rt`), measuring weir's pipelines beside libzstd
/// used as zstd uses it (``Benchmark``). Results go to standard output, as
/// zstd's do.
struct BenchmarkMode {
    /// `-b`'s flags.
    struct Settings: Sendable {
        /// `-e`: the last level.
        var lastLevel: Int?
        /// `-i`: seconds a level, 3 by default.
        var seconds = 3
        /// `-S`.
        var separateFiles = false
        /// `--priority=rt`.
        var realTime = false
        /// `-b -d`: decode only.
        var decodesOnly = false
    }

    /// The run's resolved flags: what it reads are its own (``Settings``),
    /// the levels, -B, -D, the compression and decompression options and -q, -v.
    let settings: RunSettings
    /// The files measured; none, or `-`, for zstd's generated sample.
    let inputs: [String]
    let console: Console

    /// Benchmarks `inputs` (`-`: zstd's generated sample) at each level;
    /// returns the exit status.
    func run() -> Int32 {
        let own = settings.benchmarkSettings
        if own.realTime {
            if settings.reporting.quiet == 0 { console.write("weir: note: switching to real-time priority\n") }
            if setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, -20) != 0 {
                console.warning("--priority=rt: \(String(cString: strerror(errno)))")
            }
        }
        let (dictionary, unreadable) = settings.readDictionary(console: console)
        if unreadable { return 1 }
        let levels = settings.compressionSettings.levelPolicy.benchmarkLevels(last: own.lastLevel)
        let (first, last) = (levels.lowerBound, levels.upperBound)
        if last > first, settings.reporting.verbose > 0 {
            console.write("weir: benchmarking levels from \(first) to \(last)\n")
        }
        let files = inputs.filter { $0 != "-" }
        let groups: [[String]] = files.isEmpty ? [[]] : own.separateFiles ? files.map { [$0] } : [files]
        for group in groups {
            let sample: BenchmarkSample
            do throws(WeirError) {
                sample = group.isEmpty ? try BenchmarkSample.synthetic() : try BenchmarkSample.load(paths: group)
            } catch {
                console.error(CommandHint.message(for: error))
                return 1
            }
            let seconds = own.seconds
            if settings.reporting.quiet == 1 {
                print(BenchmarkLine.header(version: WeirCommand.version, inputBytes: sample.size, seconds: seconds,
                                           blockSize: settings.compressionSettings.chunkSize ?? 0))
            }
            let run = Benchmark(sample: sample, seconds: Double(seconds))
            for level in first...last {
                guard measure(run, level: level, dictionary: dictionary) else { return 1 }
                if own.decodesOnly { break }
            }
        }
        return 0
    }

    /// One level of `run`: weir's row, then libzstd's (not with -q, whose
    /// one line per level is weir's). False after an error, shown.
    private func measure(_ run: Benchmark, level: Int, dictionary: ZstdDictionary?) -> Bool {
        var compression = settings.compressionOptions(level: level, dictionary: dictionary)
        compression.mapInput = true
        var decompression = settings.decompressionOptions(toStandardOutput: false, dictionary: dictionary)
        decompression.sparse = false
        let decodeOnly = settings.benchmarkSettings.decodesOnly
        let name = run.sample.name
        do throws(WeirError) {
            let weir = try run.weir(compression, decompression, decodeOnly: decodeOnly)
            switch settings.reporting.quiet {
            case 0:
                print(
                    BenchmarkLine.text(
                        level: level, name: name, result: weir, label: BenchmarkLine.label("weir", result: weir)))
                let workers = compression.resolvedThreads
                if let libzstd = try run.libzstd(
                    compression, workers: workers, blockSize: settings.compressionSettings.chunkSize,
                    decodeOnly: decodeOnly)
                {
                    print(BenchmarkLine.text(level: level, name: name, result: libzstd,
                                             label: BenchmarkLine.label("libzstd", result: libzstd)))
                } else {
                    print("   libzstd: a frame does not declare its decompressed size (zstd -b -d refuses it)")
                }
            case 1: print(BenchmarkLine.quiet(level: level, name: name, result: weir))
            default: break
            }
            return true
        } catch {
            console.error(CommandHint.message(for: error))
            return false
        }
    }
}
