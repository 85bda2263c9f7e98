import Foundation
import Testing

/// `-D DICT` and `--train`, against the real zstd in every direction.
@Suite("weir -D and --train")
struct DictionaryCommandTests {
    /// Writes `count` small JSON records, alike as a dictionary's samples
    /// are, as s1.json, s2.json …; returns their names.
    @discardableResult
    static func samples(_ scratch: Scratch, count: Int = 30, prefix: String = "s") -> [String] {
        (1...count).map { index in
            var text = "{\"id\": \(index), \"name\": \"user\(index)\", \"email\": \"user\(index)@example.com\", "
                + "\"roles\": [\"reader\", \"writer\"], \"active\": \(index % 3 == 0), \"score\": "
                    + "\(index * 37 % 101)}\n"
            for event in 1...4 {
                text +=
                    "{\"user\": \(index), \"event\": \"login\", \"ok\": true, \"ts\": "
                        + "\(1_700_000_000 + index * 1000 + event)}\n"
            }
            let name = "\(prefix)\(index).json"
            _ = FileManager.default.createFile(atPath: scratch.path(name), contents: Data(text.utf8))
            return name
        }
    }

    /// The `DictID:` line of `zstd -lv`.
    static func dictionaryID(_ scratch: Scratch, _ file: String) throws -> String? {
        let listed = String(decoding: try scratch.zstd(["-lv", file]).stdout, as: UTF8.self)
        return listed.split(separator: "\n").first { $0.hasPrefix("DictID:") }.map(String.init)
    }

    @Test("--train writes ./dictionary by default, the very dictionary zstd --train makes of the same files")
    func trainLikeZstd() throws {
        let scratch = Scratch()
        let names = Self.samples(scratch)
        let trained = try WeirProcess.run(["--train"] + names, in: scratch.url)
        #expect(trained.status == 0, "\(trained.stderr)")
        #expect(trained.stderr.contains("Save dictionary of size"), "\(trained.stderr)")
        try scratch.zstd(["-q", "--train"] + names + ["-o", "zstd.dict"])
        let ours = try #require(scratch.data("dictionary"))
        #expect(ours == scratch.data("zstd.dict"))
        #expect(ours.prefix(4) == Data([0x37, 0xA4, 0x30, 0xEC]), "a zstd dictionary starts with its magic number")
        // --maxdict bounds it, as zstd's does, and -o names it.
        let small = try WeirProcess.run(["-q", "--train", "--maxdict=1K", "-o", "small.dict"] + names, in: scratch.url)
        #expect(small.status == 0, "\(small.stderr)")
        try scratch.zstd(["-q", "--train", "--maxdict=1K", "-o", "zstd-small.dict"] + names)
        let smallDictionary = try #require(scratch.data("small.dict"))
        #expect(smallDictionary.count <= 1024)
        #expect(smallDictionary == scratch.data("zstd-small.dict"))
    }

