import Foundation
import Testing

/// `--progress=json`: the progress as a stream another program reads, one
/// JSON object per line on stderr, parsed here line by line.
@Suite("weir --progress=json")
struct ProgressJSONCommandTests {
    /// Every key of a record (man weir lists each: ManualTests).
    static let keys = ["event", "operation", "input", "file", "files", "bytes_in", "bytes_read", "bytes_out", "total_bytes",
                       "percent", "bytes_per_second", "eta_seconds", "seconds", "level", "frames"]

    /// Every line of `stderr` as a JSON object; a line that is not one fails the test.
    func objects(_ stderr: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String: Any]] {
        try stderr.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(object as? [String: Any], "\(line)", sourceLocation: sourceLocation)
        }
    }

    /// The progress records of `input`, checked for what a program relies
    /// on: every key, progress records then one end, never going back.
    func records(of input: String, in objects: [[String: Any]],
                 sourceLocation: SourceLocation = #_sourceLocation) -> [[String: Any]] {
        let mine = objects.filter { $0["event"] != nil && $0["input"] as? String == input }
        for record in mine {
            #expect(Set(record.keys) == Set(Self.keys), "\(record)", sourceLocation: sourceLocation)
        }
        let events = mine.compactMap { $0["event"] as? String }
        #expect(events.last == "end" && events.dropLast().allSatisfy { $0 == "progress" }, "\(input): \(events)",
                sourceLocation: sourceLocation)
        for key in ["bytes_in", "bytes_out", "seconds", "percent", "frames"] {
            let values = mine.compactMap { ($0[key] as? NSNumber)?.doubleValue }
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "\(input) \(key): \(values)",
                    sourceLocation: sourceLocation)
        }
        return mine
    }

    @Test("files: records while each is compressed, then its end at 100%; with --json both streams", .timeLimit(.minutes(5)))
    func files() throws {
        let scratch = Scratch()
        scratch.text("a", size: 8_000_000)
        scratch.text("b", size: 1_000_000, seed: 2)
        let run = try WeirProcess.shell("WEIR_TEST_STEP_DELAY=0.1 $WEIR -3 -T2 --json --progress=json a b",
                                        in: scratch.url, timeout: 300)
        #expect(run.status == 0, "\(run.stderr)")
        let objects = try self.objects(run.stderr)
        let a = records(of: "a", in: objects)
        let b = records(of: "b", in: objects)
        #expect(a.count >= 4, "\(a)")  // a slowed run: several updates, then the end
        for (records, name, size, file) in [(a, "a", 8_000_000, 1), (b, "b", 1_000_000, 2)] {
            let end = try #require(records.last)
            #expect(end["operation"] as? String == "compress")
            #expect(end["file"] as? Int == file && end["files"] as? Int == 2)
            #expect(end["total_bytes"] as? Int == size && end["bytes_in"] as? Int == size)
            #expect(end["percent"] as? Double == 100)
            #expect(end["level"] as? Int == 3)
            #expect((end["frames"] as? Int ?? 0) >= 1)
            let written = scratch.data(name + ".zst")?.count ?? 0
            #expect((end["bytes_out"] as? Int ?? 0) > 0 && (end["bytes_out"] as? Int ?? 0) <= written)
            #expect(records.allSatisfy { ($0["percent"] as? Double ?? -1) >= 0 && ($0["percent"] as? Double ?? 101) <= 100 })
        }
        // Midway, a program sees the speed and the time left.
        let midway = a.filter { ($0["percent"] as? Double).map { $0 > 0 && $0 < 100 } ?? false }
        #expect(midway.contains { $0["bytes_per_second"] is Double && $0["eta_seconds"] is Double }, "\(a)")
        // --json's statistics come on the same stream, each after its file's end record.
        let statistics = objects.filter { $0["status"] != nil }
        #expect(statistics.map { $0["input"] as? String } == ["a", "b", nil])
        let endOfA = try #require(objects.firstIndex { $0["event"] as? String == "end" && $0["input"] as? String == "a" })
        let statisticsOfA = try #require(objects.firstIndex { $0["status"] != nil && $0["input"] as? String == "a" })
        #expect(endOfA < statisticsOfA)
        #expect(objects.allSatisfy { $0["event"] != nil || $0["status"] != nil })
    }

    @Test("a pipe without a size: total, percent and ETA are null; decompressing: no level, the frames decoded")
    func unknownSizeAndDecompression() throws {
        let scratch = Scratch()
        let original = scratch.text("a", size: 3_000_000)
        let piped = try WeirProcess.shell("cat a | WEIR_TEST_STEP_DELAY=0.05 $WEIR --progress=json -c > a.zst",
                                          in: scratch.url, timeout: 120)
        #expect(piped.status == 0, "\(piped.stderr)")
        let records = self.records(of: "-", in: try objects(piped.stderr))
        #expect(!records.isEmpty)
        #expect(records.allSatisfy { $0["total_bytes"] is NSNull && $0["percent"] is NSNull && $0["eta_seconds"] is NSNull })
        #expect(records.last?["bytes_in"] as? Int == original.count)

        let decoded = try WeirProcess.shell("$WEIR -d --progress=json -c a.zst > back", in: scratch.url)
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(scratch.data("back") == original)
        let end = try #require(self.records(of: "a.zst", in: try objects(decoded.stderr)).last)
        #expect(end["operation"] as? String == "decompress")
        #expect(end["level"] is NSNull)
        // Frames decoded, and the compressed bytes they took.
        let written = try #require(scratch.data("a.zst"))
        #expect((end["frames"] as? Int ?? 0) >= 1, "\(end)")
        #expect(end["bytes_in"] as? Int == written.count && end["bytes_read"] as? Int == written.count)
        #expect(end["percent"] as? Double == 100)
        #expect(end["bytes_out"] as? Int == original.count)
    }

    @Test("a name that is not UTF-8 is written as --json writes it; --no-progress after it turns it off")
    func namesAndOff() throws {
        let scratch = Scratch()
        scratch.text("a", size: 200_000)
        let run = try WeirProcess.shell("cp a \"$(printf 'n\\377')\" && $WEIR --json --progress=json \"$(printf 'n\\377')\"",
                                        in: scratch.url)
        #expect(run.status == 0, "\(run.stderr)")
        let objects = try self.objects(run.stderr)
        let name = try #require(objects.first { $0["status"] != nil }?["input"] as? String)
        #expect(name.unicodeScalars.map(\.value) == [0x6E, 0x10FFFF], "\(name.unicodeScalars.map(\.value))")
        #expect(records(of: name, in: objects).last?["event"] as? String == "end")

        let off = try WeirProcess.run(["--progress=json", "--no-progress", "-f", "a"], in: scratch.url)
        #expect(off.status == 0 && !off.stderr.contains("\"event\""), "\(off.stderr)")
    }

    @Test("-d of .gz and .xz, from a file and a pipe: bytes_in follows the decoding to the compressed size; frames decoded",
          .timeLimit(.minutes(5)))
    func otherFormats() throws {
        let scratch = Scratch()
        let original = scratch.text("a", size: 8_000_000)
        for format in ["gzip", "xz"] {
            let name = format == "gzip" ? "a.gz" : "a.xz"
            let made = try WeirProcess.run(["--format=\(format)", "-q", "-f", "a", "-o", name], in: scratch.url)
            #expect(made.status == 0, "\(made.stderr)")
            let size = try #require(scratch.data(name)?.count)
            // A file: weir's members decode in parallel, each counted once decoded.
            let file = try WeirProcess.shell("WEIR_TEST_STEP_DELAY=0.05 $WEIR -d --progress=json -c \(name) > back",
                                             in: scratch.url, timeout: 120)
            #expect(file.status == 0 && scratch.data("back") == original, "\(file.stderr)")
            let end = try #require(records(of: name, in: try objects(file.stderr)).last)
            #expect(end["bytes_in"] as? Int == size && end["percent"] as? Double == 100, "\(end)")
            #expect((end["frames"] as? Int ?? 0) >= 1, "\(end)")
            // A pipe: the serial decoder, step by step (the hint is the compressed size).
            let piped = try WeirProcess.shell(
                "cat \(name) | WEIR_TEST_STEP_DELAY=0.3 $WEIR -d --size-hint \(size) --progress=json -c > back",
                in: scratch.url, timeout: 120)
            #expect(piped.status == 0 && scratch.data("back") == original, "\(piped.stderr)")
            let records = self.records(of: "-", in: try objects(piped.stderr))
            let between = Set(records.compactMap { $0["bytes_in"] as? Int }.filter { $0 > 0 && $0 < size })
            #expect(between.count >= 2, "\(format): \(records)")
            #expect(records.last?["bytes_in"] as? Int == size && (records.last?["frames"] as? Int ?? 0) >= 1,
                    "\(format): \(records.last ?? [:])")
        }
    }
}
