import Foundation
import Testing

/// `-dcf` and `--pass-through`: data that is not zstd copied through
/// unchanged, as `zcat -f` and `zstd -dcf` do.
@Suite("weir pass-through")
struct PassThroughCommandTests {
    /// A folder with plain text, a zstd file, a 2-byte file and an empty one.
    static func mixedInputs() throws -> Scratch {
        let scratch = Scratch()
        scratch.text("plain", size: 300_000, seed: 3)
        scratch.text("packed", size: 200_000, seed: 4)
        try scratch.zstd(["-q", "packed", "-o", "packed.zst"])
        _ = FileManager.default.createFile(atPath: scratch.path("two"), contents: Data("ab".utf8))
        _ = FileManager.default.createFile(atPath: scratch.path("empty"), contents: Data())
        return scratch
    }

    @Test("weir -dcf gives zstd -dcf's bytes on plain, zstd and short inputs, as files and through a pipe")
    func sameBytesAsZstd() throws {
        let scratch = try Self.mixedInputs()
        for inputs in [["plain"], ["packed.zst"], ["two"], ["plain", "packed.zst", "two", "plain"]] {
            let weir = try WeirProcess.run(["-dcf"] + inputs, in: scratch.url)
            let zstd = try scratch.zstd(["-dcf"] + inputs)
            #expect(weir.status == 0, "\(inputs): \(weir.stderr)")
            #expect(zstd.status == 0)
            #expect(weir.stdout == zstd.stdout, "\(inputs)")
        }
        let piped = try WeirProcess.shell(
            """
            for f in plain packed.zst two; do cat $f | $WEIR -dcf | cmp - <(zstd -dcf < $f) || exit 1; done; echo same
            """, in: scratch.url)
        #expect(String(decoding: piped.stdout, as: UTF8.self) == "same\n", "\(piped.stderr)")
    }

    @Test("bytes that arrive slowly in a pipe, one at first, are all copied")
    func slowProducer() throws {
        let scratch = Scratch()
        let run = try WeirProcess.shell("(printf a; sleep 0.3; printf bcdef) | $WEIR -dcf", in: scratch.url)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(String(decoding: run.stdout, as: UTF8.self) == "abcdef")
    }

    @Test("without -f, with --no-pass-through, or for an empty input, plain data is refused as zstd refuses it")
    func refusals() throws {
        let scratch = try Self.mixedInputs()
        for arguments in [
            ["-dc", "plain"], ["-dcf", "--no-pass-through", "plain"], ["-dcf", "empty"],
            ["-df", "plain", "-o", "out"],
        ] {
            let weir = try WeirProcess.run(arguments, in: scratch.url)
            let zstd = try scratch.zstd(arguments)
            #expect(weir.status == 1, "\(arguments)")
            #expect(zstd.status != 0, "zstd \(arguments)")
            #expect(weir.stderr.contains("not in zstd format"), "\(arguments): \(weir.stderr)")
            #expect(weir.stdout.isEmpty, "\(arguments)")
        }
        #expect(!scratch.exists("out"))
    }

    @Test("--pass-through copies to a file, and -t --pass-through accepts plain data, as zstd's")
    func explicitPassThrough() throws {
        let scratch = try Self.mixedInputs()
        let filed = try WeirProcess.run(["-q", "-d", "--pass-through", "plain", "-o", "copy"], in: scratch.url)
        #expect(filed.status == 0, "\(filed.stderr)")
        #expect(scratch.data("copy") == scratch.data("plain"))
        let tested = try WeirProcess.run(["-q", "-t", "--pass-through", "plain"], in: scratch.url)
        #expect(tested.status == 0, "\(tested.stderr)")
        #expect(try scratch.zstd(["-q", "-t", "--pass-through", "plain"]).status == 0)
    }

    @Test("weircat passes plain data through and decodes zstd, as zstdcat does")
    func weircat() throws {
        let scratch = try Self.mixedInputs()
        let run = try WeirProcess.shell(
            "ln -s \"$WEIR\" weircat && ./weircat plain packed.zst two | cmp - <(zstdcat plain packed.zst two) && "
                + "echo same",
            in: scratch.url)
        #expect(String(decoding: run.stdout, as: UTF8.self) == "same\n", "\(run.stderr)")
    }

    @Test("a zstd frame followed by other data: -dcf copies it, as zstd 1.5.4 does; -dc refuses it, naming its offset")
    func zstdThenGarbage() throws {
        let scratch = try Self.mixedInputs()
        let joined = scratch.data("packed.zst")! + scratch.data("two")!
        _ = FileManager.default.createFile(atPath: scratch.path("joined"), contents: joined)
        let copied = try WeirProcess.run(["-dcf", "joined"], in: scratch.url)
        let zstd = try scratch.zstd(["-dcf", "joined"])
        #expect(copied.status == 0 && copied.stdout == zstd.stdout, "\(copied.stderr)")
        #expect(copied.stdout == scratch.data("packed")! + scratch.data("two")!)
        let run = try WeirProcess.run(["-dc", "joined"], in: scratch.url)
        #expect(run.status == 1)
        #expect(run.stderr.contains("offset \(joined.count - 2)"), "\(run.stderr)")
    }
}