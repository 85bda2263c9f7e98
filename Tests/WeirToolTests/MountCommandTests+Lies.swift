import Foundation
import Testing

/// `weir mount` of archives whose member index or seek table lies with
/// valid checksums (issue 80): what the mount serves of a member — its
/// bytes, its size, its kind, its link target, the names a hard link gives
/// it — is checked against the member's own header blocks first, and the
/// seek table against the frames; a lie gives EIO and a message, never
/// other bytes.
extension MountCommandTests {
    /// The scripts' `lie ARCHIVE OUT NAME KEY=VALUE…`: `ARCHIVE`'s member
    /// index with member `NAME`'s record changed (`size`, `data_length`,
    /// `type`, `link`, `path`), re-encoded as weir writes it (version 2, its
    /// checksum right), by scripts/harness/member-index-test's own codec.
    static var lieFunction: String {
        let suite = ManualTests.root.appendingPathComponent("scripts/harness/member-index-test").path
        return #"""
            lie() {
                python3 - "$@" <<'PY'
            import sys, importlib.util, importlib.machinery
            loader = importlib.machinery.SourceFileLoader("suite", "\#(suite)")
            spec = importlib.util.spec_from_loader("suite", loader)
            suite = importlib.util.module_from_spec(spec)
            loader.exec_module(suite)
            source, out, name = sys.argv[1], sys.argv[2], sys.argv[3].encode()
            archive = suite.Archive(open(source, "rb").read())
            members = [dict(m) for m in archive.members]
            member = next(m for m in members if m["path"] == name)
            for change in sys.argv[4:]:
                key, value = change.split("=", 1)
                member[key] = value.encode() if key in ("type", "link", "path") else int(value)
            open(out, "wb").write(archive.with_content(suite.encode_columns(archive.header, members)))
            PY
            }
            """#
    }

    @Test("""
          an index that lies about a file's size (100, 3 or 0 for 6 bytes): EIO and a message, not padded, cut \
          or empty (an empty file, which the kernel never reads, is checked at its lookup)
          """)
    func lyingSize() throws {
        let scratch = Scratch()
        let result = try run(scratch, Self.lieFunction + """

            mkdir src; printf 'hello\\n' > src/a.txt; seq 1 20000 > src/z.txt
            tar -cf t.tar -C src a.txt z.txt
            # Frames of 16 KiB: a.txt's header in the first, z.txt across the others.
            $WEIR -q -B 16K t.tar
            lie t.tar.zst big.tar.zst a.txt size=100
            lie t.tar.zst small.tar.zst a.txt size=3
            lie t.tar.zst zero.tar.zst a.txt size=0
            mkdir mnt
            for lie in big small zero; do
                \(TestShell.asForeground)$WEIR mount -f $lie.tar.zst mnt 2> log-$lie & pid=$!
                trap "kill -TERM $pid 2> /dev/null" EXIT
                ready mnt
                if cat mnt/a.txt > out 2> err; then echo "$lie: read: $(od -c out | head -3)"; exit 1; fi
                grep -q 'Input/output error' err
                cmp mnt/z.txt src/z.txt
                kill -TERM $pid; wait $pid; trap - EXIT
                grep -q "$lie.tar.zst: /a.txt: member index disagrees with the archive: its header gives a size of 6" \\
                    log-$lie
            done
            echo done
            """)
        expectDone(result)
    }

    @Test("an index whose record starts past its member's own pax header, named as its ustar block: EIO")
    func lyingPastPaxHeader() throws {
        let scratch = Scratch()
        try MemberIndexTrustCommandTests.paxGap(scratch)
        let result = try run(scratch, """
            mkdir mnt
            \(TestShell.asForeground)$WEIR mount -f gap.tar.zst mnt 2> log & pid=$!
            trap "kill -TERM $pid 2> /dev/null" EXIT
            ready mnt
            if cat mnt/b.txt > out 2> err; then echo "read: $(od -c out | head -3)"; exit 1; fi
            grep -q 'Input/output error' err
            cmp mnt/c.txt c.txt
            kill -TERM $pid; wait $pid; trap - EXIT
            grep -q 'gap.tar.zst: /b.txt: member index disagrees with the archive: its header names "secret.txt"' log \
                || { cat log; exit 1; }
            # The honest archive: the name tar x gives.
            \(TestShell.asForeground)$WEIR mount -f p.tar.zst mnt 2> log & pid=$!
            trap "kill -TERM $pid 2> /dev/null" EXIT
            ready mnt
            cmp mnt/secret.txt b.txt
            kill -TERM $pid; wait $pid; trap - EXIT
            echo done
            """)
        expectDone(result)
    }

    @Test("""
          an index that calls a file a hard link, a folder, a FIFO or a symbolic link, or changes a link's \
          target: EIO for what it would show, never another member's bytes
          """)
    func lyingRecords() throws {
        let scratch = Scratch()
        let result = try run(scratch, Self.lieFunction + """

            mkdir src; printf 'hello\\n' > src/a.txt; printf 'other\\n' > src/b.txt; seq 1 20000 > src/z.txt
            seq 1 3000 > src/c.txt; ln src/a.txt src/hard; ln -s a.txt src/link
            tar -cf t.tar -C src a.txt b.txt c.txt hard link z.txt
            $WEIR -q -B 16K t.tar
            # Each lie, then what a reader of the name it lies about does: it must fail with EIO.
            lie t.tar.zst l1.tar.zst b.txt type=1 link=a.txt
            lie t.tar.zst l2.tar.zst b.txt type=1 link=a.txt data_length=0 size=0
            lie t.tar.zst l3.tar.zst hard link=b.txt
            lie t.tar.zst l4.tar.zst b.txt type=5
            lie t.tar.zst l5.tar.zst b.txt type=6
            lie t.tar.zst l6.tar.zst b.txt type=2 link=z.txt
            lie t.tar.zst l7.tar.zst link link=z.txt
            mkdir mnt
            check() {
                lie=$1; shift
                \(TestShell.asForeground)$WEIR mount -f $lie.tar.zst mnt 2> log-$lie & pid=$!
                # A failed step ends the script: the mount with it, not left holding the test's output.
                trap "kill -TERM $pid 2> /dev/null" EXIT
                ready mnt
                if "$@" > out 2> err; then echo "$lie: $* gave: $(head -c 100 out)"; exit 1; fi
                grep -q 'Input/output error' err || { echo "$lie: $*: $(cat err)"; exit 1; }
                # What the lie does not touch reads as it is (a hard link's lie fails its target's name too;
                # a record cut short, l2, leaves a gap before the next member: c.txt is refused with it).
                if [ $lie = l2 ]; then ! cat mnt/c.txt 2> /dev/null; else cmp mnt/c.txt src/c.txt; fi
                kill -TERM $pid; wait $pid; trap - EXIT
                grep -q "$lie.tar.zst: .*member index disagrees with the archive" log-$lie \\
                    || { echo "$lie: $(cat log-$lie)"; exit 1; }
            }
            check l1 cat mnt/b.txt
            check l2 cat mnt/b.txt
            check l3 cat mnt/hard
            check l4 stat mnt/b.txt
            check l5 stat mnt/b.txt
            check l6 readlink -v mnt/b.txt
            check l7 readlink -v mnt/link
            # The honest archive: every name as tar x leaves it.
            mkdir x; tar -xf t.tar -C x
            $WEIR mount t.tar.zst mnt; ready mnt
            diff -r --no-dereference x mnt
            test "$(readlink mnt/link)" = a.txt; test "$(stat -c %h mnt/hard)" = 2
            fusermount3 -u mnt
            echo done
            """)
        expectDone(result)
    }

    /// The scripts' `table FILE OUT FRAMES` writes a seek table (no
    /// checksums) after the concatenated frames FRAMES… into OUT, with
    /// `SHIFT` (an environment variable: `index:compressed:decompressed`,
    /// comma-separated) added to entries' sizes.
    static let tableFunction = #"""
        table() {
            python3 - "$@" <<'PY'
        import os, struct, subprocess, sys
        out, frames = sys.argv[1], sys.argv[2:]
        shifts = [[int(v) for v in one.split(":")] for one in os.environ.get("SHIFT", "").split(",") if one]
        body, entries = b"", []
        for name in frames:
            data = open(name, "rb").read()
            size = len(subprocess.run(["zstd", "-dc", name], capture_output=True, check=True).stdout)
            entries.append([len(data), size])
            body += data
        for index, compressed, decompressed in shifts:
            entries[index][0] += compressed
            entries[index][1] += decompressed
        table = b"".join(struct.pack("<II", c, d) for c, d in entries)
        table += struct.pack("<IBI", len(entries), 0, 0x8F92EAB1)
        open(out, "wb").write(body + struct.pack("<II", 0x184D2A5E, len(table)) + table)
        PY
        }
        """#

    @Test("""
          a plain .zst whose seek table lists a frame as 4,096 bytes longer: frames that declare no size are \
          decoded before any byte after them is served (EIO), a table the headers refute is ignored (a note)
          """)
    func lyingSeekTable() throws {
        let scratch = Scratch()
        let result = try run(scratch, Self.tableFunction + """

            # Four frames of 64 KiB: from a pipe, zstd writes no content size in them.
            seq 1 60000 | head -c 262144 > data
            for i in 0 1 2 3; do
                dd if=data bs=65536 skip=$i count=1 status=none | zstd -q -c > f$i.zst
            done
            table honest.zst f0.zst f1.zst f2.zst f3.zst
            SHIFT=1:0:4096 table nosize.zst f0.zst f1.zst f2.zst f3.zst
            SHIFT=0:0:4096 table first.zst f0.zst f1.zst f2.zst f3.zst
            # With their content sizes (weir's frames): a header the entry contradicts.
            for i in 0 1 2 3; do dd if=data bs=65536 skip=$i count=1 status=none > c$i; zstd -q c$i -o s$i.zst; done
            SHIFT=1:0:4096 table sized.zst s0.zst s1.zst s2.zst s3.zst
            # A compressed size that ends inside the next frame (the next one's the less: the same total).
            SHIFT=0:4096:0,1:-4096:0 table ends.zst s0.zst s1.zst s2.zst s3.zst
            mkdir mnt
            $WEIR mount honest.zst mnt; ready mnt
            cmp mnt/honest data; fusermount3 -u mnt
            \(TestShell.asForeground)$WEIR mount -f nosize.zst mnt 2> log & pid=$!
            trap "kill -TERM $pid 2> /dev/null" EXIT
            ready mnt
            # Frame 0 reads as it is; frame 1's reads fail (its content falls short of its entry), and every
            # read after it: frame 1 is decoded, and fails, before a byte of frames 2 and 3 is served.
            python3 - <<'PY'
            import os
            want = open("data", "rb").read()
            fd = os.open("mnt/nosize", os.O_RDONLY)
            for offset in (200000, 140000, 262000, 70000, 100, 60000):
                try:
                    got = os.pread(fd, 4096, offset)
                except OSError as error:
                    assert error.errno == 5 and offset >= 65536, (offset, error)
                    continue
                assert offset + len(got) <= 65536 and got == want[offset:offset + len(got)], offset
            PY
            kill -TERM $pid; wait $pid; trap - EXIT
            grep -q 'nosize.zst: /nosize: .*frame 1' log || { cat log; exit 1; }
            # The first frame's entry lies: the mount reads it to tell a tar, and refuses the file.
            if $WEIR mount first.zst mnt 2> err; then echo "mounted first.zst"; exit 1; fi
            grep -q 'first.zst: .*frame 0' err || { cat err; exit 1; }
            for lie in sized ends; do
                $WEIR mount $lie.zst mnt 2> note-$lie; ready mnt
                cmp mnt/$lie data
                fusermount3 -u mnt
                grep -q "seek table does not match the frames" note-$lie || { cat note-$lie; exit 1; }
            done
            # A frame whose raw block holds two whole frames, and a table whose entry ends after the frame's
            # header, listing those two as frames of their own: each header and size agrees with its entry,
            # only the frame's end (its block headers walked) does not. zstd -d gives the frame's raw bytes.
            python3 - <<'PY'
            import random, struct, subprocess
            zstd = lambda data: subprocess.run(["zstd", "-q", "-c"], input=data, capture_output=True).stdout
            rng = random.Random(1)
            inner = bytes(rng.randrange(256) for _ in range(3000))
            first, second = zstd(inner), zstd(b"G" * 500)
            raw = first + second
            frame = struct.pack("<IBH", 0xFD2FB528, 0x60, len(raw) - 256) + struct.pack("<I", len(raw) << 3 | 1)[:3]
            frame += raw
            head = b"".join(b"first frame, line %d\\n" % i for i in range(2000))
            tail = b"".join(b"last frame, line %d\\n" % i for i in range(3000))
            frames = [zstd(head), frame, zstd(tail)]
            entries = [(len(frames[0]), len(head)), (10, len(raw)), (len(first), len(inner)), (len(second), 500),
                       (len(frames[2]), len(tail))]
            table = b"".join(struct.pack("<II", *entry) for entry in entries)
            table += struct.pack("<IBI", len(entries), 0, 0x8F92EAB1)
            body = b"".join(frames)
            open("inside.zst", "wb").write(body + struct.pack("<II", 0x184D2A5E, len(table)) + table)
            open("inside", "wb").write(head + raw + tail)
            PY
            zstd -dc inside.zst | cmp - inside
            $WEIR mount inside.zst mnt 2> note; ready mnt
            cmp mnt/inside inside
            fusermount3 -u mnt
            grep -q "seek table does not match the frames" note || { cat note; exit 1; }
            echo done
            """)
        expectDone(result)
    }
}
