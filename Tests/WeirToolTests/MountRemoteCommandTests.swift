import Foundation
import Testing

/// `weir mount URL MOUNTPOINT` (docs/mount.md, docs/remote.md): an archive
/// on Debian's nginx at 127.0.0.1 (RemoteCommandTests' servers) mounted by
/// the built binary on the kernel's FUSE, compared with `tar x` of the tar
/// it was made from; the object replaced on the server while mounted.
@Suite("weir mount of a URL", .serialized)
struct MountRemoteCommandTests {
    @Test("weir's archive over HTTP and HTTPS: diff -r and random preads as tar x; nothing written beside")
    func mounted() throws {
        let scratch = Scratch()
        let servers = try RemoteCommandTests.archive(scratch)
        let result = try withExtendedLifetime(servers) {
            try MountCommandTests().run(scratch, """
                mkdir x mnt mnt-tls
                tar -xf a.tar -C x
                ls -la root > before
                $WEIR mount '\(servers.url)/a.tar.zst' mnt; ready mnt
                diff -r x mnt
                test "$(stat -c %s mnt/src/f33.txt)" = "$(stat -c %s x/src/f33.txt)"
                python3 - <<'PY'
                import os, random
                rng = random.Random(5)
                for name in ["src/f33.txt", "src/f60.txt", "src/f1.txt"]:
                    want = open("x/" + name, "rb").read()
                    fd = os.open("mnt/" + name, os.O_RDONLY)
                    for _ in range(100):
                        start = rng.randrange(len(want)); length = rng.randrange(1, 50000)
                        assert os.pread(fd, length, start) == want[start:start + length], (name, start, length)
                    os.close(fd)
                PY
                fusermount3 -u mnt
                CURL_CA_BUNDLE=$PWD/cert.pem $WEIR mount '\(servers.tlsURL)/a.tar.zst' mnt-tls; ready mnt-tls
                diff -r x mnt-tls
                fusermount3 -u mnt-tls
                ls -la root | cmp - before
                # A URL that is not there: an error naming it, nothing mounted.
                if $WEIR mount '\(servers.url)/missing.tar.zst' mnt 2> err; then echo "mounted"; exit 1; fi
                grep -q 'missing.tar.zst: the server answered 404' err; ! mountpoint -q mnt
                echo done
                """)
        }
        MountCommandTests().expectDone(result)
    }

    @Test("the object replaced on the server while mounted: EIO and a message, then for every file read")
    func replaced() throws {
        let scratch = Scratch()
        let servers = try RemoteCommandTests.archive(scratch)
        let result = try withExtendedLifetime(servers) {
            try MountCommandTests().run(scratch, """
                mkdir x mnt
                tar -xf a.tar -C x
                \(TestShell.asForeground)$WEIR mount -f -M 1M '\(servers.url)/a.tar.zst' mnt 2> log & pid=$!
                ready mnt
                cmp mnt/src/f1.txt x/src/f1.txt
                # Another archive under the same name (another size and time: another ETag).
                $WEIR -q -B 64K -19 a.tar -o other.tar.zst; mv other.tar.zst root/a.tar.zst
                if cat mnt/src/f33.txt > /dev/null 2> err; then echo "read a replaced object"; exit 1; fi
                grep -q 'Input/output error' err
                # Once seen, the change fails every read (f45: not in the kernel's cache), without a request.
                if cat mnt/src/f45.txt > /dev/null 2> err; then echo "read after the change"; exit 1; fi
                grep -q 'changed since it was mounted' log
                grep -q 'the object changed while it was read' log
                kill -TERM $pid; wait $pid
                echo done
                """)
        }
        MountCommandTests().expectDone(result)
    }
}
