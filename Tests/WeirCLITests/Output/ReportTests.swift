import Foundation
import Testing
import Weir
import WeirCLI

/// The summary lines and the JSON records, from statistics made by hand.
@Suite("reports")
struct ReportTests {
    func statistics(_ bytesIn: Int, _ bytesOut: Int, seconds: Double, threads: Int = 2, frames: Int = 3) -> Statistics {
        var statistics = Statistics()
        statistics.bytesIn = bytesIn
        statistics.bytesOut = bytesOut
        statistics.seconds = seconds
        statistics.threads = threads
        statistics.frames = frames
        statistics.cpuSeconds = 2.8
        statistics.peakResidentBytes = 85 << 20
        return statistics
    }

    let compress = FileJob(input: "linux.tar", operation: .compress(CompressionOptions(level: 3, threads: 2)),
                           destination: .file("linux.tar.zst"))

    @Test("the summary keeps zstd's format; -v adds CPU time and peak memory")
    func summary() {
        let stats = statistics(1_363_652_608, 200_800_000, seconds: 1.46)
        #expect(SummaryLine(job: compress, statistics: stats).text
                == "linux.tar: 14.73% (1.27 GiB => 191.5 MiB, linux.tar.zst) in 1.46 s, 890.7 MiB/s, 2 threads")
        #expect(SummaryLine(job: compress, statistics: stats, verbose: true).text.hasSuffix(
            ", 2 threads, cpu 2.80 s, peak memory 85.00 MiB"))
        let test = FileJob(input: "a.zst", operation: .test(DecompressionOptions()), destination: .none)
        #expect(SummaryLine(job: test, statistics: statistics(1024, 4096, seconds: 1)).text
                == "a.zst: OK, 1.00 KiB => 4.00 KiB in 1.00 s, 4.00 KiB/s, 3 frames")
    }

    @Test(
        "decompression starts with zstd's `NAME : N bytes`; its speed is of the decompressed side; one frame is 'frame'"
    )
    func decompressionSummary() throws {
        let decompress = FileJob(input: "linux.tar.zst", operation: .decompress(DecompressionOptions()),
                                 destination: .file("linux.tar"))
        #expect(
            SummaryLine(job: decompress, statistics: statistics(200 << 20, 1_000 << 20, seconds: 0.5)).text
                == "linux.tar.zst       : 1048576000 bytes (200.0 MiB => 1000.0 MiB, linux.tar) in 0.50 s, 1.95 "
                    + "GiB/s, 3 frames"
        )
        #expect(SummaryLine(job: decompress, statistics: statistics(100, 400, seconds: 1, frames: 1)).text
                == "linux.tar.zst       : 400 bytes (100 B => 400 B, linux.tar) in 1.00 s, 400 B/s, 1 frame")
        // What zstd's own tests grep in its line (`[A-Za-z0-9._ ]+: [0-9]+ bytes`), from standard input too.
        let piped = FileJob(input: "-", operation: .decompress(DecompressionOptions()), destination: .file("out"))
        let text = SummaryLine(job: piped, statistics: statistics(100, 400, seconds: 1, frames: 1)).text
        #expect(text.range(of: "[A-Za-z0-9._ ]+: [0-9]+ bytes", options: .regularExpression) != nil, "\(text)")
    }

    @Test("the total line sums the inputs and counts failures")
    func totalLine() {
        var totals = RunTotals(operation: .compress)
        totals.add(compress, statistics(1 << 20, 1 << 18, seconds: 1))
        totals.add(compress, statistics(3 << 20, 1 << 18, seconds: 1, threads: 4))
        #expect(
            SummaryLine(totals: totals).text
                == "2 files: 12.50% (4.00 MiB => 512.0 KiB) in 2.00 s, 2.00 MiB/s, 4 threads")
        totals.addFailure()
        #expect(SummaryLine(totals: totals).text.hasPrefix("3 files, 1 failed: 12.50%"))
    }

    func object(_ record: JSONRecord) throws -> [String: Any] {
        let line = record.line()
        #expect(!line.contains("\n"))
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test("a JSON record has every field, snake_case, with nulls where they do not apply")
    func json() throws {
        let record = JSONRecord(job: compress, statistics: statistics(4 << 20, 1 << 20, seconds: 2))
        let object = try object(record)
        #expect(Set(object.keys) == ["operation", "input", "output", "bytes_in", "bytes_out", "ratio", "seconds",
                                     "cpu_seconds", "mib_per_s_in", "mib_per_s_out", "threads", "level",
                                     "chunk_bytes", "window_log", "frames", "peak_rss_bytes", "status"])
        #expect(object["operation"] as? String == "compress")
        #expect(object["output"] as? String == "linux.tar.zst")
        #expect(object["bytes_in"] as? Int == 4 << 20)
        #expect(object["ratio"] as? Double == 0.25)
        #expect(object["mib_per_s_in"] as? Double == 2)
        #expect(object["mib_per_s_out"] as? Double == 0.5)
        #expect(object["level"] as? Int == 3)
        #expect(object["chunk_bytes"] as? Int == CompressionOptions.defaultChunkSize)
        #expect(object["status"] as? String == "ok")
        #expect(try JSONDecoder().decode(JSONRecord.self, from: Data(record.line().utf8)) == record)

        let test = FileJob(input: "-", operation: .test(DecompressionOptions()), destination: .none)
        let failed = try self.object(
            JSONRecord(job: test, statistics: Statistics(), error: "(stdin): not in zstd format"))
        #expect(failed["input"] as? String == "-")
        #expect(failed["output"] is NSNull)
        #expect(failed["level"] is NSNull)
        #expect(failed["chunk_bytes"] is NSNull)
        #expect(failed["status"] as? String == "error")
        #expect(failed["error"] as? String == "(stdin): not in zstd format")
        #expect(failed["total"] == nil)
    }

    @Test("chunk_bytes is the chunk size the run used, which a small file refits; the options' only for a failure")
    func jsonChunkUsed() throws {
        var used = statistics(5_000_000, 1_000_000, seconds: 1, frames: 2)
        used.chunkBytes = 2_555_904
        #expect(try object(JSONRecord(job: compress, statistics: used))["chunk_bytes"] as? Int == 2_555_904)
        let failed = try object(JSONRecord(job: compress, statistics: Statistics(), error: "linux.tar: read failed"))
        #expect(failed["chunk_bytes"] as? Int == CompressionOptions.defaultChunkSize)

        var totals = RunTotals(operation: .compress)
        totals.add(compress, used)
        var large = used
        large.chunkBytes = 8 << 20
        totals.add(compress, large)
        #expect(try object(JSONRecord(totals: totals))["chunk_bytes"] as? Int == 8 << 20)
    }

    @Test("window_log is the run's, null without frames; the total has the largest")
    func jsonWindowLog() throws {
        var small = statistics(1 << 20, 1 << 18, seconds: 1)
        small.windowLog = 20
        #expect(try object(JSONRecord(job: compress, statistics: small))["window_log"] as? Int == 20)
        #expect(
            try object(JSONRecord(job: compress, statistics: Statistics(), error: "x: failed"))["window_log"] is NSNull)
        var large = small
        large.windowLog = 27
        var totals = RunTotals(operation: .compress)
        totals.add(compress, large)
        totals.add(compress, small)
        totals.add(compress, Statistics())
        #expect(try object(JSONRecord(totals: totals))["window_log"] as? Int == 27)
    }

    @Test("a run's warnings go into its object as a \"warnings\" array, only when there are some; never into the total")
    func jsonWarnings() throws {
        let decompress = FileJob(
            input: "a.zst", operation: .decompress(DecompressionOptions()), destination: .file("a"))
        var warned = statistics(1 << 20, 4 << 20, seconds: 1)
        warned.warnings = ["seek table does not match the frames; ignoring it (entry 2 lists 7 bytes of content, "
                           + "but frame 2 at offset 99 declares 8)"]
        let record = JSONRecord(job: decompress, statistics: warned)
        let object = try object(record)
        #expect(object["warnings"] as? [String] == warned.warnings)
        #expect(object["status"] as? String == "ok")
        #expect(try JSONDecoder().decode(JSONRecord.self, from: Data(record.line().utf8)) == record)
        #expect(
            try self.object(JSONRecord(job: decompress, statistics: statistics(1, 1, seconds: 1)))["warnings"] == nil)
        var totals = RunTotals(operation: .decompress)
        totals.add(decompress, warned)
        #expect(try self.object(JSONRecord(totals: totals))["warnings"] == nil)
    }

    @Test("the total object: total true, inputs summed, failures counted")
    func jsonTotal() throws {
        var totals = RunTotals(operation: .compress)
        totals.add(compress, statistics(1 << 20, 1 << 18, seconds: 1))
        totals.addFailure()
        let object = try object(JSONRecord(totals: totals))
        #expect(object["total"] as? Bool == true)
        #expect(object["input"] is NSNull)
        #expect(object["bytes_in"] as? Int == 1 << 20)
        #expect(object["status"] as? String == "error")
        #expect(object["error"] as? String == "1 of 2 inputs failed")
    }
}
