import Foundation
import Testing

/// `weir mount`'s life on the kernel's FUSE (docs/mount.md, "Mounting and
/// unmounting", issue 80): a mount point named relative to where weir
/// started, stopped by each signal, unmounts weir's own file system and no
/// other; an archive under its own mount point; names that are not UTF-8;
/// a background mount cancelled at each step never appears; `-o rw` stays
/// read-only; `-M` bounds the memory of frames larger than it.
@Suite("weir mount's life", .serialized)
struct MountLifecycleCommandTests {
    func run(_ scratch: Scratch, _ script: String) throws -> WeirProcess.Result {
        try MountCommandTests().run(scratch, script)
    }

    func expectDone(_ result: WeirProcess.Result, sourceLocation: SourceLocation = #_sourceLocation) {
        MountCommandTests().expectDone(result, sourceLocation: sourceLocation)
    }

    /// `small`: an archive `t.tar.zst` of `src/a.txt` (600 KB: a few 64 KiB frames).
    static let small = """
        mkdir -p src; seq 1 100000 > src/a.txt
        tar -cf t.tar -C src a.txt
        $WEIR -q -B 64K t.tar
        """

    @Test("the archive under its own mount point (weir mount DIR/a.tar.zst DIR): reads, with 1 thread and more")
    func archiveUnderMountPoint() throws {
        let scratch = Scratch()
        let result = try run(scratch, Self.small + """

            mkdir mnt
            cp t.tar.zst mnt/
            for threads in 1 4; do
                \(TestShell.asForeground)$WEIR mount -f -T $threads mnt/t.tar.zst mnt 2> log & pid=$!
                ready mnt
                # Read in the background: with one thread, the old identity check waited on the mount itself
                # (the reader unkillable); a reader still there once weir ended by SIGKILL fails the test.
                cat mnt/a.txt > got & reader=$!
                for i in $(seq 600); do kill -0 $reader 2> /dev/null || break; sleep 0.05; done
                if kill -0 $reader 2> /dev/null; then kill -9 $pid; echo "-T $threads: the read hangs"; exit 1; fi
                wait $reader || { echo "-T $threads: $(cat log)"; exit 1; }
                cmp got src/a.txt
                kill -TERM $pid; wait $pid
            done
            ls mnt | grep -qx t.tar.zst
            echo done
            """)
        expectDone(result)
    }

    @Test("-M bounds the mount: 32 MiB frames, -M 16M -T 8, 8 random readers: peak within -M and 8 MiB")
    func memoryBound() throws {
        let scratch = Scratch()
        // Random bytes: stored blocks, the cheapest to make and decode; three frames of 32 MiB and a rest,
        // each larger than -M, so every read streams (the old code decoded each whole on each thread).
        let result = try run(scratch, """
            mkdir -p src mnt; head -c 100M /dev/urandom > src/r.bin
            tar -cf t.tar -C src r.bin; $WEIR -q -1 -B 32M t.tar; rm t.tar
            $WEIR mount -M 16M -T 8 t.tar.zst mnt; ready mnt
            pid=$(pgrep -f -- "mount -M 16M -T 8 t.tar.zst mnt\\$")
            # The peak from here: what reads add.
            echo 5 > /proc/$pid/clear_refs
            before=$(awk '/^VmHWM/ {print $2}' /proc/$pid/status)
            python3 - <<'PY'
            import os, random, threading
            size = os.path.getsize("src/r.bin")
            bad = []
            def reader(seed):
                rng = random.Random(seed)
                fd, want = os.open("mnt/r.bin", os.O_RDONLY), os.open("src/r.bin", os.O_RDONLY)
                for _ in range(12):
                    start = rng.randrange(size - 131072)
                    if os.pread(fd, 131072, start) != os.pread(want, 131072, start): bad.append(start)
                os.close(fd); os.close(want)
            threads = [threading.Thread(target=reader, args=(seed,)) for seed in range(8)]
            for thread in threads: thread.start()
            for thread in threads: thread.join()
            assert not bad, bad
            PY
            peak=$(awk '/^VmHWM/ {print $2}' /proc/$pid/status)
            echo "peak $peak KiB, $before KiB before the reads" >&2
            # -M (16384 KiB) and 8 MiB for the rest: threads' buffers, libzstd's tables, the allocator's.
            test $((peak - before)) -le $((16384 + 8192)) || { echo "peak $peak KiB, $before before"; exit 1; }
            fusermount3 -u mnt
            echo done
            """)
        expectDone(result)
    }
}
