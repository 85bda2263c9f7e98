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
                + "\"roles\": [\"reader\", \"writer\"], \"active\": \(index % 3 == 0), \"score\": \(index * 37 % 101)}\n"
            for event in 1...4 {
                text += "{\"user\": \(index), \"event\": \"login\", \"ok\": true, \"ts\": \(1_700_000_000 + index * 1000 + event)}\n"
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
            let piped = try WeirProcess.shell("cat z.zst | $WEIR -q -d -D \(dictionary) | cmp - \(input) && echo same", in: scratch.url)
            #expect(String(decoding: piped.stdout, as: UTF8.self) == "same\n", "\(piped.stderr)")
        }

        // Many frames compressed at once share the dictionary: 1 KiB chunks on two workers.
        let all = (1...40).map { "new\($0).json" }.joined(separator: " ")
        let many = try WeirProcess.shell("""
            cat \(all) > all.json
            $WEIR -q -T2 --chunk-size 1K -D weir.dict all.json -o all.zst && zstd -q -dc -D weir.dict all.zst | cmp - all.json &&
            cat all.json | $WEIR -q -T2 --chunk-size 1K -D weir.dict | zstd -q -dc -D weir.dict | cmp - all.json &&
            $WEIR -q -dc -T2 -D weir.dict all.zst | cmp - all.json &&
            $WEIR -q -T2 --long=20 -D weir.dict -c all.json | zstd -q -dc --long=20 -D weir.dict | cmp - all.json && echo same
            """, in: scratch.url)
        #expect(String(decoding: many.stdout, as: UTF8.self) == "same\n", "\(many.stderr)")
        let frames = String(decoding: try scratch.zstd(["-l", "all.zst"]).stdout, as: UTF8.self)
        let frameCount = frames.split(separator: "\n").dropFirst().first?.split(separator: " ").first.flatMap { Int($0) }
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
        #expect(missing.stderr.contains("weir: nope.dict: read dictionary failed: No such file or directory"), "\(missing.stderr)")
        #expect(!scratch.exists("s1.json.zst"))

        let wrong = try WeirProcess.run(["-d", "-D", "wrong.dict", "s3.json.zst", "-o", "out"], in: scratch.url)
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("weir: s3.json.zst: Dictionary mismatch: the data was compressed with another dictionary than wrong.dict"),
                "\(wrong.stderr)")
        #expect(!scratch.exists("out"))
        let stock = try scratch.zstd(["-d", "-D", "wrong.dict", "s3.json.zst", "-o", "out"])
        #expect(stock.status != 0 && stock.stderr.contains("Dictionary mismatch"), "zstd refuses it too")

        let none = try WeirProcess.shell("cat s3.json.zst | $WEIR -d > out", in: scratch.url)
        #expect(none.status == 1)
        #expect(none.stderr.contains("weir: (stdin): Dictionary mismatch: the data was compressed with a dictionary (frame 0, at offset 0); give it with -D"),
                "\(none.stderr)")

        let same = try WeirProcess.run(["-D", "s2.json", "s2.json"], in: scratch.url)
        #expect(same.status == 1)
        #expect(same.stderr.contains("weir: s2.json: cannot use it as an input file and dictionary"), "\(same.stderr)")
    }

    @Test("--train refuses fewer than 5 samples, as zstd, and writes no dictionary")
    func tooFewSamples() throws {
        let scratch = Scratch()
        let names = Self.samples(scratch, count: 4)
        _ = FileManager.default.createFile(atPath: scratch.path("empty"), contents: Data())
        let result = try WeirProcess.run(["--train", "-o", "d"] + names + ["empty"], in: scratch.url)
        #expect(result.status == 1)
        #expect(result.stderr.contains("weir: d: nb of samples too low: 4 samples, training needs at least 5; "
                                       + "give one file per sample, or cut files into samples of a fixed size with -B SIZE"),
                "\(result.stderr)")
        #expect(try scratch.zstd(["-q", "--train", "-o", "z"] + names + ["empty"]).status != 0, "zstd refuses them too")
        #expect(!scratch.exists("d"))
        let unreadable = try WeirProcess.run(["--train"] + Self.samples(scratch) + ["nope"], in: scratch.url)
        #expect(unreadable.status == 1)
        #expect(unreadable.stderr.contains("weir: nope: read sample failed: No such file or directory"), "\(unreadable.stderr)")
    }
}
