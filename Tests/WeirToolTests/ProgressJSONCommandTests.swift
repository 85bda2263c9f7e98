import Foundation
import Testing

/// `--progress=json`: the progress as a stream another program reads, one
/// JSON object per line on stderr, parsed here line by line.
@Suite("weir --progress=json")
struct ProgressJSONCommandTests {
    /// Every key of a record (man weir lists each: ManualTests).
    static let keys = [
        "event", "operation", "input", "file", "files", "bytes_in", "bytes_read", "bytes_out", "total_bytes",
        "percent", "bytes_per_second", "eta_seconds", "seconds", "level", "frames", "status",
    ]
    /// Every key of an error, warning or note (man weir lists them).
    static let messageKeys = ["event", "input", "message", "status"]

    /// Every line of `stderr` as a JSON object; a line that is not one fails the test.
    func objects(_ stderr: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String: Any]] {
        try stderr.split(separator: "\n").map { line in
            let object = try #require(try? JSONSerialization.jsonObject(with: Data(line.utf8)),
                                      "not JSON: \(line.debugDescription) in \(stderr.debugDescription)",
                                      sourceLocation: sourceLocation)
            return try #require(object as? [String: Any], "\(line)", sourceLocation: sourceLocation)
        }
    }

    /// The progress records of `input`, checked for what a program relies
    /// on: every key, progress records then one end, never going back.
    func records(of input: String, in objects: [[String: Any]],
                 sourceLocation: SourceLocation = #_sourceLocation) -> [[String: Any]] {
        let mine = objects.filter {
            ["progress", "end"].contains($0["event"] as? String) && $0["input"] as? String == input
        }
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

    @Test(
        "files: records while each is compressed, then its end at 100%; with --json both streams",
        .timeLimit(.minutes(5)))
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
            #expect(
                records.allSatisfy { ($0["percent"] as? Double ?? -1) >= 0 && ($0["percent"] as? Double ?? 101) <= 100 }
            )
        }
        // Midway, a program sees the speed and the time left.
        let midway = a.filter { ($0["percent"] as? Double).map { $0 > 0 && $0 < 100 } ?? false }
        #expect(midway.contains { $0["bytes_per_second"] is Double && $0["eta_seconds"] is Double }, "\(a)")
        // --json's statistics come on the same stream, each after its file's end record.
        let statistics = objects.filter { $0["event"] == nil }
        #expect(statistics.map { $0["input"] as? String } == ["a", "b", nil])
        let endOfA = try #require(
            objects.firstIndex { $0["event"] as? String == "end" && $0["input"] as? String == "a" })
        let statisticsOfA = try #require(objects.firstIndex { $0["event"] == nil && $0["input"] as? String == "a" })
        #expect(endOfA < statisticsOfA)
        #expect(objects.allSatisfy { $0["event"] != nil || $0["bytes_in"] != nil })
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
        #expect(
            records.allSatisfy { $0["total_bytes"] is NSNull && $0["percent"] is NSNull && $0["eta_seconds"] is NSNull }
        )
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
        let run = try WeirProcess.shell(
            "cp a \"$(printf 'n\\377')\" && $WEIR --json --progress=json \"$(printf 'n\\377')\"",
            in: scratch.url)
        #expect(run.status == 0, "\(run.stderr)")
        let objects = try self.objects(run.stderr)
        let name = try #require(objects.first { $0["event"] == nil }?["input"] as? String)
        #expect(name.unicodeScalars.map(\.value) == [0x6E, 0x10FFFF], "\(name.unicodeScalars.map(\.value))")
        #expect(records(of: name, in: objects).last?["event"] as? String == "end")

        let off = try WeirProcess.run(["--progress=json", "--no-progress", "-f", "a"], in: scratch.url)
        #expect(off.status == 0 && !off.stderr.contains("\"event\""), "\(off.stderr)")
    }

    @Test(
        """
        -d of .gz and .xz, from a file and a pipe: bytes_in follows the decoding to the compressed size; frames \
        decoded
        """,
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

    /// The end record of `input`, and its error records, checked: an error
    /// says its message, input and exit status; the end says it failed and
    /// never 100%.
    func failure(of input: String, in objects: [[String: Any]], _ context: String,
                 sourceLocation: SourceLocation = #_sourceLocation) {
        let errors = objects.filter { $0["event"] as? String == "error" && $0["input"] as? String == input }
        #expect(errors.count == 1, "\(context): \(input): \(objects)", sourceLocation: sourceLocation)
        for error in errors {
            #expect(Set(error.keys) == Set(Self.messageKeys), "\(error)", sourceLocation: sourceLocation)
            #expect((error["message"] as? String ?? "").contains(input), "\(error)", sourceLocation: sourceLocation)
            #expect(error["status"] as? Int == 1, "\(error)", sourceLocation: sourceLocation)
        }
        let ends = objects.filter { $0["event"] as? String == "end" && $0["input"] as? String == input }
        for end in ends {
            #expect(end["status"] as? String == "error", "\(context): \(end)", sourceLocation: sourceLocation)
            #expect((end["percent"] as? Double).map { $0 < 100 } ?? true, "\(context): \(end)",
                    sourceLocation: sourceLocation)
        }
    }

    @Test("every line on stderr is JSON, -q or not: compress, -d, -t, -r, inputs missing and corrupt among others",
          .timeLimit(.minutes(5)))
    func onlyJSON() throws {
        let scratch = Scratch()
        scratch.text("a", size: 3_000_000)
        scratch.text("b", size: 1_000_000, seed: 2)
        #expect(try WeirProcess.run(["-q", "-B1M", "a", "-o", "good.zst"], in: scratch.url).status == 0)
        // A flipped byte inside the second frame: the checksum or the block fails.
        var bad = try #require(scratch.data("good.zst"))
        bad[bad.count / 2] ^= 0xFF
        try bad.write(to: URL(fileURLWithPath: scratch.path("bad.zst")))
        try FileManager.default.createDirectory(atPath: scratch.path("tree"), withIntermediateDirectories: true)
        scratch.text("tree/c", size: 500_000, seed: 3)
        scratch.text("tree/d", size: 500_000, seed: 4)
        let cases: [(arguments: [String], ok: [String], failed: [String])] = [
            (["-f", "a"], ["a"], []),
            (["-f", "a", "missing", "b"], ["a", "b"], ["missing"]),
            (["-d", "-f", "good.zst", "bad.zst", "missing.zst", "-o", "out"], ["good.zst"], ["bad.zst", "missing.zst"]),
            (["-d", "-f", "bad.zst", "good.zst"], ["good.zst"], ["bad.zst"]),
            (["-t", "good.zst", "bad.zst", "missing.zst"], ["good.zst"], ["bad.zst", "missing.zst"]),
            (["-r", "-f", "tree"], ["tree/c", "tree/d"], []),
            (["--json", "-f", "a", "missing"], ["a"], ["missing"]),
        ]
        for (arguments, ok, failed) in cases {
            for quiet in [[], ["-q"]] {
                let all = quiet + ["--progress=json"] + arguments
                let run = try WeirProcess.run(all, in: scratch.url)
                #expect(run.status == (failed.isEmpty ? 0 : 1), "\(all): \(run.stderr)")
                let objects = try self.objects(run.stderr)
                #expect(!run.stderr.isEmpty && !run.stderr.contains("\nweir:") && !run.stderr.hasPrefix("weir:"),
                        "\(all): \(run.stderr)")
                for input in ok {
                    let end = records(of: input, in: objects).last
                    #expect(end?["status"] as? String == "ok" && end?["percent"] as? Double == 100, "\(all): \(input)")
                }
                for input in failed { failure(of: input, in: objects, "\(all)") }
                #expect(objects.filter { $0["event"] as? String == "error" }.count == failed.count, "\(all)")
            }
        }
    }

    @Test("""
          every input gets exactly one end object with a true status, refused or skipped before its work began \
          (issue 67): an output not overwritten (no prompt in the stream), an unknown suffix under -d, a file \
          already compressed under -r, a symbolic link skipped (given or found by -r; its warning names it), a file \
          --exclude-compressed leaves out; each counted among the files
          """)
    func endForEveryInput() throws {
        let scratch = Scratch()
        scratch.text("a", size: 200_000)
        scratch.text("a.zst", size: 10)
        scratch.text("x.txt", size: 10)
        try FileManager.default.createDirectory(atPath: scratch.path("tree"), withIntermediateDirectories: true)
        scratch.text("tree/c", size: 300_000, seed: 3)
        #expect(try WeirProcess.run(["-q", "-r", "tree"], in: scratch.url).status == 0)
        scratch.text("tree/d", size: 300_000, seed: 4)
        scratch.text("b", size: 1000, seed: 5)
        scratch.text("c.gz", size: 1000, seed: 6)
        let links = "ln -s b link && mkdir linked && ln -s ../b linked/inner && cp b linked/e"
        #expect(try WeirProcess.shell(links, in: scratch.url).status == 0)
        let cases: [(arguments: [String], ends: [String: String], status: Int32)] = [
            (["a"], ["a": "error"], 1),
            (["-d", "x.txt"], ["x.txt": "error"], 1),
            (["-r", "tree"], ["tree/c": "skipped", "tree/d": "ok"], 0),
            (["-c", "link", "b"], ["link": "skipped", "b": "ok"], 0),
            (["-c", "link"], ["link": "skipped"], 1),
            (["-c", "-r", "linked"], ["linked/inner": "skipped", "linked/e": "ok"], 0),
            (["-c", "--exclude-compressed", "c.gz", "b"], ["c.gz": "skipped", "b": "ok"], 0),
        ]
        for (arguments, expected, status) in cases {
            let all = ["--progress=json"] + arguments
            // Standard input a pipe with "y": a prompt would be answered.
            let run = try WeirProcess.shell("echo y | $WEIR \(all.joined(separator: " "))", in: scratch.url)
            #expect(run.status == status, "\(all): \(run.stderr)")
            let objects = try self.objects(run.stderr)
            #expect(!run.stderr.contains("overwrite (y/n)"), "\(all): \(run.stderr)")
            for (input, want) in expected {
                let ends = objects.filter { $0["event"] as? String == "end" && $0["input"] as? String == input }
                #expect(ends.count == 1 && ends.first?["status"] as? String == want, "\(all): \(input): \(objects)")
                if let end = ends.first {
                    #expect(Set(end.keys) == Set(Self.keys), "\(end)")
                    #expect(end["files"] as? Int == expected.count, "\(all): \(end)")
                }
            }
            // No warning without its input named (a skipped link's names it).
            let warnings = objects.filter { $0["event"] as? String == "warning" }
            #expect(warnings.allSatisfy { $0["input"] is String }, "\(all): \(warnings)")
        }
        #expect(scratch.data("a.zst")?.count == 10, "a.zst was overwritten")
    }

    @Test("a warning is a JSON object naming its input: a kept .part that cannot be resumed")
    func warnings() throws {
        let scratch = Scratch()
        scratch.text("a", size: 9_000_000)
        scratch.text("a.zst.part", size: 100)
        scratch.text(".a.zst.part.resume", size: 100)
        let run = try WeirProcess.run(["--progress=json", "-B1M", "a"], in: scratch.url)
        #expect(run.status == 0, "\(run.stderr)")
        let objects = try self.objects(run.stderr)
        let warning = try #require(objects.first { $0["event"] as? String == "warning" }, "\(run.stderr)")
        #expect(Set(warning.keys) == Set(Self.messageKeys))
        #expect(warning["input"] as? String == "a" && warning["status"] is NSNull, "\(warning)")
        #expect((warning["message"] as? String ?? "").contains("was not resumed"), "\(warning)")
        #expect(records(of: "a", in: objects).last?["status"] as? String == "ok")
    }

    @Test("-d and -t --range: records of the range's bytes, from a file and a pipe; a failure is an error record")
    func ranges() throws {
        let scratch = Scratch()
        let original = scratch.text("a", size: 3_000_000)
        #expect(try WeirProcess.run(["-q", "-B1M", "a", "-o", "a.zst"], in: scratch.url).status == 0)
        let file = try WeirProcess.shell("$WEIR -d --progress=json --range=1000:+1500000 a.zst > part",
                                         in: scratch.url)
        #expect(file.status == 0, "\(file.stderr)")
        #expect(scratch.data("part") == original.subdata(in: 1000 ..< 1_501_000))
        let piped = try WeirProcess.shell("cat a.zst | $WEIR -t --progress=json --range=0:+1000,2000:+1000",
                                          in: scratch.url)
        #expect(piped.status == 0, "\(piped.stderr)")
        for (run, input, total, operation) in [(file, "a.zst", 1_500_000, "decompress"), (piped, "-", 2000, "test")] {
            let end = try #require(records(of: input, in: try objects(run.stderr)).last, "\(run.stderr)")
            #expect(end["event"] as? String == "end" && end["status"] as? String == "ok", "\(end)")
            #expect(end["operation"] as? String == operation, "\(end)")
            #expect(end["total_bytes"] as? Int == total && end["bytes_out"] as? Int == total, "\(end)")
            #expect(end["percent"] as? Double == 100, "\(end)")
        }
        let past = try WeirProcess.run(["-d", "--progress=json", "--range=2999000:+5000", "a.zst", "-c"],
                                       in: scratch.url, stdoutPath: "/dev/null")
        #expect(past.status == 1)
        failure(of: "a.zst", in: try objects(past.stderr), "past the end")
    }

    @Test("a --size-hint below the true size: percent stays a number below 100, the end gives 100 and the true size")
    func smallHint() throws {
        let scratch = Scratch()
        let original = scratch.text("a", size: 3_000_000)
        let run = try WeirProcess.shell(
            "cat a | WEIR_TEST_STEP_DELAY=0.05 $WEIR --progress=json --size-hint=1000000 -B512K -c > a.zst",
            in: scratch.url, timeout: 120)
        #expect(run.status == 0, "\(run.stderr)")
        let records = self.records(of: "-", in: try objects(run.stderr))
        #expect(records.contains { ($0["bytes_in"] as? Int ?? 0) > 1_000_000 && $0["event"] as? String == "progress" },
                "\(records)")
        for record in records.dropLast() {
            let percent = record["percent"] as? Double
            #expect(percent.map { $0 >= 0 && $0 < 100 } == true, "\(record)")
        }
        let end = try #require(records.last)
        #expect(end["percent"] as? Double == 100 && end["status"] as? String == "ok", "\(end)")
        #expect(end["total_bytes"] as? Int == original.count && end["bytes_in"] as? Int == original.count, "\(end)")
    }
}
