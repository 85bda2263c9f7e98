import Foundation
import Testing
import Glibc

/// What --rm and -f promise when many files are committed together (one sync
/// for many): each input goes only once its own output has its name. The
/// power cuts themselves are scripts/harness/crash-test's (root, a loop-mounted ext4).
@Suite("weir durability")
struct DurabilityCommandTests {
    /// 40 small files in two folders; returns their contents by name.
    static func tree(_ scratch: Scratch, _ side: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for index in 0 ..< 40 {
            let folder = "\(side)/t/\(index % 2 == 0 ? "a" : "b")"
            try FileManager.default.createDirectory(atPath: scratch.path(folder), withIntermediateDirectories: true)
            files["\(folder)/f\(index)"] = scratch.text(
                "\(folder)/f\(index)", size: 100 + 997 * index, seed: UInt64(index))
        }
        return files
    }

    @Test("-r --rm: a file whose output exists keeps its input and fails; every other input goes, its output whole",
          arguments: [["-T2"], ["-T1"], ["-T2", "--no-sync"]])
    func recursiveRemove(flags: [String]) throws {
        let scratch = Scratch()
        let files = try Self.tree(scratch, "w")
        _ = FileManager.default.createFile(atPath: scratch.path("w/t/b/f7.zst"), contents: Data("precious".utf8))
        let run = try WeirProcess.run(flags + ["-q", "-r", "--rm", "--exclude-compressed", "t"],
                                      in: scratch.url.appendingPathComponent("w"))
        #expect(run.status == 1)
        #expect(run.stderr == "weir: t/b/f7.zst: already exists; use -f to overwrite it\n")
        #expect(scratch.data("w/t/b/f7.zst") == Data("precious".utf8))
        for (name, content) in files where name != "w/t/b/f7" {
            #expect(!scratch.exists(name), "\(name) was kept")
            let decoded = try scratch.zstd(["-dc", name + ".zst"])
            #expect(decoded.status == 0 && decoded.stdout == content, "\(name).zst")
        }
        #expect(scratch.data("w/t/b/f7") == files["w/t/b/f7"])
        let hidden = try WeirProcess.shell("find w -name '.weir-*'", in: scratch.url)
        #expect(hidden.stdout.isEmpty, "temporary files left")
    }

    @Test(
        """
        a run writing into a folder removes the temporaries of a weir cut short, keeps one a process holds, and says \
        so with -v
        """
    )
    func staleTemporaries() throws {
        let scratch = Scratch()
        try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: true)
        let content = scratch.text("a", size: 100_000)
        _ = FileManager.default.createFile(atPath: scratch.path("out/.weir-abcdef"), contents: Data("stale".utf8))
        _ = FileManager.default.createFile(atPath: scratch.path("out/.weir-held00"), contents: Data("held".utf8))
        // A process holds one, as a live weir holds its own, until told to let go.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        holder.arguments = ["out/.weir-held00", "sh", "-c", "touch held; until [ -e release ]; do sleep 0.05; done"]
        holder.currentDirectoryURL = scratch.url
        try holder.run()
        defer {
            _ = FileManager.default.createFile(atPath: scratch.path("release"), contents: nil)
            holder.waitUntilExit()
        }
        while !scratch.exists("held") && holder.isRunning { usleep(20_000) }
        let run = try WeirProcess.run(["-v", "a", "-o", "out/a.zst"], in: scratch.url)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stderr.contains(
                "weir: out: removed 1 temporary file (.weir-XXXXXX) left by a weir that was cut short\n"),
            "\(run.stderr)")
        #expect(try scratch.zstd(["-dc", "out/a.zst"]).stdout == content)
        #expect(!scratch.exists("out/.weir-abcdef"))
        #expect(scratch.data("out/.weir-held00") == Data("held".utf8))
        // Without -v, silent; once the holder is gone, its file goes too.
        _ = FileManager.default.createFile(atPath: scratch.path("release"), contents: nil)
        holder.waitUntilExit()
        let quiet = try WeirProcess.run(["-f", "a", "-o", "out/a.zst"], in: scratch.url)
        #expect(quiet.status == 0 && !quiet.stderr.contains("removed"), "\(quiet.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("out")) == ["a.zst"])
    }

    @Test("-d -f --rm on many files: every output whole under its name, an older one replaced, every input gone")
    func decompressRemove() throws {
        let scratch = Scratch()
        let files = try Self.tree(scratch, "w")
        #expect(try scratch.zstd(["-q", "-r", "--rm", "w/t"]).status == 0)
        // An older file where one output goes: replaced with -f.
        _ = FileManager.default.createFile(atPath: scratch.path("w/t/a/f4"), contents: Data("older".utf8))
        let run = try WeirProcess.shell("$WEIR -q -d -f --rm $(find t -name '*.zst' | sort)",
                                        in: scratch.url.appendingPathComponent("w"))
        #expect(run.status == 0, "\(run.stderr)")
        for (name, content) in files {
            #expect(scratch.data(name) == content, "\(name)")
            #expect(!scratch.exists(name + ".zst"), "\(name).zst was kept")
        }
    }

    @Test("--no-sync writes the same bytes and removes the same inputs")
    func noSyncSameResult() throws {
        let scratch = Scratch()
        let files = try Self.tree(scratch, "w")
        _ = try Self.tree(scratch, "n")
        #expect(try WeirProcess.run(["-q", "-r", "--rm", "t"], in: scratch.url.appendingPathComponent("w")).status == 0)
        #expect(try WeirProcess.run(["-q", "-r", "--rm", "--no-sync", "t"],
                                    in: scratch.url.appendingPathComponent("n")).status == 0)
        for name in files.keys {
            let synced = try #require(scratch.data(name + ".zst"))
            #expect(scratch.data("n" + name.dropFirst() + ".zst") == synced, "\(name)")
            #expect(!scratch.exists("n" + name.dropFirst()))
        }
    }
}
