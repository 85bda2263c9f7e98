import Foundation
import Testing
import Glibc

/// Faults, odd inputs and signals, through the built binary.
@Suite("weir faults")
struct FaultCommandTests {
    @Test("disk full: stdout on /dev/full, and a file on a 1 MiB tmpfs; nothing partial is left")
    func diskFull() throws {
        let scratch = Scratch()
        scratch.text("in", size: 2_000_000)
        let full = try WeirProcess.run(["-c", "in"], in: scratch.url, stdoutPath: "/dev/full")
        #expect(full.status == 1)
        #expect(full.stderr == "weir: (stdout): write failed: No space left on device\n")

        // A small file system made for the test (the tests run as root).
        let mountPoint = scratch.path("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        let mounted = try WeirProcess.shell("mount -t tmpfs -o size=1M tmpfs small", in: scratch.url)
        #expect(mounted.status == 0, "mount: \(mounted.stderr)")
        defer { _ = try? WeirProcess.shell("umount small", in: scratch.url) }
        let random = try WeirProcess.shell("head -c 3000000 /dev/urandom > big", in: scratch.url)
        #expect(random.status == 0)
        let run = try WeirProcess.run(["big", "-o", "small/big.zst"], in: scratch.url)
        #expect(run.status == 1)
        #expect(run.stderr.contains("weir: small/big.zst: write failed: No space left on device"), "\(run.stderr)")
        #expect((try FileManager.default.contentsOfDirectory(atPath: mountPoint)).isEmpty)
        #expect(scratch.data("big")?.count == 3_000_000)
    }

    @Test(
        """
        disk full under -r: the files side by side that fit are complete, the others fail cleanly, nothing partial is \
        left
        """
    )
    func diskFullSideBySide() throws {
        let scratch = Scratch()
        try FileManager.default.createDirectory(atPath: scratch.path("tree"), withIntermediateDirectories: false)
        // Random bytes do not compress: 24 outputs of ~96 KiB cannot all fit in 1 MiB.
        let made = try WeirProcess.shell("for i in $(seq 10 33); do head -c 98304 /dev/urandom > tree/f$i; done",
                                         in: scratch.url)
        #expect(made.status == 0)
        try FileManager.default.createDirectory(atPath: scratch.path("small"), withIntermediateDirectories: false)
        let mounted = try WeirProcess.shell("mount -t tmpfs -o size=1M tmpfs small", in: scratch.url)
        #expect(mounted.status == 0, "mount: \(mounted.stderr)")
        defer { _ = try? WeirProcess.shell("umount small", in: scratch.url) }

        let run = try WeirProcess.run(["-T2", "-r", "tree", "--output-dir-flat", "small"], in: scratch.url)
        #expect(run.status == 1)
        let failures = run.stderr.split(separator: "\n").filter {
            $0.hasSuffix("write failed: No space left on device")
        }
        let outputs = try FileManager.default.contentsOfDirectory(atPath: scratch.path("small"))
        // Every file either failed with the disk's error or has its whole output, and nothing else is there.
        #expect(!failures.isEmpty && !outputs.isEmpty, "\(run.stderr)")
        #expect(failures.count + outputs.count == 24, "\(run.stderr) \(outputs)")
        for output in outputs {
            #expect(output.hasPrefix("f") && output.hasSuffix(".zst"), "left behind: \(output)")
            let decoded = try scratch.zstd(["-dc", "small/\(output)"])
            #expect(decoded.status == 0 && decoded.stdout == scratch.data("tree/\(output.dropLast(4))"), "\(output)")
        }
    }

    @Test("devices are read only with -f; FIFOs like pipes; odd names work")
    func oddInputs() throws {
        let scratch = Scratch()
        let refused = try WeirProcess.run(["-c", "/dev/zero"], in: scratch.url)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("/dev/zero: is not a regular file -- ignored"))
        let zero = try WeirProcess.shell(
            "$WEIR -q -f -c /dev/zero | head -c 1000000 | zstd -dc 2>/dev/null | head -c 500000 | wc -c",
            in: scratch.url, timeout: 30)
        #expect(
            String(decoding: zero.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "500000")

        let original = scratch.text("source", size: 300_000)
        let fifo = try WeirProcess.shell(
            "mkfifo pipe; (cat source > pipe &); $WEIR -q pipe -o fifo.zst; rm pipe", in: scratch.url)
        #expect(fifo.status == 0, "\(fifo.stderr)")
        #expect(try scratch.zstd(["-dc", "fifo.zst"]).stdout == original)

        // A file named "-" is spelled ./- (a bare - is stdin, as in zstd).
        for (name, spelled) in [("-", "./-"), ("-dash", "-dash"), ("with space", "with space"), ("ünïcode", "ünïcode")]
        {
            _ = FileManager.default.createFile(atPath: scratch.path(name), contents: original)
            let run = try WeirProcess.run(["-q", "--", spelled], in: scratch.url)
            #expect(run.status == 0, "\(name): \(run.stderr)")
            let back = try WeirProcess.run(["-q", "-d", "-f", "--", spelled + ".zst"], in: scratch.url)
            #expect(back.status == 0, "\(name): \(back.stderr)")
            #expect(scratch.data(name) == original, "\(name)")
        }

        // A name that is not UTF-8 is that very file (more in NameCommandTests).
        let latin1 = try WeirProcess.shell(
            "head -c 100 /dev/zero > $'caf\\xe9'; $WEIR -q $'caf\\xe9' && /usr/bin/zstd -qt $'caf\\xe9.zst'; echo "
                + "\"status $?\"",
            in: scratch.url)
        #expect(latin1.stderr == "")
        #expect(String(decoding: latin1.stdout, as: UTF8.self) == "status 0\n")

        _ = FileManager.default.createFile(atPath: scratch.path("empty"), contents: Data())
        #expect(try WeirProcess.run(["-q", "empty"], in: scratch.url).status == 0)
        #expect(try scratch.zstd(["-t", "empty.zst"]).status == 0)
        #expect(try WeirProcess.run(["-q", "-d", "-f", "empty.zst"], in: scratch.url).status == 0)
        #expect(scratch.data("empty") == Data())
    }

