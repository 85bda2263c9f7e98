import Foundation
import Testing

/// weir called by zstd's names (a link named zstd, unzstd, zstdcat, zcat, gzcat,
/// zstdmt, or a format's: xz, unxz, lzma, unlzma, lz4, unlz4, gzip, gunzip), side by
/// side with the real zstd called by the same name.
@Suite("weir as zstd: its names, its environment, its links")
struct ZstdNamesCommandTests {
    /// A link named `name` to weir and one to the real zstd, in two folders
    /// of `scratch`.
    static func links(_ name: String, in scratch: Scratch) throws -> (weir: String, zstd: String) {
        for folder in ["w", "z"] where !scratch.exists(folder) {
            try FileManager.default.createDirectory(atPath: scratch.path(folder), withIntermediateDirectories: true)
        }
        try? FileManager.default.removeItem(atPath: scratch.path("w/" + name))
        try? FileManager.default.removeItem(atPath: scratch.path("z/" + name))
        try FileManager.default.createSymbolicLink(
            atPath: scratch.path("w/" + name), withDestinationPath: WeirProcess.binary)
        try FileManager.default.createSymbolicLink(
            atPath: scratch.path("z/" + name), withDestinationPath: "/usr/bin/zstd")
        return (scratch.path("w/" + name), scratch.path("z/" + name))
    }

    @Test("zstdcat, zcat and gzcat write the content of .zst files and of plain ones to stdout, as zstd's do",
          arguments: ["zstdcat", "zcat", "gzcat"])
    func cat(name: String) throws {
        let scratch = Scratch()
        let original = scratch.text("a", size: 100_000)
        try scratch.zstd(["-q", "a", "-o", "a.zst"])
        try FileManager.default.createSymbolicLink(atPath: scratch.path("link.zst"), withDestinationPath: "a.zst")
        let programs = try Self.links(name, in: scratch)
        for program in [programs.weir, programs.zstd] {
            for input in ["a.zst", "link.zst", "a"] {
                let run = try WeirProcess.run([input], in: scratch.url, executable: program)
                #expect(run.status == 0, "\(program) \(input): \(run.stderr)")
                #expect(run.stdout == original, "\(program) \(input)")
            }
        }
        #expect(!scratch.exists("a.zst.zst") && !scratch.exists("a.zst.zst"))
    }

