import Foundation
import Testing

/// `weir mount` on the kernel's FUSE (docs/mount.md): archives made by GNU
/// tar, mounted by the built binary, compared with `tar x`'s own
/// extraction, with `pread`s at random offsets, with readers at once; the
/// damaged, replaced and refused cases. Every mount point is unmounted
/// after its test, passed or failed.
@Suite("weir mount", .serialized)
struct MountCommandTests {
    /// Runs `script` (bash, `set -e`) in `scratch`; afterwards, whatever
    /// happened, unmounts every `mnt*` folder there (lazily: a reader left
    /// running does not keep it).
    func run(_ scratch: Scratch, _ script: String) throws -> WeirProcess.Result {
        defer {
            _ = try? WeirProcess.shell(
                "for m in mnt*; do mountpoint -q \"$m\" && fusermount3 -u -z \"$m\"; done; true", in: scratch.url)
        }
        return try WeirProcess.shell("set -e\n" + Self.helpers + "\n" + script, in: scratch.url, timeout: 180)
    }

    /// A script that ran to its end: status 0 and `done` last; what it said otherwise.
    func expectDone(_ result: WeirProcess.Result, sourceLocation: SourceLocation = #_sourceLocation) {
        let stdout = String(decoding: result.stdout, as: UTF8.self)
        #expect(result.status == 0 && stdout.hasSuffix("done\n"), "\(result.stderr) \(stdout)",
                sourceLocation: sourceLocation)
    }

    /// The scripts' helpers: `ready MNT` waits for a mount (10 s at most);
    /// `listing DIR` prints each entry's type, mode, owner, time, link
    /// target, and a file's size and link count; `fixture` makes the
    /// source tree `src` and a second version of one file in `src2`.
    static let helpers = #"""
        ready() {
            for i in $(seq 100); do mountpoint -q "$1" && return 0; sleep 0.1; done
            echo "not mounted: $1"; return 1
        }
        listing() { (cd "$1" && find . -mindepth 1 -printf '%p %y %m %U %G %Ts %l\n' | grep -v '^./implied ' \
            | grep -v '^./implied/deep ' | sort && find . -type f -printf '%p %s %n\n' | sort); }
        fixture() {
            long=$(printf 'l%.0s' $(seq 99))
            mkdir -p src/dir/sub "src/$long/$long" src/implied/deep src2/dir
            seq 1 150000 > src/dir/numbers.txt
            head -c 700000 /dev/urandom > src/dir/sub/random.bin
            printf 'short\n' > "src/$long/$long/file with spaces"
            : > src/dir/empty
            ln src/dir/numbers.txt src/dir/hard
            ln -s ../dir/numbers.txt src/dir/sub/link
            ln -s nowhere src/dir/dangling
            mkfifo src/dir/fifo
            printf 'deep\n' > src/implied/deep/file
            chmod 0640 src/dir/numbers.txt; chmod 0750 src/dir/sub; chown 123:456 src/dir/empty
            touch -d '2001-02-03 04:05:06' src/dir/sub/random.bin
            seq 5 9 > src2/dir/numbers.txt; touch -d '2010-01-01' src2/dir/numbers.txt
        }
        """#

    @Test("GNU tar's ustar, pax and gnu archives: diff -r and stat as tar x leaves them, names stored twice")
    func formats() throws {
        let scratch = Scratch()
        let result = try run(scratch, """
            fixture
            for format in ustar pax gnu; do
                name=t-$format.tar
                # ustar cannot store a name of 255 bytes: the deepest folder is for the others.
                skip=; [ $format = ustar ] && skip="--exclude=$long/$long"
                tar --format=$format -cf $name $skip -C src dir "$long" implied/deep/file
                tar --format=$format -rf $name -C src2 dir/numbers.txt
                $WEIR -q -B 64K $name
                mkdir x-$format mnt-$format
                tar -xf $name -C x-$format
                $WEIR mount $name.zst mnt-$format
                ready mnt-$format
                diff -r --no-dereference --exclude=fifo x-$format mnt-$format
                listing x-$format > want-$format; listing mnt-$format > got-$format
                diff want-$format got-$format
                test "$(stat -c %i mnt-$format/dir/hard)" != "$(stat -c %i mnt-$format/dir/numbers.txt)"
                test "$(cat mnt-$format/dir/numbers.txt)" = "$(seq 5 9)"
                test -d mnt-$format/implied/deep && test -p mnt-$format/dir/fifo
                test "$(readlink mnt-$format/dir/sub/link)" = ../dir/numbers.txt
                fusermount3 -u mnt-$format
                ! mountpoint -q mnt-$format
            done
            echo done
            """)
        expectDone(result)
    }

    @Test("hard links are one inode with its link count; random preads and parallel readers get the original bytes")
    func reads() throws {
        let scratch = Scratch()
        let result = try run(scratch, """
            fixture
            head -c 3000000 /dev/urandom | base64 > src/dir/big.txt
            tar -cf t.tar -C src dir
            $WEIR -q -B 64K -M 8M t.tar
            mkdir mnt
            $WEIR mount -M 1M -T 4 t.tar.zst mnt
            ready mnt
            test "$(stat -c '%i %h' mnt/dir/hard)" = "$(stat -c '%i %h' mnt/dir/numbers.txt)"
            test "$(stat -c %h mnt/dir/hard)" = 2
            python3 - <<'PY'
            import os, random, threading
            random.seed(4)
            names = ["dir/big.txt", "dir/numbers.txt", "dir/sub/random.bin"]
            def check(name, count):
                want = open("src/" + name, "rb").read()
                fd = os.open("mnt/" + name, os.O_RDONLY)
                rng = random.Random(name)
                for _ in range(count):
                    start = rng.randrange(len(want)); length = rng.randrange(1, 300000)
                    assert os.pread(fd, length, start) == want[start:start + length], (name, start, length)
                os.close(fd)
            for name in names: check(name, 150)
            errors = []
            def worker(name):
                try: check(name, 60)
                except Exception as e: errors.append(e)
            threads = [threading.Thread(target=worker, args=(n,)) for n in names * 2]
            for t in threads: t.start()
            for t in threads: t.join()
            assert not errors, errors
            PY
            for f in big.txt numbers.txt sub/random.bin; do cmp mnt/dir/$f src/dir/$f & done; wait
            echo done
            """)
        expectDone(result)
    }

    @Test("sparse files (GNU tar --sparse: gnu, pax 0.0, 0.1, 1.0): tar x's bytes and size, holes as zeros")
    func sparse() throws {
        let scratch = Scratch()
        let result = try run(scratch, """
            mkdir src
            # 30 runs of data between holes (more than an old GNU header holds), ending in a hole; one
            # ending in data; one all hole; a plain file after them.
            python3 -c "
            import os
            f = open('src/runs.bin', 'wb')
            for i in range(30): f.seek(i * 200000 + i * 777 % 5000); f.write(os.urandom(3000 + i * 100))
            f.truncate(30 * 200000 + 123457); f.close()
            f = open('src/tail.bin', 'wb'); f.seek(3000000); f.write(os.urandom(70000)); f.close()"
            truncate -s 5000000 src/hole.bin
            seq 1 20000 > src/plain.txt
            for v in gnu 0.0 0.1 1.0; do
                if [ $v = gnu ]; then flags=--format=gnu; else flags="--format=pax --sparse-version=$v"; fi
                tar $flags --sparse -cf t-$v.tar -C src runs.bin tail.bin hole.bin plain.txt
                $WEIR -q -B 64K t-$v.tar
                mkdir x-$v mnt-$v
                tar -xf t-$v.tar -C x-$v
                $WEIR mount t-$v.tar.zst mnt-$v; ready mnt-$v
                for f in runs.bin tail.bin hole.bin plain.txt; do
                    cmp x-$v/$f mnt-$v/$f
                    test "$(stat -c %s mnt-$v/$f)" = "$(stat -c %s src/$f)"
                done
                # The blocks stat shows are the data's, not the holes'.
                [ "$(stat -c %b mnt-$v/hole.bin)" -lt 100 ]
                python3 - mnt-$v <<'PY'
            import os, random, sys
            rng = random.Random(3)
            for name in ["runs.bin", "tail.bin"]:
                want = open("src/" + name, "rb").read()
                fd = os.open(sys.argv[1] + "/" + name, os.O_RDONLY)
                for _ in range(200):
                    start = rng.randrange(len(want)); length = rng.randrange(1, 400000)
                    assert os.pread(fd, length, start) == want[start:start + length], (name, start, length)
                os.close(fd)
            PY
                fusermount3 -u mnt-$v
            done
            # Without an index (indexed in memory by one decode), the same.
            zstd -q t-1.0.tar -o plain.tar.zst
            mkdir mnt
            $WEIR mount -q plain.tar.zst mnt; ready mnt
            diff -r x-1.0 mnt
            echo done
            """)
        expectDone(result)
    }

    @Test("a plain .zst is one file named as weir -d names it; a tar without an index is indexed in memory")
    func otherArchives() throws {
        let scratch = Scratch()
        let result = try run(scratch, """
            fixture
            head -c 2000000 /dev/urandom | base64 > data.txt
            $WEIR -q -B 64K data.txt -o data.txt.zst
            zstd -q data.txt -o one.zst
            tar -cf t.tar -C src dir
            zstd -q t.tar -o plain.tar.zst
            pzstd -q -p 2 t.tar -o p.tar.zst
            $WEIR -q --index p.tar.zst
            mkdir x mnt1 mnt2 mnt3 mnt4
            tar -xf t.tar -C x
            $WEIR mount data.txt.zst mnt1; ready mnt1
            test "$(ls mnt1)" = data.txt; cmp data.txt mnt1/data.txt
            $WEIR mount one.zst mnt2; ready mnt2
            test "$(ls mnt2)" = one; cmp data.txt mnt2/one
            $WEIR mount plain.tar.zst mnt3 2> note; ready mnt3
            grep -q 'weir --index' note
            diff -r --no-dereference --exclude=fifo x mnt3
            $WEIR mount p.tar.zst mnt4; ready mnt4
            diff -r --no-dereference --exclude=fifo x mnt4
            echo done
            """)
        expectDone(result)
    }

    @Test("a tar without an index: on a terminal, the decode's progress line, cleared, then the weir --index note")
    func indexingProgress() throws {
        let scratch = Scratch()
        let made = try run(scratch, """
            mkdir src; head -c 6000000 /dev/urandom | base64 > src/a.txt; seq 1 300000 > src/b.txt
            tar -cf t.tar -C src a.txt b.txt
            zstd -q t.tar -o plain.tar.zst
            mkdir mnt
            echo done
            """)
        expectDone(made)
        defer { _ = try? WeirProcess.shell("mountpoint -q mnt && fusermount3 -u -z mnt; true", in: scratch.url) }
        let session = try TerminalSession("""
            \(Self.helpers)
            $WEIR mount plain.tar.zst mnt; ready mnt; cmp mnt/b.txt src/b.txt; fusermount3 -u mnt
            echo '== redirected'
            $WEIR mount plain.tar.zst mnt 2> err; ready mnt; fusermount3 -u mnt
            echo '== quiet'
            $WEIR mount -q plain.tar.zst mnt; ready mnt; fusermount3 -u mnt
            echo '== end'
            """, in: scratch)
        let screen = session.finish()
        let parts = screen.components(separatedBy: "== redirected")
        try #require(parts.count == 2 && screen.contains("== end"), "\(screen.debugDescription)")
        // The line, drawn in place, the content's bytes made: cleared before the note.
        let terminal = parts[0]
        let line = try #require(terminal.range(of: "\rplain.tar.zst "), "\(terminal.debugDescription)")
        let clear = try #require(terminal.range(of: "\r" + ProgressCommandTests.eraseLine, options: .backwards))
        let note = try #require(terminal.range(of: "weir --index adds one"), "\(terminal.debugDescription)")
        #expect(line.upperBound <= clear.lowerBound && clear.upperBound <= note.lowerBound)
        #expect(terminal.contains("MiB"), "\(terminal.debugDescription)")
        // Not on a file, nor with -q; the note still goes to the file.
        let rest = parts[1]
        #expect(!rest.contains("\r" + ProgressCommandTests.eraseLine) && !rest.contains("weir --index"),
                "\(rest.debugDescription)")
        let err = try String(contentsOfFile: scratch.path("err"), encoding: .utf8)
        #expect(!err.contains("\r") && err.contains("weir --index adds one"), "\(err.debugDescription)")
    }

    @Test("not zstd: an error and nothing mounted; writes fail with EROFS; SIGTERM unmounts a foreground mount")
    func refusals() throws {
        let scratch = Scratch()
        let result = try run(scratch, """
            fixture
            tar -cf t.tar -C src dir
            $WEIR -q t.tar
            mkdir mnt
            if $WEIR mount t.tar mnt 2> err; then echo "mounted a tar"; exit 1; fi
            grep -q 't.tar' err; ! mountpoint -q mnt
            if $WEIR mount missing.zst mnt 2> err; then exit 1; fi
            grep -q 'missing.zst' err
            \(TestShell.asForeground)$WEIR mount -f t.tar.zst mnt 2> log & pid=$!
            ready mnt
            for action in 'touch mnt/new' 'mkdir mnt/d' 'rm mnt/dir/empty' 'echo x >> mnt/dir/numbers.txt' \
                    'mv mnt/dir/empty mnt/dir/e2' 'chmod 600 mnt/dir/empty' 'ln -s a mnt/l'; do
                if bash -c "$action" 2> err; then echo "allowed: $action"; exit 1; fi
                grep -q 'Read-only file system' err || { echo "$action: $(cat err)"; exit 1; }
            done
            kill -TERM $pid; wait $pid
            ! mountpoint -q mnt
            echo done
            """)
        expectDone(result)
    }

    @Test("FUSE's -o options are passed on (allow_other, fsname); one FUSE does not know: an error, nothing mounted")
    func mountOptions() throws {
        let scratch = Scratch()
        let result = try run(scratch, """
            fixture
            tar -cf t.tar -C src dir
            $WEIR -q t.tar
            mkdir mnt
            $WEIR mount -o allow_other,fsname=named t.tar.zst mnt; ready mnt
            grep " $PWD/mnt " /proc/mounts > line
            grep -q '^named ' line && grep -q 'allow_other' line && grep -q ' fuse.weir ro,' line
            test "$(stat -c '%i %h' mnt/dir/hard)" = "$(stat -c '%i %h' mnt/dir/numbers.txt)"
            fusermount3 -u mnt
            if $WEIR mount -o no_such_option t.tar.zst mnt 2> err; then echo "mounted"; exit 1; fi
            grep -q no_such_option err; ! mountpoint -q mnt
            echo done
            """)
        expectDone(result)
    }

    @Test("a damaged frame: EIO for its file, a message naming archive, file and frame; others read; -v's frames")
    func damaged() throws {
        let scratch = Scratch()
        let result = try run(scratch, """
            mkdir src
            seq 1 200000 > src/a.txt; seq 300000 500000 > src/b.txt
            tar -cf t.tar -C src a.txt b.txt
            $WEIR -q -B 64K t.tar
            size=$(stat -c %s t.tar.zst)
            python3 -c "
            import sys
            f = open('t.tar.zst', 'r+b'); f.seek($size // 4); b = f.read(1); f.seek($size // 4)
            f.write(bytes([b[0] ^ 0x5a])); f.close()"
            mkdir mnt
            \(TestShell.asForeground)$WEIR mount -f -v t.tar.zst mnt 2> log & pid=$!
            ready mnt
            if cat mnt/a.txt > /dev/null 2> err; then echo "read a damaged file"; exit 1; fi
            grep -q 'Input/output error' err
            cmp mnt/b.txt src/b.txt
            grep 't.tar.zst' log | grep '/a.txt' | grep -q 'frame'
            kill -INT $pid; wait $pid
            # -v: the frames decoded and the names looked up, once unmounted.
            grep -q '^weir: t.tar.zst: unmounted; [1-9][0-9]* frames decoded, [0-9]* names looked up$' log
            echo done
            """)
        expectDone(result)
    }

    @Test("the archive replaced while mounted: reads fail with EIO and a message, never bytes of the other")
    func replaced() throws {
        let scratch = Scratch()
        let result = try run(scratch, """
            mkdir src; seq 1 100000 > src/a.txt; seq 1 100000 > src/b.txt
            tar -cf t.tar -C src a.txt b.txt
            $WEIR -q -B 64K t.tar
            mkdir mnt
            \(TestShell.asForeground)$WEIR mount -f t.tar.zst mnt 2> log & pid=$!
            ready mnt
            cmp mnt/a.txt src/a.txt
            cp t.tar.zst other.zst; mv other.zst t.tar.zst
            if cat mnt/b.txt > /dev/null 2> err; then echo "read a replaced archive"; exit 1; fi
            grep -q 'Input/output error' err
            grep -q 'changed since it was mounted' log
            kill -TERM $pid; wait $pid
            echo done
            """)
        expectDone(result)
    }
}
