import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The refusals and guarantees zstd users rely on.
@Suite("weir safety")
struct SafetyTests {
    @Test("an existing output is refused without -f and replaced with it")
    func existingOutput() throws {
        let scratch = Scratch()
        scratch.text("in", size: 1000)
        _ = FileManager.default.createFile(atPath: scratch.path("in.zst"), contents: Data("precious".utf8))
        let refused = try WeirProcess.run(["in"], in: scratch.url)
        #expect(refused.status == 1)
        #expect(refused.stderr == "weir: in.zst: already exists; use -f to overwrite it\n")
        #expect(scratch.data("in.zst") == Data("precious".utf8))
        #expect(try WeirProcess.run(["-f", "in"], in: scratch.url).status == 0)
        #expect(try scratch.zstd(["-t", "in.zst"]).status == 0)
    }

    @Test("the output may not be the input, even through another spelling")
    func sameFile() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 1000)
        for output in ["in", "./in", scratch.path("in")] {
            let run = try WeirProcess.run(["-f", "in", "-o", output], in: scratch.url)
            #expect(run.status == 1, "\(output)")
            #expect(run.stderr.contains("is the input"), "\(output): \(run.stderr)")
        }
        symlink("in", scratch.path("link"))
        #expect(try WeirProcess.run(["-f", "in", "-o", "link"], in: scratch.url).status == 1)
        #expect(scratch.data("in") == original)
    }

    @Test("compressed data is not written to a terminal, nor read from one, unless asked")
    func terminals() throws {
        let scratch = Scratch()
        scratch.text("in", size: 1000)
        // `script` gives the command a real pseudo-terminal as stdin and stdout.
        let refused = try WeirProcess.shell("script -qec '$WEIR < in' /dev/null", in: scratch.url)
        #expect(refused.status == 1)
        #expect(String(decoding: refused.stdout, as: UTF8.self).contains("stdout is a terminal, aborting"))
        let forced = try WeirProcess.shell("script -qec '$WEIR -c in | wc -c' /dev/null", in: scratch.url)
        #expect(forced.status == 0)
        let readTTY = try WeirProcess.shell("script -qec '$WEIR -d -c' /dev/null < /dev/null", in: scratch.url)
        #expect(readTTY.status == 1)
        #expect(String(decoding: readTTY.stdout, as: UTF8.self).contains("will not read compressed data from a terminal"))
    }

    @Test("a decompression failure leaves no output file and the input intact")
    func failureLeavesNothing() throws {
        let scratch = Scratch()
        scratch.text("in", size: 300_000)
        #expect(try WeirProcess.run(["-q", "in"], in: scratch.url).status == 0)
        let compressed = scratch.data("in.zst")!
        _ = FileManager.default.createFile(atPath: scratch.path("cut.zst"), contents: compressed.prefix(compressed.count - 100))
        let truncated = try WeirProcess.run(["-d", "cut.zst"], in: scratch.url)
        #expect(truncated.status == 1)
        #expect(truncated.stderr.hasPrefix("weir: cut.zst: truncated input"))
        #expect(scratch.names == ["cut.zst", "in", "in.zst"])
        #expect(scratch.data("cut.zst")?.count == compressed.count - 100)

        _ = FileManager.default.createFile(atPath: scratch.path("plain.zst"), contents: Data("not compressed".utf8))
        let notZstd = try WeirProcess.run(["-d", "plain.zst"], in: scratch.url)
        #expect(notZstd.stderr == "weir: plain.zst: not in zstd format\n")
        let unknown = try WeirProcess.run(["-d", "in"], in: scratch.url)
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("unknown suffix"))
        #expect(unknown.stderr.contains("-o"))
        let directory = try WeirProcess.run([scratch.url.path], in: scratch.url)
        #expect(directory.stderr.contains("is a directory"))
        #expect(scratch.names == ["cut.zst", "in", "in.zst", "plain.zst"])
    }

    @Test("a closed downstream pipe ends weir promptly with an error, silent under -q")
    func brokenPipe() throws {
        let scratch = Scratch()
        scratch.text("big", size: 20_000_000)
        let loud = try WeirProcess.shell("$WEIR -c big | head -c 100 > /dev/null; echo \"status ${PIPESTATUS[0]}\" >&2", in: scratch.url, timeout: 30)
        #expect(loud.stderr.contains("(stdout): write failed: Broken pipe"))
        #expect(loud.stderr.contains("status 1"))
        let quiet = try WeirProcess.shell("$WEIR -q -c big | head -c 100 > /dev/null; echo \"status ${PIPESTATUS[0]}\" >&2", in: scratch.url, timeout: 30)
        #expect(quiet.stderr == "status 1\n")
    }

    @Test("Ctrl-C removes the partial output and exits 130; the pipe's flags are restored")
    func interrupt() throws {
        let scratch = Scratch()
        // A producer that never finishes: weir blocks reading it, then gets SIGINT.
        let result = try WeirProcess.shell("""
            mkfifo feed
            (head -c 3000000 /dev/urandom; exec sleep 30) > feed & producer=$!
            $WEIR -o out.zst < feed & pid=$!
            sleep 1; ls -a | grep -c 'out.zst.weir-' >&2
            kill -INT $pid; wait $pid; echo "status $?" >&2
            kill -9 $producer; rm feed
            """, in: scratch.url, timeout: 20)
        #expect(result.stderr.contains("1\nstatus 130"), "\(result.stderr)")
        #expect(scratch.names.isEmpty)

        // weir's stdin pipe is shared with this shell's: O_NONBLOCK must be gone after weir exits.
        let flags = try WeirProcess.shell("""
            exec 3< <(head -c 1000 /dev/zero)
            $WEIR -c <&3 > /dev/null
            python3 -c 'import fcntl,os; print("nonblock" if fcntl.fcntl(3, fcntl.F_GETFL) & os.O_NONBLOCK else "blocking")'
            """, in: scratch.url)
        #expect(String(decoding: flags.stdout, as: UTF8.self) == "blocking\n", "\(flags.stderr)")
    }
}
