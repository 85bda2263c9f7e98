import Foundation
import Glibc
import Testing

/// weir in a container: the cores it may use (affinity, a cpuset, a CPU
/// quota) and the memory it may hold (a cgroup limit) choose its workers, and
/// `-v` says which. Each run goes into a cgroup of its own (TestCgroup),
/// v2 where the controller is there, else v1, as root, as CI runs.
/// One at a time: the memory runs are heavy, and a quota slows its run.
@Suite("weir in a container", .serialized)
struct ContainerCommandTests {
    /// The cores online here: what an unlimited run counts.
    static let online = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))

    @Test("taskset -c 0: one worker, and -v says the affinity chose it")
    func affinity() throws {
        let scratch = Scratch()
        scratch.text("in", size: 3_000_000)
        let run = try WeirProcess.shell("taskset -c 0 \"$WEIR\" -v -c in > in.zst", in: scratch.url)
        #expect(run.status == 0, "\(run.stderr)")
        let expected = Self.online > 1 ? "weir: 1 worker (affinity: 1 of \(Self.online) cores)\n" : "weir: 1 worker ("
        #expect(run.stderr.hasPrefix(expected), "\(run.stderr)")
        #expect(run.stderr.contains(", 1 thread,"), "\(run.stderr)")
    }

    @Test("a cpuset of one CPU: one worker compressing and decompressing")
    func cpuset() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 3_000_000)
        let group = try TestCgroup(controller: "cpuset")
        try group.write("cpuset.cpus", "0")
        let compress = try WeirProcess.shell(group.command("\"$WEIR\" -v -c in > in.zst"), in: scratch.url)
        #expect(compress.status == 0, "\(compress.stderr)")
        #expect(compress.stderr.hasPrefix("weir: 1 worker ("), "\(compress.stderr)")
        #expect(compress.stderr.contains(", 1 thread,"), "\(compress.stderr)")
        if Self.online > 1 {
            #expect(compress.stderr.contains("(affinity: 1 of \(Self.online) cores"), "\(compress.stderr)")
        }
        let decompress = try WeirProcess.shell(group.command("\"$WEIR\" -v -d -c in.zst > out"), in: scratch.url)
        #expect(decompress.status == 0, "\(decompress.stderr)")
        #expect(decompress.stderr.hasPrefix("weir: 1 worker ("), "\(decompress.stderr)")
        #expect(scratch.data("out") == original)
    }

    @Test("a CPU quota of 1.5 cores: 2 workers (rounded up); of 0.5: 1; -v says the quota chose them")
    func cpuQuota() throws {
        let scratch = Scratch()
        scratch.text("in", size: 3_000_000)
        let half = try TestCgroup(controller: "cpu")
        try half.limitCPU(quota: 50_000)
        let one = try WeirProcess.shell(half.command("\"$WEIR\" -v -c in > half.zst"), in: scratch.url)
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.stderr.hasPrefix("weir: 1 worker (CPU quota 0.5 cores)\n"), "\(one.stderr)")
        #expect(one.stderr.contains(", 1 thread,"), "\(one.stderr)")
        let more = try TestCgroup(controller: "cpu")
        try more.limitCPU(quota: 150_000)
        let two = try WeirProcess.shell(more.command("\"$WEIR\" -v -c in > more.zst"), in: scratch.url)
        #expect(two.status == 0, "\(two.stderr)")
        let expected = Self.online >= 2 ? "weir: 2 workers (CPU quota 1.5 cores)\n" : "weir: 1 worker (1 core online)\n"
        #expect(two.stderr.hasPrefix(expected), "\(two.stderr)")
        // -T still wins over the quota.
        let asked = try WeirProcess.shell(half.command("\"$WEIR\" -vv -T3 -c in > asked.zst"), in: scratch.url)
        #expect(asked.stderr.hasPrefix("weir: 3 workers (-T3)\n"), "\(asked.stderr)")
    }

    /// 20 MB of text, as the file.
    static let memoryInputSize = 20_000_000

    /// The input of the memory runs at `level`. Under `--long=27` the frame
    /// is the whole file, its window sized to it: the 20 MB of text
    /// (122 MiB of the 128 measured, bench/results/2026-11-25-containers.md).
    /// At -19 and -22 the limit cuts frames of 4 and 2 MiB (`-v` says so),
    /// and one worker holds its context and two chunks in flight whatever
    /// the file's size: 13 MB is more than three frames at either level, so
    /// the run reaches that peak. Random bytes, not text: every page of the
    /// match tables is touched (text's few distinct words touch few hash
    /// buckets) and each output buffer fills to its bound, the peak the
    /// plan's estimate counts; and they compress three times faster than
    /// the text at these levels (bench/results/2026-11-28-inner-loop.md).
    static func memoryInput(for level: [String], in scratch: Scratch) throws -> Data {
        if level.contains(where: { $0.hasPrefix("--long") }) {
            return scratch.text("in", size: memoryInputSize)
        }
        return try framedMemoryInput(in: scratch)
    }

    /// `in`: 13 MB of random bytes, the input of the memory runs whose
    /// frames the limit cuts (``memoryInput(for:in:)`` says why).
    static func framedMemoryInput(in scratch: Scratch) throws -> Data {
        let made = try WeirProcess.shell("head -c 13000000 /dev/urandom > in", in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
        return try #require(scratch.data("in"))
    }

    @Test("128 MiB: -19, --ultra -22 and --long=27 -19 finish with one worker, and decompress in the group too",
          arguments: [["-19"], ["--ultra", "-22"], ["--long=27", "-19"]])
    func memoryLimit(_ level: [String]) throws {
        let scratch = Scratch()
        let original = try Self.memoryInput(for: level, in: scratch)
        let limit = 128 << 20
        let group = try TestCgroup(controller: "memory")
        try group.limitMemory(limit)
        let arguments = level.joined(separator: " ")
        let compress = try WeirProcess.shell(group.command("\"$WEIR\" -v \(arguments) in -o in.zst"), in: scratch.url,
                                             timeout: 600)
        // Killed by the OOM killer, the shell would say 137.
        #expect(compress.status == 0, "\(compress.stderr)")
        #expect(compress.stderr.hasPrefix("weir: 1 worker"), "\(compress.stderr)")
        #expect(compress.stderr.contains("memory limit 128.0 MiB"), "\(compress.stderr)")
        #expect(compress.stderr.contains(", 1 thread,"), "\(compress.stderr)")
        // Decompressing, -M follows the limit too.
        let decompress = try WeirProcess.shell(group.command("\"$WEIR\" -v -d in.zst -o out"), in: scratch.url,
                                               timeout: 600)
        #expect(decompress.status == 0, "\(decompress.stderr)")
        #expect(decompress.stderr.contains("memory limit 128.0 MiB"), "\(decompress.stderr)")
        #expect(decompress.stderr.contains("-M 48.00 MiB)"), "\(decompress.stderr)")
        #expect(scratch.data("out") == original)
        // Outside the group, the real zstd agrees.
        #expect(try scratch.zstd(["-q", "-dc", "--long=27", "in.zst"]).stdout == original)
    }

    @Test("64 MiB and a --long=27 file: -d says the window cannot fit here, and is not killed")
    func windowBeyondTheGroup() throws {
        let scratch = Scratch()
        // 140 MB at --long=27: frames of the 128 MiB window, which they declare.
        let make = try WeirProcess.shell("yes 'a line of text for a long window' | head -c 140000000 > in "
                                         + "&& \"$WEIR\" -q -1 --long=27 in -o in.zst", in: scratch.url, timeout: 300)
        #expect(make.status == 0, "\(make.stderr)")
        let group = try TestCgroup(controller: "memory")
        try group.limitMemory(64 << 20)
        let run = try WeirProcess.shell(group.command("\"$WEIR\" -d in.zst -o out"), in: scratch.url, timeout: 300)
        // zstd's advice, -M128M, would be an OOM kill here (status 137).
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("needs a window of 134217728 bytes"), "\(run.stderr)")
        #expect(run.stderr.contains("more than this process's memory limit of 64.00 MiB allows"), "\(run.stderr)")
        #expect(!run.stderr.contains("-M128M"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.url.appendingPathComponent("out").path))
    }

    @Test("64 MiB and --long=27 on 100 MB: refused before the kernel kills it, and the --long it advises finishes")
    func compressionBeyondTheGroup() throws {
        let scratch = Scratch()
        // One frame of the whole file, read into memory: more than 64 MiB.
        let make = try WeirProcess.shell("yes 'a line of text for a long window' | head -c 100000000 > in",
                                         in: scratch.url, timeout: 300)
        #expect(make.status == 0, "\(make.stderr)")
        let group = try TestCgroup(controller: "memory")
        try group.limitMemory(64 << 20)
        let run = try WeirProcess.shell(group.command("\"$WEIR\" --long=27 in"), in: scratch.url, timeout: 300)
        // Without the refusal, the OOM killer stops it (the shell says 137).
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.hasPrefix("weir: in: needs at least "), "\(run.stderr)")
        #expect(
            run.stderr.hasSuffix(
                " MiB to compress (frames of 96 MiB), more than this process's memory limit of "
                    + "64 MiB (--long=23 fits; or compress it where more memory is free)\n"), "\(run.stderr)")
        #expect(scratch.names == ["in"], "\(scratch.names)")
        // The advice, in the same group.
        let advised = try WeirProcess.shell(group.command("\"$WEIR\" --long=23 in"), in: scratch.url, timeout: 300)
        #expect(advised.status == 0, "\(advised.stderr)")
        #expect(try scratch.zstd(["-q", "-dc", "--long=23", "in.zst"]).stdout == scratch.data("in"))
    }

    @Test("64 MiB and --long=27 on a 20 MB file or a short pipe: they fit, and are not refused")
    func compressionWithinTheGroup() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: Self.memoryInputSize)
        let group = try TestCgroup(controller: "memory")
        try group.limitMemory(64 << 20)
        // One frame of 20 MB: its window and tables sized to it (30 MiB measured).
        let file = try WeirProcess.shell(group.command("\"$WEIR\" --long=27 in"), in: scratch.url, timeout: 300)
        #expect(file.status == 0, "\(file.stderr)")
        #expect(try scratch.zstd(["-q", "-dc", "--long=27", "in.zst"]).stdout == original)
        // A pipe of unknown size, short: 11 MiB measured.
        let pipe = try WeirProcess.shell(group.command("sh -c 'echo hi | \"$WEIR\" --long=27 -c > hi.zst'"),
                                         in: scratch.url, timeout: 300)
        #expect(pipe.status == 0, "\(pipe.stderr)")
        #expect(try scratch.zstd(["-q", "-dc", "hi.zst"]).stdout == Data("hi\n".utf8))
    }

    @Test("128 MiB and -T2 -19: both workers run as asked, with one warning")
    func requestedThreads() throws {
        let scratch = Scratch()
        scratch.text("in", size: 100_000)
        let group = try TestCgroup(controller: "memory")
        try group.limitMemory(128 << 20)
        let run = try WeirProcess.shell(group.command("\"$WEIR\" -T2 -19 -v in -o in.zst"), in: scratch.url)
        #expect(run.status == 0, "\(run.stderr)")
        let warning = "weir: warning: -T2: 2 workers need about "
        #expect(run.stderr.components(separatedBy: warning).count == 2, "\(run.stderr)")
        #expect(run.stderr.contains("more than half the memory limit of 128.0 MiB; running them anyway\n"))
        #expect(run.stderr.contains("weir: 2 workers (-T2, memory limit 128.0 MiB"), "\(run.stderr)")
        // Without -T, the same group gets one worker and no warning.
        let chosen = try WeirProcess.shell(group.command("\"$WEIR\" -19 -v -f in -o in.zst"), in: scratch.url)
        #expect(!chosen.stderr.contains("warning"), "\(chosen.stderr)")
        #expect(chosen.stderr.hasPrefix("weir: 1 worker, 4.00 MiB frames (memory limit 128.0 MiB"), "\(chosen.stderr)")
    }
}
