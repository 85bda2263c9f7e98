import Glibc
import Weir
import WeirCLI
import WeirPrograms

/// `-b`: zstd's benchmark mode, with its flags (`-b#`, `-e#`, `-i#`, `-B#`,
/// `-S`, `-d`, `--priority=rt`), measuring weir's pipelines beside libzstd
/// used as zstd uses it (``Benchmark``). Results go to standard output, as
/// zstd's do.
extension RunSettings {
    /// Benchmarks `inputs` (`-`: zstd's generated sample) at each level;
    /// returns the exit status.
    func benchmark(_ inputs: [String], console: Console) -> Int32 {
        if benchmarkSettings.realTime {
            if reporting.quiet == 0 { console.write("weir: note: switching to real-time priority\n") }
            if setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, -20) != 0 {
                console.warning("--priority=rt: \(String(cString: strerror(errno)))")
            }
        }
        let (dictionary, unreadable) = readDictionary(console: console)
        if unreadable { return 1 }
        let levels = compressionSettings.levelPolicy.benchmarkLevels(last: benchmarkSettings.lastLevel)
        let (first, last) = (levels.lowerBound, levels.upperBound)
        if last > first, reporting.verbose > 0 {
            console.write("weir: benchmarking levels from \(first) to \(last)\n")
        }
        let files = inputs.filter { $0 != "-" }
        let groups: [[String]] = files.isEmpty ? [[]] : benchmarkSettings.separateFiles ? files.map { [$0] } : [files]
        for group in groups {
            let sample: BenchmarkSample
            do throws(WeirError) {
                sample = group.isEmpty ? try BenchmarkSample.synthetic() : try BenchmarkSample.load(paths: group)
            } catch {
                console.error(CommandHint.message(for: error))
                return 1
            }
            let seconds = benchmarkSettings.seconds
            if reporting.quiet == 1 {
                print(BenchmarkLine.header(version: WeirCommand.version, inputBytes: sample.size, seconds: seconds,
                                           blockSize: compressionSettings.chunkSize ?? 0))
            }
            let run = Benchmark(sample: sample, seconds: Double(seconds))
            for level in first...last {
                guard benchmark(run, level: level, dictionary: dictionary, console: console) else { return 1 }
                if benchmarkSettings.decodesOnly { break }
            }
        }
        return 0
    }

    /// One level of `run`: weir's row, then libzstd's (not with -q, whose
    /// one line per level is weir's). False after an error, shown.
    private func benchmark(_ run: Benchmark, level: Int, dictionary: ZstdDictionary?, console: Console) -> Bool {
        var compression = compressionOptions(level: level, dictionary: dictionary)
        compression.mapInput = true
        var decompression = decompressionOptions(toStandardOutput: false, dictionary: dictionary)
        decompression.sparse = false
        let decodeOnly = benchmarkSettings.decodesOnly
        let name = run.sample.name
        do throws(WeirError) {
            let weir = try run.weir(compression, decompression, decodeOnly: decodeOnly)
            switch reporting.quiet {
            case 0:
                print(
                    BenchmarkLine.text(
                        level: level, name: name, result: weir, label: BenchmarkLine.label("weir", result: weir)))
                let workers = compression.resolvedThreads
                if let libzstd = try run.libzstd(
                    compression, workers: workers, blockSize: compressionSettings.chunkSize,
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