    @Test("unzstd decompresses and zstdmt compresses, as zstd's do")
    func unzstdAndZstdmt() throws {
        let scratch = Scratch()
        let original = scratch.text("a", size: 100_000)
        let zstdmt = try Self.links("zstdmt", in: scratch)
        let made = try WeirProcess.run(["-q", "a", "-o", "a.zst"], in: scratch.url, executable: zstdmt.weir)
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try scratch.zstd(["-dc", "a.zst"]).stdout == original)
        try FileManager.default.removeItem(atPath: scratch.path("a"))
        let unzstd = try Self.links("unzstd", in: scratch)
        let back = try WeirProcess.run(["-q", "a.zst"], in: scratch.url, executable: unzstd.weir)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(scratch.data("a") == original)
    }

    @Test("called xz, lzma, lz4 or gzip, and unxz, unlzma, unlz4 or gunzip, weir writes and reads what zstd does",
          arguments: [("xz", "unxz", "xz", "xz -dc"), ("lzma", "unlzma", "lzma", "xz --format=lzma -dc"),
                      ("lz4", "unlz4", "lz4", "lz4 -dc"), ("gzip", "gunzip", "gz", "gzip -dc")])
    func formatNames(packer: String, unpacker: String, suffix: String, decoder: String) throws {
        let scratch = Scratch()
        let original = scratch.text("original", size: 300_000)
        let packers = try Self.links(packer, in: scratch)
        let unpackers = try Self.links(unpacker, in: scratch)
        /// Every name in `side`, but the links.
        func files(_ side: String) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: scratch.path(side))) ?? [])
                .filter { ![packer, unpacker].contains($0) }.sorted()
        }
        for side in ["w", "z"] {
            _ = FileManager.default.createFile(atPath: scratch.path(side + "/a"), contents: original)
        }
        // Packing: the same files as zstd's (the input kept or removed as by its name), in the real format.
        for (side, program) in [("w", packers.weir), ("z", packers.zstd)] {
            let run = try WeirProcess.run(["-q", "a"], in: scratch.url.appendingPathComponent(side),
                                          executable: program)
            #expect(run.status == 0, "\(side) \(packer): \(run.stderr)")
        }
        #expect(files("w") == files("z") && files("w").contains("a.\(suffix)"), "\(files("w")) \(files("z"))")
        let decoded = try WeirProcess.shell("\(decoder) w/a.\(suffix)", in: scratch.url)
        #expect(decoded.status == 0 && decoded.stdout == original, "\(decoder): \(decoded.stderr)")
        // Unpacking: the same files again, and the input's bytes.
        for (side, program) in [("w", unpackers.weir), ("z", unpackers.zstd)] {
            try? FileManager.default.removeItem(atPath: scratch.path(side + "/a"))
            let run = try WeirProcess.run(["-q", "a.\(suffix)"], in: scratch.url.appendingPathComponent(side),
                                          executable: program)
            #expect(run.status == 0, "\(side) \(unpacker): \(run.stderr)")
        }
        #expect(files("w") == files("z") && files("w").contains("a"), "\(files("w")) \(files("z"))")
        #expect(scratch.data("w/a") == original)
    }

    @Test("called as zstd, weir reads ZSTD_CLEVEL as zstd does (WEIR_CLEVEL wins); called as weir, it does not")
    func environment() throws {
        let scratch = Scratch()
        scratch.text("a", size: 300_000)
        let zstd = try Self.links("zstd", in: scratch)
        func level(_ environment: [String: String], _ program: String) throws -> Int? {
            let run = try WeirProcess.run(
                ["--json", "-f", "a", "-o", "a.zst"], in: scratch.url, environment: environment,
                executable: program)
            #expect(run.status == 0, "\(run.stderr)")
            let line = try #require(run.stderr.split(separator: "\n").first { $0.hasPrefix("{") })
            return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])["level"]
                as? Int
        }
        #expect(try level(["ZSTD_CLEVEL": "12"], zstd.weir) == 12)
        #expect(try level(["ZSTD_CLEVEL": "12", "WEIR_CLEVEL": "5"], zstd.weir) == 5)
        #expect(try level(["ZSTD_CLEVEL": "12"], WeirProcess.binary) == 3)
        // zstd's own tests: a value it cannot read warns and keeps the default, exit 0.
        for value in ["", "-", "a", "+a", "3a7", "50000000000"] {
            let ours = try WeirProcess.run(["-f", "a"], in: scratch.url, environment: ["ZSTD_CLEVEL": value],
                                           executable: zstd.weir)
            let theirs = try WeirProcess.run(["-f", "a"], in: scratch.url, environment: ["ZSTD_CLEVEL": value],
                                             executable: zstd.zstd)
            #expect(ours.status == theirs.status && ours.status == 0, "ZSTD_CLEVEL=\(value): \(ours.stderr)")
            #expect(ours.stderr.contains("ZSTD_CLEVEL"), "ZSTD_CLEVEL=\(value): \(ours.stderr)")
        }
    }

    @Test("symbolic links named on the command line are skipped with a warning unless -f, as zstd skips them")
    func links() throws {
        let scratch = Scratch()
        for tool in ["w", "z"] {
            try FileManager.default.createDirectory(atPath: scratch.path(tool), withIntermediateDirectories: true)
            scratch.text(tool + "/hello", size: 1000)
            try FileManager.default.createSymbolicLink(
                atPath: scratch.path(tool + "/world"), withDestinationPath: "hello")
        }
        func both(_ arguments: [String]) throws -> (weir: WeirProcess.Result, zstd: WeirProcess.Result) {
            (try WeirProcess.run(arguments, in: scratch.url.appendingPathComponent("w")),
             try WeirProcess.run(arguments, in: scratch.url.appendingPathComponent("z"), executable: "/usr/bin/zstd"))
        }
        let mixed = try both(["-q", "world", "hello"])
        #expect(mixed.weir.status == mixed.zstd.status, "\(mixed.weir.stderr)")
        let alone = try both(["world"])
        #expect(alone.weir.status == 1 && alone.zstd.status == 1)
        #expect(alone.weir.stderr.contains("world is a symbolic link, ignoring"), "\(alone.weir.stderr)")
        for tool in ["w", "z"] {
            #expect(scratch.exists(tool + "/hello.zst"), "\(tool)")
            #expect(!scratch.exists(tool + "/world.zst"), "\(tool)")
        }
        let forced = try both(["-q", "-f", "world"])
        #expect(forced.weir.status == 0 && forced.zstd.status == 0, "\(forced.weir.stderr)")
        #expect(scratch.exists("w/world.zst") && scratch.exists("z/world.zst"))
    }
}
