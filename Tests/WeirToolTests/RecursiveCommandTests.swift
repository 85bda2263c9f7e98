import Foundation
import Testing
import Glibc

/// `-r`, `--output-dir-flat`, `--output-dir-mirror` and `--filelist`, each
/// run by weir and by the real zstd on two identical trees: the same files
/// must come out under the same names, and every output weir writes must
/// decode with zstd to its input.
@Suite("weir -r and output folders, against zstd")
struct RecursiveCommandTests {
    /// Two identical trees, `w` (for weir) and `z` (for zstd):
    /// nested folders, a hidden file, a file named .zst, an empty folder,
    /// a link to a folder outside the tree and a link to a file inside it.
    static func trees() throws -> Scratch {
        let scratch = Scratch()
        for side in ["w", "z"] {
            for folder in ["t/a/b", "t/empty", "other"] {
                try FileManager.default.createDirectory(atPath: scratch.path("\(side)/\(folder)"),
                                                        withIntermediateDirectories: true)
            }
            scratch.text("\(side)/t/a/f1", size: 3000, seed: 1)
            scratch.text("\(side)/t/a/b/f2", size: 50_000, seed: 2)
            scratch.text("\(side)/t/a/b/f1", size: 10, seed: 3)
            scratch.text("\(side)/t/.hidden", size: 100, seed: 4)
            scratch.text("\(side)/t/already.zst", size: 200, seed: 5)
            scratch.text("\(side)/other/o", size: 20, seed: 6)
            symlink("../other", scratch.path("\(side)/t/dirlink"))
            symlink("a/f1", scratch.path("\(side)/t/filelink"))
        }
        return scratch
    }

    /// Every path under `side`, folders and links included, sorted.
    static func listing(_ scratch: Scratch, _ side: String) throws -> [String] {
        let result = try WeirProcess.shell("cd \(side) && find . | LC_ALL=C sort", in: scratch.url)
        return String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Runs weir in `w` and zstd in `z` with the same arguments; expects the
    /// same exit status and the same files; returns weir's result.
    @discardableResult
    static func compare(_ scratch: Scratch, _ arguments: [String], status: Int32 = 0) throws -> WeirProcess.Result {
        let weir = try WeirProcess.run(arguments, in: scratch.url.appendingPathComponent("w"))
        let zstd = try WeirProcess.run(arguments, in: scratch.url.appendingPathComponent("z"),
                                       executable: "/usr/bin/zstd")
        #expect(weir.status == status, "weir: \(weir.stderr)")
        #expect(zstd.status == status, "zstd: \(zstd.stderr)")
        #expect(try listing(scratch, "w") == listing(scratch, "z"))
        return weir
    }

    /// Whether `compressed` (under `w`) decodes with zstd to the bytes of `original` (under `w`).
    static func decodes(_ scratch: Scratch, _ compressed: String, to original: String) throws -> Bool {
        let decoded = try scratch.zstd(["-dc", "w/\(compressed)"])
        return decoded.status == 0 && decoded.stdout == scratch.data("w/\(original)")
    }

    @Test("-r compresses every file in the tree, hidden ones too, and skips symbolic links with a warning, as zstd")
    func recursive() throws {
        let scratch = try Self.trees()
        let weir = try Self.compare(scratch, ["-r", "t"])
        #expect(weir.stderr.contains("t/dirlink is a symbolic link, ignoring"), "\(weir.stderr)")
        #expect(weir.stderr.contains("t/filelink is a symbolic link, ignoring"), "\(weir.stderr)")
        #expect(scratch.exists("w/t/.hidden.zst") && scratch.exists("w/t/already.zst.zst"))
        for name in ["t/a/f1", "t/a/b/f2", "t/a/b/f1", "t/.hidden", "t/already.zst"] {
            #expect(try Self.decodes(scratch, name + ".zst", to: name), "\(name)")
        }
        // Each output is what weir writes for that file alone.
        let alone = try WeirProcess.run(["-c", "t/a/b/f2"], in: scratch.url.appendingPathComponent("w"))
        #expect(alone.stdout == scratch.data("w/t/a/b/f2.zst"))
    }

    @Test("-r -f follows symbolic links, to files and to folders, as zstd")
    func followsLinksWhenForced() throws {
        let scratch = try Self.trees()
        try Self.compare(scratch, ["-q", "-r", "-f", "t"])
        #expect(scratch.exists("w/other/o.zst") && scratch.exists("w/t/filelink.zst"))
    }

    @Test("--exclude-compressed skips the .zst files -r finds")
    func excludeCompressed() throws {
        let scratch = try Self.trees()
        try Self.compare(scratch, ["-q", "-r", "--exclude-compressed", "t"])
        #expect(!scratch.exists("w/t/already.zst.zst") && scratch.exists("w/t/a/f1.zst"))
    }

    @Test("-r --rm removes each input after its output is complete")
    func removeInputs() throws {
        let scratch = try Self.trees()
        let original = try #require(scratch.data("w/t/a/b/f2"))
        try Self.compare(scratch, ["-q", "-r", "--rm", "t"])
        #expect(!scratch.exists("w/t/a/b/f2"))
        #expect(try scratch.zstd(["-dc", "w/t/a/b/f2.zst"]).stdout == original)
    }

    @Test("-r -d decodes the .zst files and refuses the others (exit 1), as zstd")
    func decompressRecursive() throws {
        let scratch = try Self.trees()
        try Self.compare(scratch, ["-q", "-r", "--rm", "t"])
        scratch.text("w/t/plain", size: 10)
        scratch.text("z/t/plain", size: 10)
        let weir = try Self.compare(scratch, ["-q", "-r", "-d", "t"], status: 1)
        #expect(weir.stderr.contains("t/plain: unknown suffix"), "\(weir.stderr)")
        #expect(scratch.exists("w/t/a/b/f2") && scratch.exists("w/t/already.zst"))
    }

    @Test("--output-dir-flat puts every output in one folder; a second file of the same name fails, as zstd")
    func flat() throws {
        let scratch = try Self.trees()
        for side in ["w", "z"] {
            try FileManager.default.createDirectory(
                atPath: scratch.path("\(side)/flat"), withIntermediateDirectories: false)
        }
        let weir = try Self.compare(scratch, ["-r", "t", "--output-dir-flat", "flat"], status: 1)
        #expect(weir.stderr.contains("same name f1"), "\(weir.stderr)")
        #expect(try Self.decodes(scratch, "flat/f2.zst", to: "t/a/b/f2"))
        // Without -r: the files given.
        for side in ["w", "z"] {
            try FileManager.default.createDirectory(
                atPath: scratch.path("\(side)/flat2"), withIntermediateDirectories: false)
        }
        try Self.compare(scratch, ["-q", "t/a/b/f2", "t/.hidden", "--output-dir-flat", "flat2"])
        // And back.
        try Self.compare(scratch, ["-q", "-d", "flat2/f2.zst", "--output-dir-flat", "t"])
        #expect(scratch.data("w/t/f2") == scratch.data("w/t/a/b/f2"))
    }

    @Test("--output-dir-mirror rebuilds the tree under a folder, compressing and decompressing, as zstd")
    func mirror() throws {
        let scratch = try Self.trees()
        try Self.compare(scratch, ["-q", "-r", "t", "--output-dir-mirror", "mir"])
        #expect(try Self.decodes(scratch, "mir/t/a/b/f2.zst", to: "t/a/b/f2"))
        try Self.compare(scratch, ["-q", "-r", "-d", "mir", "--output-dir-mirror", "back"])
        #expect(scratch.data("w/back/mir/t/a/b/f1") == scratch.data("w/t/a/b/f1"))
        #expect(scratch.data("w/back/mir/t/.hidden") == scratch.data("w/t/.hidden"))
    }

    @Test("--output-dir-mirror creates the input's folders with their modes, as zstd")
    func mirrorFolderModes() throws {
        let scratch = try Self.trees()
        for side in ["w", "z"] {
            chmod(scratch.path("\(side)/t/a"), 0o750)
            chmod(scratch.path("\(side)/t/a/b"), 0o705)
        }
        try Self.compare(scratch, ["-q", "-r", "t/a", "--output-dir-mirror", "mir"])
        // The modes less the umask (read, not set: it is the process's), as mkdir(2) gives them.
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let umaskLine = try #require(status.split(separator: "\n").first { $0.hasPrefix("Umask:") })
        let mask = try #require(mode_t(umaskLine.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8))
        for side in ["w", "z"] {
            for (folder, mode) in [("t/a", mode_t(0o750)), ("t/a/b", 0o705)] {
                var info = stat()
                #expect(stat(scratch.path("\(side)/mir/\(folder)"), &info) == 0, "\(side) \(folder)")
                #expect(info.st_mode & 0o7777 == mode & ~mask,
                        "\(side) \(folder): \(String(info.st_mode & 0o7777, radix: 8))")
            }
        }
        #expect(try Self.decodes(scratch, "mir/t/a/b/f2.zst", to: "t/a/b/f2"))
    }

