import Foundation
import Testing
import Glibc

/// Files whose `st_size` is not their content's (issue 37): procfs says 0,
/// sysfs 4096, a file another process grows or cuts says what it said at
/// `stat`. weir reads them to their end, or fails naming the file; it never
/// exits 0 with fewer bytes in the output than it read.
@Suite("weir and files that lie about their size")
struct UntrustedSizeCommandTests {
    /// A procfs file with content that stats as 0 bytes, and that content.
    static func procFile() throws -> (path: String, content: Data) {
        let path = "/proc/filesystems"
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_size == 0, "procfs should say 0 bytes")
        let content = try #require(FileManager.default.contents(atPath: path))
        #expect(!content.isEmpty)
        return (path, content)
    }

    /// A sysfs file that stats as a page but holds a few bytes.
    static func sysFile() throws -> (path: String, content: Data) {
        let path = "/sys/devices/system/cpu/online"
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_size == 4096, "sysfs should say 4096 bytes")
        let content = try #require(FileManager.default.contents(atPath: path))
        #expect(!content.isEmpty && content.count < 4096)
        return (path, content)
    }

    /// The `--json` record of a run's stderr.
    static func record(_ result: WeirProcess.Result) throws -> [String: Any] {
        let line = try #require(result.stderr.split(separator: "\n").first { $0.hasPrefix("{") }, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test("procfs and sysfs files by path, to stdout and to a file, keep every byte", arguments: ["proc", "sys"])
    func byPath(kind: String) throws {
        let scratch = Scratch()
        let (path, content) = try kind == "proc" ? Self.procFile() : Self.sysFile()
        let piped = try WeirProcess.run(["-c", path], in: scratch.url)
        #expect(piped.status == 0, "\(piped.stderr)")
        try piped.stdout.write(to: URL(fileURLWithPath: scratch.path("piped.zst")))
        #expect(try scratch.zstd(["-dc", "piped.zst"]).stdout == content)
        let filed = try WeirProcess.run(["--json", path, "-o", "out.zst"], in: scratch.url)
        #expect(filed.status == 0, "\(filed.stderr)")
        #expect(try Self.record(filed)["bytes_in"] as? Int == content.count)
        #expect(try scratch.zstd(["-dc", "out.zst"]).stdout == content)
        #expect(try WeirProcess.run(["-dc", "out.zst"], in: scratch.url).stdout == content)
        // --rm cannot remove it; the output stays whole and the failure names the file.
        let removing = try WeirProcess.run(["--rm", "-f", path, "-o", "rm.zst"], in: scratch.url)
        #expect(removing.status != 0 && removing.stderr.contains(path), "\(removing.stderr)")
        #expect(try scratch.zstd(["-dc", "rm.zst"]).stdout == content)
    }

    @Test("procfs and sysfs files through standard input keep every byte", arguments: ["proc", "sys"])
    func throughStandardInput(kind: String) throws {
        let scratch = Scratch()
        let (path, content) = try kind == "proc" ? Self.procFile() : Self.sysFile()
        let result = try WeirProcess.run(["-c"], in: scratch.url, stdin: path)
        #expect(result.status == 0, "\(result.stderr)")
        try result.stdout.write(to: URL(fileURLWithPath: scratch.path("in.zst")))
        #expect(try scratch.zstd(["-dc", "in.zst"]).stdout == content)
    }

    @Test("a real empty file still makes one empty frame that zstd decodes to nothing")
    func emptyFile() throws {
        let scratch = Scratch()
        _ = FileManager.default.createFile(atPath: scratch.path("empty"), contents: Data())
        let byPath = try WeirProcess.run(["empty"], in: scratch.url)
        #expect(byPath.status == 0, "\(byPath.stderr)")
        let frame = try #require(scratch.data("empty.zst"))
        #expect(frame.count > 0 && frame.count < 32)
        let decoded = try scratch.zstd(["-dc", "empty.zst"])
        #expect(decoded.status == 0 && decoded.stdout.isEmpty)
        let piped = try WeirProcess.run(["-c"], in: scratch.url, stdin: "empty")
        #expect(piped.status == 0 && piped.stdout == frame)
        // -r takes the small-file path for it: the same frame.
        try FileManager.default.createDirectory(atPath: scratch.path("tree"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: scratch.path("tree/e"), contents: Data())
        #expect(try WeirProcess.run(["-q", "-r", "tree"], in: scratch.url).status == 0)
        #expect(scratch.data("tree/e.zst") == frame)
    }

    /// Runs `weir ARGS` on `input` while a second process changes it
    /// (`change`, a shell command run after `delay` seconds); returns the
    /// run and the file's content afterwards.
    static func whileChanged(_ scratch: Scratch, _ arguments: String, change: String,
                             delay: String) throws -> (WeirProcess.Result, Data) {
        let result = try WeirProcess.shell(
            "( sleep \(delay); \(change) ) & changer=$!; $WEIR --json \(arguments); status=$?; wait $changer; exit "
                + "$status",
            in: scratch.url)
        return (result, try #require(scratch.data("input")))
    }

    /// Writes `input`: `count` copies of a 1 MiB seed; returns its content.
    static func repeatedInput(_ scratch: Scratch, mebibytes count: Int) throws -> Data {
        let seed = scratch.text("seed", size: 1 << 20, seed: 7)
        try WeirProcess.shell("for i in $(seq \(count)); do cat seed; done > input", in: scratch.url)
        // Appended whole: `joined()` copies byte by byte in the unoptimized
        // test build, most of this suite's CPU for its 120 MiB of inputs.
        var content = Data(capacity: count << 20)
        for _ in 0..<count { content.append(seed) }
        return content
    }

    @Test("a file that grows while read: what was read is all in the output, as a prefix of the file",
          arguments: ["", "--no-mmap", "-T1"])
    func growing(flag: String) throws {
        let scratch = Scratch()
        let initial = try Self.repeatedInput(scratch, mebibytes: 8)
        let (result, final) = try Self.whileChanged(
            scratch, "\(flag) input -o out.zst",
            change: "for i in $(seq 24); do cat seed >> input; done", delay: "0.01")
        if result.status == 0 {
            let read = try Self.record(result)["bytes_in"] as? Int
            let decoded = try scratch.zstd(["-dc", "out.zst"]).stdout
            #expect(decoded.count == read, "every byte read is in the output")
            #expect(decoded.count >= initial.count && final.starts(with: decoded))
        } else {
            #expect(result.stderr.contains("input"), "\(result.stderr)")
            #expect(!scratch.exists("out.zst"))
        }
        #expect(!scratch.names.contains { $0.hasPrefix(".weir-") })
    }

    @Test("a file cut while read: a clear failure naming it, nothing under the output's name, or all of what is left",
          arguments: ["", "--no-mmap", "-c"])
    func shrinking(flag: String) throws {
        let scratch = Scratch()
        let original = try Self.repeatedInput(scratch, mebibytes: 32)
        let output = flag == "-c" ? "-c > out.zst" : "\(flag) -o out.zst"
        let (result, final) = try Self.whileChanged(scratch, "input \(output)", change: "truncate -s 3M input",
                                                    delay: "0.02")
        #expect(final.count == 3 << 20)
        if result.status == 0 {
            let read = try Self.record(result)["bytes_in"] as? Int
            let decoded = try scratch.zstd(["-dc", "out.zst"]).stdout
            #expect(decoded.count == read)
            // Never the zeros of a page cut off under a mapping.
            #expect(decoded.count >= final.count && original.starts(with: decoded))
        } else {
            #expect(result.stderr.contains("input:"), "\(result.stderr)")
            if flag != "-c" { #expect(!scratch.exists("out.zst")) }
        }
    }

    @Test("--rm keeps an input that grew after it was read")
    func removeAfterGrowth() throws {
        let scratch = Scratch()
        let original = scratch.text("input", size: 4 << 20, seed: 9)
        // strace slows weir's fsync of the folder, which comes after the
        // output takes its name and before the input goes: the writer,
        // waiting for that name, appends meanwhile, as a writer still at
        // work on the input would.
        let result = try WeirProcess.shell(
            """
            ( while [ ! -e input.zst ]; do sleep 0.01; done; echo more >> input ) & writer=$!
            strace -f -qq -o /dev/null -e trace=fsync -e inject=fsync:delay_exit=1000000 $WEIR -q --rm input
            status=$?; wait $writer; exit $status
            """, in: scratch.url)
        let final = try #require(scratch.data("input"), "the input is kept")
        #expect(final == original + Data("more\n".utf8))
        #expect(result.status != 0 && result.stderr.contains("input: the file changed size after it was read"),
                "\(result.stderr)")
        // The output holds what was read, and is whole under its name.
        #expect(try scratch.zstd(["-dc", "input.zst"]).stdout == original)
    }
}
