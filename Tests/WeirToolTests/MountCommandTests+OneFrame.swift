import Foundation
import Testing

/// `weir mount` of a `.tar.zst` that `zstd` wrote as one frame, larger
/// than half the cache (issue 81, item 6; docs/mount.md, "One frame"): the
/// decode that makes the member tree leaves checkpoints of the decoder, the
/// windows past `-M` in an unlinked file in `TMPDIR`; reads anywhere, in any
/// order, by readers at once, give `tar x`'s bytes; a damaged frame is
/// not mounted; without `-M`, the frame is not held whole.
extension MountCommandTests {
    @Test("one frame from zstd -T2: every file, reads backwards and at random, two readers; spill unlinked in TMPDIR")
    func oneFrame() throws {
        let scratch = Scratch()
        let result = try run(scratch, """
            mkdir -p src/a src/b tmp mnt x
            # ~44 MB of content: checkpoints every 16 MiB, past -M 8M's room for windows in memory.
            seq 1 2500000 > src/a/numbers.txt
            head -c 9000000 /dev/urandom | base64 > src/b/random.txt
            seq 7000000 9000000 | sed 's/$/ text that repeats/' > src/b/lines.txt
            for i in $(seq 1 300); do seq $i $((i * 50)) > src/a/small-$i.txt; done
            tar -cf t.tar -C src a b
            zstd -q -3 -T2 t.tar -o t.tar.zst
            tar -xf t.tar -C x
            \(TestShell.asForeground)env TMPDIR="$PWD/tmp" $WEIR mount -f -M 8M t.tar.zst mnt 2> log & pid=$!
            ready mnt
            # The windows' file is unlinked as soon as made: none is left in TMPDIR, one is open.
            test -z "$(ls -A tmp)"
            ls -l /proc/$pid/fd | grep -q "$PWD/tmp/weir-checkpoints-.* (deleted)"
            # Before anything is read in order (the kernel keeps what was read): backwards, then at random.
            python3 - <<'PY'
            import os, random
            random.seed(7)
            for name in ["b/lines.txt", "a/numbers.txt", "b/random.txt"]:
                want = open("x/" + name, "rb").read()
                fd = os.open("mnt/" + name, os.O_RDONLY)
                size = len(want)
                # Backwards in 1 MiB steps, then at random: each read from the checkpoint before it.
                for at in range(size - (size % (1 << 20)), -1, -(1 << 20)):
                    assert os.pread(fd, 1 << 20, at) == want[at:at + (1 << 20)], (name, at)
                for _ in range(200):
                    at = random.randrange(size); n = random.randrange(1, 300000)
                    assert os.pread(fd, n, at) == want[at:at + n], (name, at, n)
                os.close(fd)
            PY
            diff -r x mnt
            cat mnt/b/lines.txt > l1 & one=$!; cat mnt/a/numbers.txt > n1 & two=$!
            cat mnt/b/random.txt > r1; wait $one $two
            cmp l1 x/b/lines.txt; cmp n1 x/a/numbers.txt; cmp r1 x/b/random.txt
            kill -INT $pid; wait $pid
            test -z "$(ls -A tmp)"
            # Damaged: the decode that makes the tree checks every block and the checksum; nothing is mounted.
            cp t.tar.zst bad.tar.zst
            python3 -c "
            import os
            f = open('bad.tar.zst', 'r+b'); f.seek(os.path.getsize('bad.tar.zst') // 2); b = f.read(1)
            f.seek(-1, 1); f.write(bytes([b[0] ^ 0x5a])); f.close()"
            if env TMPDIR="$PWD/tmp" $WEIR mount bad.tar.zst mnt 2> err; then echo "mounted a damaged frame"; exit 1; fi
            grep -q 'bad.tar.zst' err
            ! mountpoint -q mnt
            test -z "$(ls -A tmp)"
            # Without -M the cache stays 24 MiB: the frame (the 80 MB tar) is never decoded whole into memory.
            env TMPDIR="$PWD/tmp" /usr/bin/time -f %M -o mount.rss $WEIR mount -f t.tar.zst mnt 2>> log & timed=$!
            ready mnt
            cat mnt/b/lines.txt mnt/a/numbers.txt mnt/b/random.txt > all
            cat x/b/lines.txt x/a/numbers.txt x/b/random.txt | cmp - all
            fusermount3 -u mnt; wait $timed
            peak=$(tail -1 mount.rss); content=$(( $(stat -c %s t.tar) / 1024 ))
            test "$peak" -lt "$content" || { echo "peak $peak KiB, content $content KiB"; exit 1; }
            echo done
            """)
        expectDone(result)
    }
}