    @Test("--output-dir-mirror refuses an input with a .. part (exit 1), as zstd")
    func mirrorRefusesParent() throws {
        let scratch = try Self.trees()
        let weir = try Self.compare(scratch, ["-q", "../w/t/a/f1", "--output-dir-mirror", "mir"], status: 1)
        #expect(
            weir.stderr.contains("weir: ../w/t/a/f1: cannot be mirrored into mir (a part of its path is ..)"),
            "\(weir.stderr)")
    }

    @Test("--filelist adds the files it names, and -r expands its folders, as zstd")
    func fileList() throws {
        let scratch = try Self.trees()
        for side in ["w", "z"] {
            try Data("t/a/f1\nt/.hidden\n".utf8).write(to: URL(fileURLWithPath: scratch.path("\(side)/list")))
            try Data("t/a/b\n".utf8).write(to: URL(fileURLWithPath: scratch.path("\(side)/dirs")))
        }
        try Self.compare(scratch, ["-q", "--filelist", "list"])
        #expect(scratch.exists("w/t/a/f1.zst") && !scratch.exists("w/t/a/b/f2.zst"))
        try Self.compare(scratch, ["-q", "-r", "--filelist", "dirs"])
        #expect(try Self.decodes(scratch, "t/a/b/f2.zst", to: "t/a/b/f2"))
    }

    @Test("--filelist is repeatable: the files of every list are processed, as zstd")
    func fileLists() throws {
        let scratch = try Self.trees()
        for side in ["w", "z"] {
            try Data("t/a/f1\n".utf8).write(to: URL(fileURLWithPath: scratch.path("\(side)/one")))
            try Data("t/a/b/f2\nt/.hidden\n".utf8).write(to: URL(fileURLWithPath: scratch.path("\(side)/two")))
        }
        try Self.compare(scratch, ["-q", "--filelist", "one", "--filelist=two"])
        for name in ["t/a/f1", "t/a/b/f2", "t/.hidden"] {
            #expect(try Self.decodes(scratch, name + ".zst", to: name), "\(name)")
        }
    }

    @Test("-r on empty folders does nothing and does not read stdin, as zstd")
    func emptyFolders() throws {
        let scratch = try Self.trees()
        let weir = try Self.compare(scratch, ["-r", "t/empty"])
        #expect(weir.stdout.isEmpty)
    }
}