    @Test("weir -D output is decoded by zstd -d -D and zstd -D output by weir -d -D, files and pipes, many frames")
    func interoperable() throws {
        let scratch = Scratch()
        let names = Self.samples(scratch)
        try scratch.zstd(["-q", "--train"] + names + ["-o", "zstd.dict"])
        try WeirProcess.run(["-q", "--train", "-o", "weir.dict"] + names, in: scratch.url)
        Self.samples(scratch, count: 40, prefix: "new")
        let input = scratch.path("new7.json")
        let original = try #require(scratch.data("new7.json"))

        for dictionary in ["zstd.dict", "weir.dict"] {
            // weir → zstd, from a file; the frame names the dictionary's ID, as zstd's does.
            let compressed = try WeirProcess.run(["-q", "-f", "-D", dictionary, input, "-o", "w.zst"], in: scratch.url)
            #expect(compressed.status == 0, "\(compressed.stderr)")
            try scratch.zstd(["-q", "-f", "-D", dictionary, input, "-o", "z.zst"])
            let id = try Self.dictionaryID(scratch, "z.zst")
            #expect(id != nil && id != "DictID: 0")
            #expect(try Self.dictionaryID(scratch, "w.zst") == id)
            #expect(try scratch.zstd(["-dc", "-D", dictionary, "w.zst"]).stdout == original)
            // The dictionary is what makes such small records small.
            let plain = try WeirProcess.run(["-q", "-c", input], in: scratch.url)
            #expect(try #require(scratch.data("w.zst")).count < plain.stdout.count)
            // zstd → weir, from a file and through a pipe.
            let decoded = try WeirProcess.run(["-q", "-dc", "-D", dictionary, "z.zst"], in: scratch.url)
            #expect(decoded.status == 0, "\(decoded.stderr)")
            #expect(decoded.stdout == original)
            let piped = try WeirProcess.shell(
                "cat z.zst | $WEIR -q -d -D \(dictionary) | cmp - \(input) && echo same", in: scratch.url)
            #expect(String(decoding: piped.stdout, as: UTF8.self) == "same\n", "\(piped.stderr)")
        }

        // Many frames compressed at once share the dictionary: 1 KiB chunks on two workers.
        let all = (1...40).map { "new\($0).json" }.joined(separator: " ")
        let many = try WeirProcess.shell(
            """
            cat \(all) > all.json
            $WEIR -q -T2 --chunk-size 1K -D weir.dict all.json -o all.zst && zstd -q -dc -D weir.dict all.zst | cmp - \
            all.json &&
            cat all.json | $WEIR -q -T2 --chunk-size 1K -D weir.dict | zstd -q -dc -D weir.dict | cmp - all.json &&
            $WEIR -q -dc -T2 -D weir.dict all.zst | cmp - all.json &&
            $WEIR -q -T2 --long=20 -D weir.dict -c all.json | zstd -q -dc --long=20 -D weir.dict | cmp - all.json && \
            echo same
            """, in: scratch.url)
        #expect(String(decoding: many.stdout, as: UTF8.self) == "same\n", "\(many.stderr)")
        let frames = String(decoding: try scratch.zstd(["-l", "all.zst"]).stdout, as: UTF8.self)
        let frameCount = frames.split(separator: "\n").dropFirst().first?.split(separator: " ").first.flatMap {
            Int($0)
        }
        #expect((frameCount ?? 0) > 5, "one frame per KiB: \(frames)")
    }

    @Test("a missing dictionary, a wrong one, none at all: exit 1, zstd's words, no output left")
    func errors() throws {
        let scratch = Scratch()
        let names = Self.samples(scratch)
        try scratch.zstd(["-q", "--train"] + names + ["-o", "right.dict"])
        scratch.text("other1", size: 3000, seed: 1)
        let others = (1...10).map { index in
            let name = "other\(index)"
            scratch.text(name, size: 2000 + index * 100, seed: UInt64(index))
            return name
        }
        try scratch.zstd(["-q", "--train"] + others + ["-o", "wrong.dict"])
        try scratch.zstd(["-q", "-D", "right.dict", "s3.json", "-o", "s3.json.zst"])

        let missing = try WeirProcess.run(["-D", "nope.dict", "s1.json"], in: scratch.url)
        #expect(missing.status == 1)
        #expect(
            missing.stderr.contains("weir: nope.dict: read dictionary failed: No such file or directory"),
            "\(missing.stderr)")
        #expect(!scratch.exists("s1.json.zst"))

