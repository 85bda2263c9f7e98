// weir as a library: the smallest program a user writes with it.
//
//     WeirExample FILE [LEVEL]
//
// compresses FILE to FILE.zst with `Compressor`'s defaults but the level,
// decodes that to FILE.out with `Decompressor`'s, and prints a line of what
// each run's `Statistics` say. No worker count is given: the engine plans
// them from the cores and the memory this process may use, as the `weir`
// command does (the tests run it in a memory cgroup).
import Glibc
import Weir

/// Says `message` on standard error and exits with `status`.
func fail(_ message: String, status: Int32) -> Never {
    let bytes = Array("\(message)\n".utf8)
    _ = write(2, bytes, bytes.count)
    exit(status)
}

let arguments = CommandLine.arguments
guard arguments.count == 2 || arguments.count == 3, let level = Int(arguments.count == 3 ? arguments[2] : "3") else {
    fail("usage: WeirExample FILE [LEVEL]", status: 2)
}
let path = arguments[1]

func line(_ name: String, _ statistics: Statistics) -> String {
    "\(name): \(statistics.bytesIn) -> \(statistics.bytesOut) bytes, \(statistics.frames) frames, "
        + "\(statistics.threads) threads, chunk \(statistics.chunkBytes ?? 0), peak \(statistics.peakResidentBytes)"
}

do {
    let compressor = Compressor(options: CompressionOptions(level: level))
    print(line("compressed", try await compressor.compress(file: path, force: true)))
    let decompressed = try await Decompressor().decompress(file: path + ".zst", to: path + ".out", force: true)
    print(line("decompressed", decompressed))
} catch {
    fail("WeirExample: \(error)", status: 1)
}
