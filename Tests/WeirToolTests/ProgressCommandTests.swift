import Foundation
import Testing
import Glibc

/// The live progress line in real pseudo-terminals (`script`, tmux), and `--json` statistics.
@Suite("weir progress and statistics")
struct ProgressCommandTests {
    /// Erase from the cursor to the end of the line, which ends every clear.
    static let eraseLine = "\u{1B}[K"

    /// A producer that sends 4 MB, pauses, then the rest of `in`: slow enough
    /// for several redraws (ten a second), fast enough for a test.
    static let slowInput = "(head -c 4000000 in; sleep 1; tail -c +4000001 in)"

    /// Runs `script` (a bash script) with a pseudo-terminal as its stdin,
    /// stdout and stderr; returns all the terminal received.
    func inTerminal(_ script: String, _ scratch: Scratch) throws -> String {
        try script.write(toFile: scratch.path("job.sh"), atomically: true, encoding: .utf8)
        let run = try WeirProcess.shell("script -qec 'bash job.sh' /dev/null", in: scratch.url)
        return String(decoding: run.stdout, as: UTF8.self)
    }

    @Test("on a terminal the line is drawn in place with percent, bar and ETA, then cleared before the summary")
    func drawnOnTerminal() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 12_000_000)
        // The producer stalls after 4 MB until the test has seen the line
        // redrawn during the stall (a heartbeat: the line does not freeze
        // when the input does).
        let session = try TerminalSession(
            """
            (head -c 4000000 in; until [ -e go ]; do sleep 0.01; done; tail -c +4000001 in) \\
                | $WEIR -c --size-hint 12000000 > out.zst
            """, in: scratch)
        let draws = { (screen: String) in screen.components(separatedBy: "\r(stdin) ").count - 1 }
        #expect(session.wait { draws($0) >= 1 }, "\(session.screen.debugDescription)")
        let first = draws(session.screen)
        #expect(session.wait { draws($0) > first }, "\(session.screen.debugDescription)")
        scratch.touch("go")
        let screen = session.finish()
        #expect(screen.contains("% ["))
        #expect(screen.contains("ETA "))
        #expect(screen.contains("MiB/s"))
        // The last drawn line is cleared, and the summary comes after it.
        let lastDraw = try #require(screen.range(of: "\r(stdin) ", options: .backwards))
        let clear = try #require(screen.range(of: "\r" + Self.eraseLine, options: .backwards))
        let summary = try #require(screen.range(of: "(stdin): "))
        #expect(lastDraw.upperBound <= clear.lowerBound)
        #expect(clear.upperBound <= summary.lowerBound)
        #expect(screen[summary.lowerBound...].contains("(11.44 MiB => "))
        let decoded = try scratch.zstd(["-dc", "out.zst"])
        #expect(decoded.stdout == original)
    }

    @Test("not drawn when stderr is redirected, nor with --no-progress or -q; --progress forces it into a file")
    func whenShown() throws {
        let scratch = Scratch()
        scratch.text("in", size: 12_000_000)
        let redirected = try inTerminal("\(Self.slowInput) | $WEIR -v -c --size-hint 12M > out.zst 2> err.txt", scratch)
        #expect(!redirected.contains("\r"), "\(redirected.debugDescription)")
        let err = try String(contentsOfFile: scratch.path("err.txt"), encoding: .utf8)
        #expect(err.hasPrefix("(stdin): ") && !err.contains("\r") && err.split(separator: "\n").count == 1, "\(err)")

        for flags in ["--no-progress", "-q"] {
            let screen = try inTerminal("\(Self.slowInput) | $WEIR -c \(flags) > out.zst", scratch)
            #expect(
                !screen.contains("\r(stdin) ") && !screen.contains(Self.eraseLine),
                "\(flags): \(screen.debugDescription)")
        }

        let forced = try WeirProcess.shell("\(Self.slowInput) | $WEIR -v -c --progress > out.zst", in: scratch.url)
        #expect(forced.status == 0)
        #expect(forced.stderr.hasPrefix("\r(stdin) "), "\(forced.stderr.debugDescription)")
        #expect(!forced.stderr.contains("ETA"))  // no total known: no ETA, no percentage
        #expect(forced.stderr.contains("\r" + Self.eraseLine + "(stdin): "))
        #expect(forced.stderr.hasSuffix(" MiB\n"))  // -v: the summary ends with the peak memory
    }

    @Test(
        """
        the summary: on a terminal and file → file; silent in standard-output mode when stderr is not a terminal, \
        unless -v
        """
    )
    func summaryWhen() throws {
        let scratch = Scratch()
        scratch.text("a", size: 100_000)
        scratch.text("b", size: 100_000, seed: 2)
        // stderr a file, as in a cron job's `tar -I weir`: nothing, as zstd.
        for arguments in [["-c", "a"], ["-c", "a", "b"], ["-o", "-", "a"], ["-dc", "a.zst"]] {
            if arguments.contains("a.zst") { #expect(try WeirProcess.run(["-q", "a"], in: scratch.url).status == 0) }
            let run = try WeirProcess.run(arguments, in: scratch.url)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            #expect(run.stderr.isEmpty, "\(arguments): \(run.stderr)")
        }
        let piped = try WeirProcess.run([], in: scratch.url, stdin: "a")
        #expect(piped.status == 0 && piped.stderr.isEmpty, "\(piped.stderr)")
        // -v brings the summaries back, and the total after several inputs.
        let verbose = try WeirProcess.run(["-v", "-c", "a", "b"], in: scratch.url)
        let lines = verbose.stderr.split(separator: "\n")
        #expect(lines.count == 3, "\(verbose.stderr)")
        #expect(
            lines.first?.hasPrefix("a: ") == true && lines.last?.hasPrefix("2 files: ") == true, "\(verbose.stderr)")
        // File → file keeps its summary without a terminal.
        let files = try WeirProcess.run(["-f", "a"], in: scratch.url)
        #expect(files.stderr.hasPrefix("a: ") && files.stderr.contains("a.zst)"), "\(files.stderr)")
        // -q hides it; -q with an explicit --progress shows it, as zstd ends its progress with one.
        #expect(try WeirProcess.run(["-q", "-f", "a"], in: scratch.url).stderr.isEmpty)
        let asked = try WeirProcess.run(["-q", "--progress", "-f", "a"], in: scratch.url)
        #expect(asked.status == 0 && asked.stderr.contains("a: ") && asked.stderr.contains("a.zst)"), "\(asked.stderr)")
        // stderr on a terminal, stdout into a file: shown; -q hides it.
        let screen = try inTerminal(
            "$WEIR -c --no-progress a > out.zst; $WEIR -c --no-progress < b > out.zst; $WEIR -qc a > out.zst", scratch)
        #expect(screen.contains("a: ") && screen.contains("(stdin): "), "\(screen.debugDescription)")
        #expect(screen.components(separatedBy: "=> ").count == 3, "\(screen.debugDescription)")
    }

    @Test("tmux: the line shows (n/N) for several files; the final screen holds the summaries and no bar")
    func finalScreen() throws {
        let scratch = Scratch()
        scratch.text("in", size: 12_000_000)
        scratch.text("small", size: 100_000)
        let session = scratch.path("tmux.sock")  // a server of its own, its socket gone with the folder
        try """
        mkfifo p1
        \(Self.slowInput) > p1 &
        '\(WeirProcess.binary)' -c p1 small > out.zst
        echo "status $?"
        """.write(toFile: scratch.path("job.sh"), atomically: true, encoding: .utf8)
        // remain-on-exit keeps the finished pane on screen with no process in
        // it; the server is started with only fds 0-2 (the test runner's
        // process monitor must not outlive the shell in a tmux daemon).
        try "set -g remain-on-exit on\n".write(toFile: scratch.path("tmux.conf"), atomically: true, encoding: .utf8)
        let run = try WeirProcess.shell(
            """
            (for fd in $(ls /proc/$BASHPID/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
             exec tmux -S \(session) -f tmux.conf new-session -d -x 100 -y 20 "bash job.sh; echo finished") 2>/dev/null
            seen=no
            for i in $(seq 1 300); do
                screen=$(tmux -S \(session) capture-pane -p -S -)
                # The speed of what was compressed: 0 B/s while the first chunk fills.
                case "$screen" in *"(1/2) p1 "*" B/s"*|*"(1/2) p1 "*"iB/s"*) seen=yes;; esac
                case "$screen" in *finished*) break;; esac
                sleep 0.1
            done
            tmux -S \(session) kill-session; tmux -S \(session) kill-server 2>/dev/null
            echo "seen $seen"
            echo "$screen"
            """, in: scratch.url, timeout: 60)
        let output = String(decoding: run.stdout, as: UTF8.self)
        #expect(output.hasPrefix("seen yes\n"), "\(output)")
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).dropFirst()
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("Pane is dead") }
        #expect(lines.count == 5, "\(lines)")
        #expect(lines.first?.hasPrefix("p1: ") == true)
        #expect(lines.dropFirst().first?.hasPrefix("small: ") == true)
        #expect(lines.dropFirst(2).first?.hasPrefix("2 files: ") == true)
        #expect(lines.contains("status 0"))
        #expect(!output.contains("ETA") && !output.contains("MiB/s 0:"), "\(output)")
    }

    @Test("Ctrl-C, once or twice, leaves the line cleared")
    func clearedOnSignal() throws {
        let scratch = Scratch()
        for kills in ["kill -INT $pid", "kill -INT $pid; kill -INT $pid"] {
            // The signal comes once the line is on the screen (the test sees it, then says go).
            let session = try TerminalSession(
                """
                rm -f go; mkfifo feed
                (head -c 3000000 /dev/urandom; exec sleep 30) > feed & producer=$!
                \(TestShell.asForeground)$WEIR --size-hint 10M -o out.zst < feed & pid=$!
                until [ -e go ]; do sleep 0.01; done; \(kills); wait $pid; echo "status $?"
                kill -9 $producer; rm feed
                """, in: scratch)
            #expect(session.wait { $0.contains("\r(stdin) ") }, "\(kills): \(session.screen.debugDescription)")
            scratch.touch("go")
            let screen = session.finish()
            #expect(screen.contains("status 130"), "\(kills): \(screen.debugDescription)")
            let lastDraw = try #require(screen.range(of: "\r(stdin) ", options: .backwards), "\(kills)")
            let clear = try #require(screen.range(of: "\r" + Self.eraseLine, options: .backwards), "\(kills)")
            #expect(lastDraw.upperBound <= clear.lowerBound, "\(kills): \(screen.debugDescription)")
            #expect(!scratch.exists("out.zst"))
        }
    }

    /// The JSON objects on stderr, one per line; every line must be one.
    func objects(_ stderr: String) throws -> [[String: Any]] {
        try stderr.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(object as? [String: Any], "\(line)")
        }
    }

    /// Checks that `object` has every field, each with its JSON type.
    func expectFields(_ object: [String: Any], compressing: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        let strings = ["operation", "status"]
        let integers = ["bytes_in", "bytes_out", "threads", "frames", "peak_rss_bytes"]
        let numbers = ["ratio", "seconds", "cpu_seconds", "mib_per_s_in", "mib_per_s_out"]
        for key in strings { #expect(object[key] is String, "\(key)", sourceLocation: sourceLocation) }
        for key in integers {
            #expect(
                (object[key] as? NSNumber).map { Double(truncating: $0).rounded() == Double(truncating: $0) } == true,
                "\(key)", sourceLocation: sourceLocation)
        }
        for key in numbers { #expect(object[key] as? Double != nil, "\(key)", sourceLocation: sourceLocation) }
        for key in ["input", "output"] {
            #expect(object[key] is String || object[key] is NSNull, "\(key)", sourceLocation: sourceLocation)
        }
        for key in ["level", "chunk_bytes"] {
            #expect(
                compressing ? object[key] as? Int != nil : object[key] is NSNull, "\(key)",
                sourceLocation: sourceLocation)
        }
    }

    @Test("--json: one object per input with every field and the real sizes, errors included, then a total")
    func json() throws {
        let scratch = Scratch()
        scratch.text("a", size: 3_000_000)
        scratch.text("b", size: 500_000, seed: 2)
        let run = try WeirProcess.run(["--json", "-T2", "--chunk-size", "1MiB", "a", "missing", "b"], in: scratch.url)
        #expect(run.status == 1)
        let objects = try self.objects(run.stderr)
        #expect(objects.count == 4, "\(run.stderr)")
        guard objects.count == 4 else { return }
        for (object, name) in zip([objects[0], objects[2]], ["a", "b"]) {
            expectFields(object, compressing: true)
            #expect(object["operation"] as? String == "compress")
            #expect(object["input"] as? String == name)
            #expect(object["output"] as? String == name + ".zst")
            #expect(object["bytes_in"] as? Int == scratch.data(name)!.count)
            #expect(object["bytes_out"] as? Int == scratch.data(name + ".zst")!.count)
            let ratio = Double(scratch.data(name + ".zst")!.count) / Double(scratch.data(name)!.count)
            #expect(abs((object["ratio"] as? Double ?? 0) - ratio) < 1e-9)
            #expect(object["threads"] as? Int == 2)
            #expect(object["level"] as? Int == 3)
            #expect(object["chunk_bytes"] as? Int == 1 << 20)
            #expect(object["status"] as? String == "ok")
            #expect(object["error"] == nil && object["total"] == nil)
            #expect((object["peak_rss_bytes"] as? Int ?? 0) > 0)
        }
        #expect(objects[0]["frames"] as? Int == 3)
        expectFields(objects[1], compressing: true)
        #expect(objects[1]["input"] as? String == "missing")
        #expect(objects[1]["status"] as? String == "error")
        #expect((objects[1]["error"] as? String)?.contains("missing") == true, "\(objects[1])")
        let total = objects[3]
        expectFields(total, compressing: true)
        #expect(total["total"] as? Bool == true)
        #expect(total["bytes_in"] as? Int == 3_500_000)
        #expect(total["bytes_out"] as? Int == scratch.data("a.zst")!.count + scratch.data("b.zst")!.count)
        #expect(total["status"] as? String == "error")
        #expect(total["error"] as? String == "1 of 3 inputs failed")
    }

    @Test("--json reports the chunk size the run used: a 5 MB file on two workers is cut into two frames of its half")
    func jsonChunkOfSmallFile() throws {
        let scratch = Scratch()
        scratch.text("small", size: 5_000_000)
        let run = try WeirProcess.run(["--json", "-T2", "small"], in: scratch.url)
        #expect(run.status == 0, "\(run.stderr)")
        let object = try #require(try objects(run.stderr).first)
        let chunk = try #require(object["chunk_bytes"] as? Int)
        let frames = try #require(object["frames"] as? Int)
        #expect(frames == 2)
        // Every frame but the last is a whole chunk, so the input fills them.
        #expect(chunk * (frames - 1) < 5_000_000 && 5_000_000 <= chunk * frames, "chunk \(chunk), frames \(frames)")
    }

    @Test("--json when decompressing from stdin to stdout, and testing: the compressed side in, - for the streams")
    func jsonStreams() throws {
        let scratch = Scratch()
        let original = scratch.text("a", size: 2_000_000)
        #expect(try WeirProcess.run(["-q", "a"], in: scratch.url).status == 0)
        let compressed = scratch.data("a.zst")!
        let run = try WeirProcess.run(["-d", "--json"], in: scratch.url, stdin: "a.zst")
        #expect(run.status == 0)
        #expect(run.stdout == original)
        let found = try objects(run.stderr)
        #expect(found.count == 1)
        let object = try #require(found.first)
        expectFields(object, compressing: false)
        #expect(object["operation"] as? String == "decompress")
        #expect(object["input"] as? String == "-")
        #expect(object["output"] as? String == "-")
        #expect(object["bytes_in"] as? Int == compressed.count)
        #expect(object["bytes_out"] as? Int == original.count)

        let test = try WeirProcess.run(["-t", "--json", "a.zst"], in: scratch.url)
        let tested = try #require(try self.objects(test.stderr).first)
        expectFields(tested, compressing: false)
        #expect(tested["operation"] as? String == "test")
        #expect(tested["output"] is NSNull)
        #expect(tested["bytes_in"] as? Int == compressed.count)
    }

    @Test("several files: a total line after the summaries; -v adds CPU time and peak memory to each")
    func totalLine() throws {
        let scratch = Scratch()
        scratch.text("a", size: 1_000_000)
        scratch.text("b", size: 1_000_000, seed: 3)
        let run = try WeirProcess.run(["-v", "a", "b"], in: scratch.url)
        #expect(run.status == 0)
        let lines = run.stderr.split(separator: "\n")
        #expect(lines.count == 3, "\(run.stderr)")
        #expect(lines.first?.hasPrefix("a: ") == true)
        #expect(lines.last?.hasPrefix("2 files: ") == true)
        #expect(lines.allSatisfy { $0.contains(", cpu ") && $0.contains("peak memory") })
    }

    @Test("many files compressed side by side: the summaries and --json objects come in the inputs' order")
    func inputOrder() throws {
        let scratch = Scratch()
        // Large and small mixed, in no sorted order: the small ones finish first on the other workers.
        let names = ["m", "k", "big", "c", "x", "a", "other", "b", "z", "y"]
        for (index, name) in names.enumerated() {
            let size = name == "big" || name == "other" ? 6_000_000 : 2_000 + index * 500
            scratch.text(name, size: size, seed: UInt64(index))
        }
        let human = try WeirProcess.run(["-T2"] + names, in: scratch.url)
        #expect(human.status == 0, "\(human.stderr)")
        let summaries = human.stderr.split(separator: "\n").compactMap { line in
            line.split(separator: ":").first.map(String.init)
        }
        #expect(summaries == names + ["\(names.count) files"], "\(human.stderr)")
        let json = try WeirProcess.run(["--json", "-f", "-T2"] + names, in: scratch.url)
        #expect(json.status == 0, "\(json.stderr)")
        let inputs = try objects(json.stderr).compactMap { $0["input"] as? String }
        #expect(inputs == names, "\(json.stderr)")
    }
}