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

    @Test("a relative mount point, SIGTERM, SIGINT or SIGHUP to the daemon: its own mount unmounted, no other")
    func relativeMountPoint() throws {
        let scratch = Scratch()
        // The daemon's folder is `/`: the same relative name from there is this test's own tmpfs, which an
        // unmount by that name would take away (lazily: as root, the old code did).
        let result = try run(scratch, Self.small + """

            rel=${PWD#/}/mntfs
            mkdir -p mntfs "$rel"
            mount -t tmpfs weir-test mntfs
            trap '{ fusermount3 -u -z "$rel"; umount -l mntfs; } 2> /dev/null || true' EXIT
            echo kept > mntfs/kept
            for signal in TERM INT HUP; do
                $WEIR mount t.tar.zst "$rel"; ready "$rel"
                cmp "$rel/a.txt" src/a.txt
                pid=$(pgrep -f -- "mount t.tar.zst $rel\\$")
                kill -$signal $pid
                while kill -0 $pid 2> /dev/null; do sleep 0.05; done
                # The tmpfs is still there; weir's mount is gone, not left dead (ENOTCONN).
                mountpoint -q mntfs || { echo "$signal: the tmpfs was unmounted"; exit 1; }
                test "$(cat mntfs/kept)" = kept
                if mountpoint -q "$rel"; then echo "$signal: still mounted"; exit 1; fi
                ls "$rel" > /dev/null
            done
            # Unmounted by the user, then another file system mounted there: weir, stopped, leaves it.
            $WEIR mount t.tar.zst "$rel"; ready "$rel"
            pid=$(pgrep -f -- "mount t.tar.zst $rel\\$")
            fusermount3 -u "$rel"; mount -t tmpfs weir-test2 "$rel"
            kill -TERM $pid 2> /dev/null || true
            while kill -0 $pid 2> /dev/null; do sleep 0.05; done
            mountpoint -q "$rel" && mountpoint -q mntfs
            umount "$rel"
            echo done
            """)
        expectDone(result)
    }

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

    @Test("names with bytes not UTF-8, a newline, a leading '-'; started with 0, 1 and 2 closed")
    func oddNames() throws {
        let scratch = Scratch()
        let result = try run(scratch, Self.small + """

            names=($'arch\\xff.tar.zst' $'new\\nline.tar.zst' '-dash.tar.zst' $'\\xe9t\\xe9 \\x80.tar.zst')
            folders=($'mnt\\xff' $'mnt\\nnl' 'mnt-dash' $'mnt \\xe9')
            for i in 0 1 2 3; do
                cp t.tar.zst "./${names[$i]}"; mkdir -- "${folders[$i]}"
                $WEIR mount -- "${names[$i]}" "${folders[$i]}" || { echo "not mounted: ${names[$i]}"; exit 1; }
                cmp "${folders[$i]}/a.txt" src/a.txt
                fusermount3 -u "${folders[$i]}"
            done
            # Started with standard input, output and error closed: the descriptors weir opens take 0, 1, 2,
            # where the daemon puts /dev/null once mounted; mounted, and the archive's bytes read.
            mkdir mnt-closed
            $WEIR mount t.tar.zst mnt-closed <&- >&- 2>&-
            cmp mnt-closed/a.txt src/a.txt
            fusermount3 -u mnt-closed
            echo done
            """)
        expectDone(result)
    }

    @Test("-o rw: still read-only, every write EROFS")
    func readOnlyAlways() throws {
        let scratch = Scratch()
        let result = try run(scratch, Self.small + """

            mkdir mnt
            $WEIR mount -o rw t.tar.zst mnt; ready mnt
            grep " $PWD/mnt " /proc/mounts | grep -q ' fuse.weir ro,'
            for action in 'touch mnt/new' 'mkdir mnt/d' 'echo x >> mnt/a.txt' 'ln -s a mnt/l'; do
                if bash -c "$action" 2> err; then echo "allowed: $action"; exit 1; fi
                grep -q 'Read-only file system' err || { echo "$action: $(cat err)"; exit 1; }
            done
            fusermount3 -u mnt
            echo done
            """)
        expectDone(result)
    }

    @Test("a background mount cancelled (SIGINT, SIGTERM, SIGHUP to weir) before or once mounted: none left")
    func cancelled() throws {
        let scratch = Scratch()
        // The child's pauses (WEIR_TEST_MOUNT_PAUSE_*) hold it where a user's Ctrl-C could come: deciding
        // before the mount (a tar without an index is decoded there), and mounted, not yet reported.
        let result = try run(scratch, Self.small + """

            mkdir mnt
            for stage in BEFORE READY; do
                for signal in INT TERM HUP; do
                    rm -f pause
                    env --default-signal=INT WEIR_TEST_MOUNT_PAUSE_$stage=$PWD/pause \\
                        $WEIR mount t.tar.zst mnt 2> err & parent=$!
                    while ! test -s pause; do sleep 0.02; done
                    child=$(cat pause)
                    kill -$signal $parent
                    rm pause
                    status=0; wait $parent || status=$?
                    test $status = $((128 + $(kill -l $signal))) || { echo "$stage $signal: $status"; exit 1; }
                    # Nothing mounted now, nor later: the child is gone, or it would mount.
                    for i in $(seq 200); do
                        grep -q " $PWD/mnt " /proc/mounts && break
                        kill -0 $child 2> /dev/null || break
                        sleep 0.05
                    done
                    if grep -q " $PWD/mnt " /proc/mounts; then echo "$stage $signal: mounted"; exit 1; fi
                    if kill -0 $child 2> /dev/null; then echo "$stage $signal: the child lives on"; exit 1; fi
                done
            done
            # In the foreground (-f), a stop signal while the archive is opened: nothing mounted, ended by it.
            rm -f pause
            export WEIR_TEST_MOUNT_PAUSE_BEFORE=$PWD/pause
            \(TestShell.asForeground)$WEIR mount -f t.tar.zst mnt 2> err & pid=$!
            unset WEIR_TEST_MOUNT_PAUSE_BEFORE
            while ! test -s pause; do sleep 0.02; done
            kill -INT $pid; rm pause
            status=0; wait $pid || status=$?
            test $status = 130 || { echo "-f: $status $(cat err)"; exit 1; }
            if grep -q " $PWD/mnt " /proc/mounts; then echo "-f: mounted"; exit 1; fi
            # Not cancelled: mounted, the parent's status 0.
            $WEIR mount t.tar.zst mnt; cmp mnt/a.txt src/a.txt
            fusermount3 -u mnt
            echo done
            """)
        expectDone(result)
    }

    @Test("-M bounds the mount: 32 MiB frames, -M 16M -T 8, 8 random readers: peak within -M and 16 MiB; no -M: kept")
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
            # -M (16384 KiB) and 16 MiB for the rest: threads' buffers, libzstd's tables, and the allocator's
            # freed pages (jemalloc, in release builds, keeps them up to a second: 23 MiB more in all, by hand;
            # debug builds 17). The old code: about 570 MiB more.
            test $((peak - before)) -le $((16384 + 16384)) || { echo "peak $peak KiB, $before before"; exit 1; }
            fusermount3 -u mnt
            # Without -M: room for three of its frames (32 MiB each), which are kept, each decoded once, rather
            # than streamed from their start at every read (-v counts the frames decoded whole).
            \(TestShell.asForeground)$WEIR mount -f -v t.tar.zst mnt 2> log & pid=$!
            ready mnt
            cmp mnt/r.bin src/r.bin
            kill -TERM $pid; wait $pid
            grep -q 'unmounted; [4-9] frames decoded' log || { cat log; exit 1; }
            echo done
            """)
        expectDone(result)
    }

    @Test("SIGTERM while a URL mount waits on a stalled server: unmounted at once, not at the stall's end")
    func stalledServer() throws {
        let scratch = Scratch()
        let servers = try RemoteCommandTests.archive(scratch)
        // Request 1 is the object's last MiB, at mount; request 2, the first frame (f1.txt's), stalls: half
        // its body, then nothing for 20 s (the proxy logs `2 stall-ended` then).
        let proxy = try servers.faultProxy(["stall:2"])
        let result = try withExtendedLifetime(servers) {
            try run(scratch, """
                mkdir mnt
                \(TestShell.asForeground)$WEIR mount -f '\(proxy.url)/a.tar.zst' mnt 2> log & pid=$!
                ready mnt
                cat mnt/src/f1.txt > /dev/null 2>&1 & reader=$!
                while ! grep -q '^2 ' '\(proxy.log)'; do sleep 0.05; done
                kill -TERM $pid; wait $pid
                if grep -q 'stall-ended' '\(proxy.log)'; then echo "weir waited for the stall's end"; exit 1; fi
                if mountpoint -q mnt; then echo "still mounted"; exit 1; fi
                wait $reader || true
                echo done
                """)
        }
        expectDone(result)
    }
}