        let wrong = try WeirProcess.run(["-d", "-D", "wrong.dict", "s3.json.zst", "-o", "out"], in: scratch.url)
        #expect(wrong.status == 1)
        #expect(
            wrong.stderr.contains(
                "weir: s3.json.zst: Dictionary mismatch: the data was compressed with another dictionary than "
                    + "wrong.dict"
            ),
            "\(wrong.stderr)")
        #expect(!scratch.exists("out"))
        let stock = try scratch.zstd(["-d", "-D", "wrong.dict", "s3.json.zst", "-o", "out"])
        #expect(stock.status != 0 && stock.stderr.contains("Dictionary mismatch"), "zstd refuses it too")

        let none = try WeirProcess.shell("cat s3.json.zst | $WEIR -d > out", in: scratch.url)
        #expect(none.status == 1)
        #expect(
            none.stderr.contains(
                "weir: (stdin): Dictionary mismatch: the data was compressed with a dictionary (frame 0, at offset "
                    + "0); give it with -D"
            ),
            "\(none.stderr)")

        let same = try WeirProcess.run(["-D", "s2.json", "s2.json"], in: scratch.url)
        #expect(same.status == 1)
        #expect(same.stderr.contains("weir: s2.json: cannot use it as an input file and dictionary"), "\(same.stderr)")
    }

    @Test(
        """
        --train refuses fewer than 5 samples with zstd's exit status 14, and writes no dictionary; -B cuts the same \
        files into enough
        """
    )
    func tooFewSamples() throws {
        let scratch = Scratch()
        let names = Self.samples(scratch, count: 4)
        _ = FileManager.default.createFile(atPath: scratch.path("empty"), contents: Data())
        let result = try WeirProcess.run(["--train", "-o", "d"] + names + ["empty"], in: scratch.url)
        #expect(result.status == 14)
        #expect(
            result.stderr.contains(
                "weir: d: nb of samples too low: 4 samples, training needs at least 5; "
                    + "give one file per sample, or cut files into samples of a fixed size with -B SIZE"),
            "\(result.stderr)")
        #expect(
            try scratch.zstd(["-q", "--train", "-o", "z"] + names + ["empty"]).status == 14, "zstd refuses them too")
        #expect(!scratch.exists("d"))
        // Cut into 64-byte samples, the four files are enough, for zstd and for weir alike.
        let cut = try WeirProcess.run(["--train", "-B64", "--maxdict=1K", "-o", "d"] + names, in: scratch.url)
        #expect(cut.status == 0, "\(cut.stderr)")
        try scratch.zstd(["-q", "--train", "-B64", "--maxdict=1K", "-o", "z"] + names)
        #expect(scratch.data("d") != nil && scratch.data("d") == scratch.data("z"))
        let unreadable = try WeirProcess.run(["--train"] + Self.samples(scratch) + ["nope"], in: scratch.url)
        #expect(unreadable.status == 1)
        #expect(
            unreadable.stderr.contains("weir: nope: read sample failed: No such file or directory"),
            "\(unreadable.stderr)")
    }

    /// Compresses `input` with `dictionary` by weir and by zstd, and checks
    /// that each decodes the other's output to `input`.
    static func expectInteroperable(
        _ scratch: Scratch, dictionary: String, input: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let original = try #require(scratch.data(input), sourceLocation: sourceLocation)
        let compressed = try WeirProcess.run(["-q", "-f", "-D", dictionary, input, "-o", "w.zst"], in: scratch.url)
        #expect(compressed.status == 0, "\(compressed.stderr)", sourceLocation: sourceLocation)
        #expect(
            try scratch.zstd(["-q", "-dc", "-D", dictionary, "w.zst"]).stdout == original,
            "zstd -d -D \(dictionary) decodes weir's", sourceLocation: sourceLocation)
        try scratch.zstd(["-q", "-f", "-D", dictionary, input, "-o", "z.zst"])
        let decoded = try WeirProcess.run(["-q", "-dc", "-D", dictionary, "z.zst"], in: scratch.url)
        #expect(
            decoded.status == 0 && decoded.stdout == original,
            "weir -d -D \(dictionary) decodes zstd's: \(decoded.stderr)",
            sourceLocation: sourceLocation)
    }

    @Test(
        """
        every builder and its parameters make zstd's very dictionary, which both use both ways; a search says what it \
        chose
        """,
        arguments: [
            (["--train"], true), (["--train-cover=k=200,d=8"], false), (["--train-cover=steps=4,split=80"], true),
            (["--train-fastcover=k=46,d=8,f=15,split=80"], false), (["--train-fastcover=steps=1,shrink"], true),
            (["--train-fastcover=shrink=5,steps=1"], true), (["--train-fastcover=k=56,d=8,accel=2"], false),
            (["--train-fastcover"], true), (["--train-legacy=selectivity=8"], false),
            (["--train-legacy", "-s5"], false), (["--train-legacy"], false),
            (["-19", "--train-fastcover=k=56,d=8"], false), (["--train-cover=k=200,d=8", "--train"], false),
            (["--train-legacy=s=3", "-s5"], false),
        ])
    func builders(flags: [String], searches: Bool) throws {
        let scratch = Scratch()
        let names = Self.samples(scratch, count: 60)
        let trained = try WeirProcess.run(flags + ["--maxdict=4K", "-o", "weir.dict"] + names, in: scratch.url)
        #expect(trained.status == 0, "\(trained.stderr)")
        #expect(trained.stderr.contains("Save dictionary of size "), "\(trained.stderr)")
        let stock = try scratch.zstd(flags + ["--maxdict=4K", "-o", "zstd.dict"] + names)
        #expect(stock.status == 0, "\(stock.stderr)")
        let dictionary = try #require(scratch.data("weir.dict"))
        #expect(dictionary == scratch.data("zstd.dict"), "the same bytes as zstd \(flags.joined(separator: " "))")
        #expect(dictionary.count <= 4096 && dictionary.prefix(4) == Data([0x37, 0xA4, 0x30, 0xEC]))
        // zstd's lines of the parameters a search chose, k= first: the same as zstd's.
        let chosen = trained.stderr.split(separator: "\n").filter {
            $0.range(of: #"^[a-z]+=\d+$"#, options: .regularExpression) != nil
        }
        #expect((chosen.first?.hasPrefix("k=") ?? false) == searches, "\(trained.stderr)")
        if searches {
            #expect(stock.stderr.contains(chosen.joined(separator: "\n") + "\n"), "\(chosen) in \(stock.stderr)")
        }
        Self.samples(scratch, count: 5, prefix: "new")
        try Self.expectInteroperable(scratch, dictionary: "weir.dict", input: "new3.json")
    }

    @Test("--dictID=N gives the dictionary ID N, which the frames compressed with it carry")
    func dictionaryID() throws {
        let scratch = Scratch()
        let names = Self.samples(scratch)
        for (flags, id) in [
            (["--dictID=1"], UInt32(1)), (["--dictID", "70000"], 70000),
            (["--train-legacy", "--dictID=2K"], 2048), (["--train-cover=k=200,d=8", "--dictID=9"], 9),
        ] {
            let trained = try WeirProcess.run(["-q", "--train"] + flags + ["-o", "d"] + names, in: scratch.url)
            #expect(trained.status == 0, "\(trained.stderr)")
            let header = try #require(scratch.data("d"))
            #expect(
                header.dropFirst(4).prefix(4).enumerated().reduce(UInt32(0)) {
                    $0 | UInt32($1.element) << (8 * $1.offset)
                } == id)
            try scratch.zstd(["-q", "-f", "-D", "d", "s1.json", "-o", "s1.zst"])
            #expect(try Self.dictionaryID(scratch, "s1.zst") == "DictID: \(id)")
        }
        // The ID alone changes: without --dictID, one from the content, outside zstd's reserved ranges.
        try WeirProcess.run(["-q", "--train", "-o", "derived"] + names, in: scratch.url)
        try WeirProcess.run(["-q", "--train", "--dictID=1", "-o", "one"] + names, in: scratch.url)
        let derived = try #require(scratch.data("derived")), one = try #require(scratch.data("one"))
        #expect(
            derived.count == one.count && derived.prefix(4) == one.prefix(4) && derived.dropFirst(8) == one.dropFirst(8)
        )
        let derivedID = derived.dropFirst(4).prefix(4).enumerated().reduce(UInt32(0)) {
            $0 | UInt32($1.element) << (8 * $1.offset)
        }
        #expect(derivedID >= 32768 && derivedID < 1 << 31)
        let overflow = try WeirProcess.run(["--train", "--dictID=4294967296"] + names, in: scratch.url)
        #expect(overflow.status == 1 && !scratch.exists("dictionary"), "\(overflow.stderr)")
        let missing = try WeirProcess.run(["--train"] + names + ["--dictID", "-o", "1", "x"], in: scratch.url)
        #expect(missing.status == 1, "--dictID must be followed by its number")
    }

    @Test("-B cuts large files into samples, as zstd: one large file trains alone; above 128K, refused")
    func cutting() throws {
        let scratch = Scratch()
        // One file of many alike records.
        let records = (1...3000).map { "{\"id\": \($0), \"name\": \"user\($0)\", \"active\": \($0 % 3 == 0)}\n" }
            .joined()
        _ = FileManager.default.createFile(atPath: scratch.path("corpus"), contents: Data(records.utf8))
        let whole = try WeirProcess.run(["--train", "corpus", "-o", "w"], in: scratch.url)
        #expect(whole.status == 14, "one file, one sample (zstd: 14): \(whole.stderr)")
        let cut = try WeirProcess.run(["--train", "-B2K", "--maxdict=8K", "corpus", "-o", "w"], in: scratch.url)
        #expect(cut.status == 0, "\(cut.stderr)")
        #expect(cut.stderr.contains("from \((records.utf8.count + 2047) / 2048) samples"), "\(cut.stderr)")
        try scratch.zstd(["-q", "--train", "-B2K", "--maxdict=8K", "corpus", "-o", "z"])
        #expect(scratch.data("w") != nil && scratch.data("w") == scratch.data("z"))
        let tooLarge = try WeirProcess.run(["--train", "-B129K", "corpus", "-o", "big"], in: scratch.url)
        #expect(tooLarge.status == 1 && !scratch.exists("big"), "\(tooLarge.stderr)")
    }

    @Test("--memory bounds the samples loaded, in zstd's words; too low, the training fails and writes nothing")
    func memoryLimit() throws {
        let scratch = Scratch()
        scratch.text("corpus", size: 3 << 20, seed: 4)
        let bounded = try WeirProcess.run(["--train", "-B2K", "corpus", "-o", "w", "--memory=1MB"], in: scratch.url)
        #expect(bounded.status == 0, "\(bounded.stderr)")
        let stock = try scratch.zstd(["--train", "-B2K", "corpus", "-o", "z", "--memory=1MB"])
        for line in [
            "setting manual memory limit for dictionary training data at 1 MB",
            "Training samples set too large (3 MB); training on 1 MB only...",
        ] {
            #expect(bounded.stderr.contains(line), "\(bounded.stderr)")
            #expect(stock.stderr.contains(line), "zstd says so too: \(stock.stderr)")
        }
        #expect(
            scratch.data("w") != nil && scratch.data("w") == scratch.data("z"), "the same samples, the same dictionary")
        // -q keeps the second (zstd shows it at its -q level too).
        let quiet = try WeirProcess.run(["-q", "--train", "-B2K", "corpus", "-o", "w", "-M1MB"], in: scratch.url)
        #expect(quiet.stderr.contains("training on 1 MB only"), "\(quiet.stderr)")
        let tooLow = try WeirProcess.run(["--train", "-B2K", "corpus", "-o", "low", "--memory=10K"], in: scratch.url)
        #expect(tooLow.status == 1, "\(tooLow.stderr)")
        #expect(tooLow.stderr.contains("weir: low: dictionary training failed: "), "\(tooLow.stderr)")
        #expect(!scratch.exists("low"))
        #expect(try scratch.zstd(["-q", "--train", "-B2K", "corpus", "-o", "zlow", "--memory=10K"]).status != 0)
    }

    @Test(
        "invalid parameters are refused with exit 1, as zstd refuses them, and no file is written",
        arguments: [
            ["--train-fastcover=k=56,d=8,accel=15"], ["--train-cover=k=1,x=2"], ["--train-cover="],
            ["--train-fastcover=k=56,"], ["--train-legacy=s=8x"], ["--train-legacy=8"], ["--train-cover=f=20"],
            ["--train-fastcover=k=5000000000"], ["--train-cover=k=1,d=8", "--train-cover=k"],
        ])
    func invalidParameters(flags: [String]) throws {
        let scratch = Scratch()
        let names = Self.samples(scratch)
        let before = scratch.names
        let result = try WeirProcess.run(flags + names, in: scratch.url)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(!result.stderr.isEmpty)
        #expect(scratch.names == before, "no dictionary, no temporary file")
        #expect(try scratch.zstd(flags + names + ["-o", "z"]).status != 0, "zstd refuses it too")
    }

    @Test("-r trains on the files under folders; -o before or after; ./dictionary by default; no file, no training")
    func inputsAndOutput() throws {
        let scratch = Scratch()
        try FileManager.default.createDirectory(atPath: scratch.path("set/deeper"), withIntermediateDirectories: true)
        Self.samples(scratch, count: 15, prefix: "set/a")
        Self.samples(scratch, count: 15, prefix: "set/deeper/b")
        let recursive = try WeirProcess.run(["--train-fastcover=k=56,d=8", "-r", "set"], in: scratch.url)
        #expect(recursive.status == 0, "\(recursive.stderr)")
        #expect(recursive.stderr.contains("from 30 samples"), "\(recursive.stderr)")
        try scratch.zstd(["-q", "--train-fastcover=k=56,d=8", "-r", "set", "-o", "zstd.dict"])
        #expect(scratch.data("dictionary") != nil && scratch.data("dictionary") == scratch.data("zstd.dict"))
        let before = try WeirProcess.run(["-q", "-o", "before.dict", "--train-legacy", "-r", "set"], in: scratch.url)
        #expect(before.status == 0 && scratch.exists("before.dict"), "\(before.stderr)")
        // No file to train on: too few samples (zstd's exit status 14), nothing written.
        try FileManager.default.removeItem(atPath: scratch.path("dictionary"))
        for flags in [["--train"], ["--train-fastcover=k=56,d=8"], ["--train-legacy=s=8"]] {
            let none = try WeirProcess.run(flags, in: scratch.url)
            #expect(none.status == 14 && none.stderr.contains("nb of samples too low: 0 samples"), "\(none.stderr)")
            #expect(try scratch.zstd(flags).status == 14, "\(flags)")
        }
        try FileManager.default.createDirectory(atPath: scratch.path("empty"), withIntermediateDirectories: true)
        let empty = try WeirProcess.run(["--train", "-r", "empty"], in: scratch.url)
        #expect(empty.status == 14 && empty.stderr.contains("nb of samples too low: 0 samples"), "\(empty.stderr)")
        #expect(!scratch.exists("dictionary"))
    }

    @Test("of -z, -d, -t, -l and the --train flags, the last wins; -T sets the search's threads")
    func lastOperationWins() throws {
        let scratch = Scratch()
        let names = Self.samples(scratch)
        let listed = try WeirProcess.run(["--train-cover=k=200,d=8", "-l", "missing.zst"], in: scratch.url)
        #expect(listed.status == 1 && !scratch.exists("dictionary"), "-l wins: \(listed.stderr)")
        let trained = try WeirProcess.run(["-q", "-d", "--train-legacy"] + names, in: scratch.url)
        #expect(trained.status == 0 && scratch.exists("dictionary"), "\(trained.stderr)")
        let threads = try WeirProcess.run(
            ["--train-fastcover", "-T2", "--maxdict=4K", "-o", "t.dict"] + names, in: scratch.url)
        #expect(threads.status == 0, "\(threads.stderr)")
        try Self.expectInteroperable(scratch, dictionary: "t.dict", input: "s2.json")
    }
}