    @Test("an unreadable input and an unwritable folder are clean errors")
    func permissions() throws {
        let scratch = Scratch()
        scratch.text("secret", size: 1000)
        chmod(scratch.path("secret"), 0o000)
        chmod(scratch.url.path, 0o777)
        // Root reads anything: run weir as nobody to see a real EACCES.
        // A copy of the binary in the scratch folder: the build folder may sit
        // where nobody cannot reach it.
        let denied = try WeirProcess.shell(
            "cp $WEIR ./weir-copy && chmod 755 ./weir-copy && setpriv --reuid=nobody --regid=nogroup --clear-groups "
                + "./weir-copy -c secret > /dev/null",
            in: scratch.url)
        #expect(denied.status == 1)
        #expect(denied.stderr == "weir: secret: open failed: Permission denied\n")
        let folder = try WeirProcess.run(["-c", "secret", "-o", "/proc/weir-test.zst"], in: scratch.url)
        #expect(folder.status == 1)
        #expect(folder.stderr.hasPrefix("weir: /proc/weir-test.zst: create failed: "))
    }

    @Test("an input that changes size while read: correct output for what was read, or a clear failure",
          arguments: ["--mmap", "--no-mmap"])
    func changingInput(reading: String) throws {
        let scratch = Scratch()
        scratch.text("grow", size: 30_000_000, seed: 3)
        scratch.text("shrink", size: 60_000_000, seed: 4)
        let run = try WeirProcess.shell(
            """
            ($WEIR -q -T1 \(reading) --chunk-size 64K grow & sleep 0.05; head -c 1000000 /dev/urandom >> grow; wait)
            $WEIR -q -T1 \(reading) shrink 2> shrink.err & pid=$!
            sleep 0.1; truncate -s 1000000 shrink; wait $pid; echo "$?" > shrink.status
            echo done
            """, in: scratch.url, timeout: 60)
        #expect(String(decoding: run.stdout, as: UTF8.self) == "done\n")
        // Cut while a piece was being compressed: a mapped file says so and
        // leaves nothing; never a crash (SIGBUS) and never a wrong file.
        let status = String(decoding: scratch.data("shrink.status") ?? Data(), as: UTF8.self)
        let message = String(decoding: scratch.data("shrink.err") ?? Data(), as: UTF8.self)
        #expect(status == "0\n" || status == "1\n", "exit status \(status)")
        if status == "1\n" {
            #expect(message == "weir: shrink: the file was truncated while it was being read\n")
            #expect(!scratch.exists("shrink.zst"))
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).filter {
            $0.hasPrefix(".")
        }
        #expect(leftovers.isEmpty, "temporary files left: \(leftovers)")
        for name in ["grow", "shrink"] where scratch.exists(name + ".zst") {
            let decoded = try scratch.zstd(["-dc", name + ".zst"])
            #expect(decoded.status == 0, "\(name)")
            let now = scratch.data(name)!
            // What was written is exactly the file as it was read: a prefix of
            // the grown file, or the first bytes of the original before truncation.
            #expect(decoded.stdout.count > 0)
            if name == "grow" {
                #expect(now.starts(with: decoded.stdout))
            } else {
                #expect(decoded.stdout.prefix(now.count) == now.prefix(decoded.stdout.count))
            }
        }
    }

    @Test("SIGTERM and SIGHUP end weir with 128+N and no partial file; a second Ctrl-C exits at once")
    func signals() throws {
        let scratch = Scratch()
        for (signal, status) in [("TERM", 143), ("HUP", 129)] {
            let run = try WeirProcess.shell(
                """
                mkfifo feed
                (head -c 2000000 /dev/urandom; exec sleep 30) > feed & producer=$!
                \(TestShell.asForeground)$WEIR -o out.zst < feed & pid=$!
                sleep 1; kill -\(signal) $pid; wait $pid; echo "status $?" >&2
                kill -9 $producer; rm feed
                """, in: scratch.url, timeout: 20)
            #expect(run.stderr.contains("status \(status)"), "\(signal): \(run.stderr)")
            #expect(scratch.names.isEmpty, "\(signal): \(scratch.names)")
        }
        // Output stuck on a full pipe nobody reads: the first SIGINT asks for a
        // clean stop; a second one exits at once, still removing the temporary file.
        let twice = try WeirProcess.shell(
            """
            mkfifo feed
            (head -c 2000000 /dev/urandom; exec sleep 30) > feed & producer=$!
            \(TestShell.asForeground)$WEIR -o out.zst < feed & pid=$!
            sleep 1; kill -INT $pid; kill -INT $pid; wait $pid; echo "status $?" >&2
            kill -9 $producer; rm feed
            """, in: scratch.url, timeout: 20)
        #expect(twice.stderr.contains("status 130"), "\(twice.stderr)")
        #expect(scratch.names.isEmpty, "\(scratch.names)")
    }
}