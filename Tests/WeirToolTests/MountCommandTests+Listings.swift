import Testing

/// What a mount's listings give: each name's attributes to a reader of
/// files, nothing kept per name looked up, names in the same order at
/// every mount (MountCommandTests).
extension MountCommandTests {
    @Test("names looked up keep nothing in the mount: ls -lR of 24,000 names leaves its resident memory flat")
    func namesKeepNoMemory() throws {
        let scratch = Scratch()
        // libfuse's high-level API kept about 180 bytes for each name looked up: 4 MiB for these.
        let result = try run(scratch, """
            mkdir src
            for d in $(seq 1 40); do mkdir src/folder-$d; (cd src/folder-$d && touch $(seq -f 'file-%g' 1 600)); done
            tar -cf t.tar -C src .
            $WEIR -q t.tar
            mkdir mnt
            \(TestShell.asForeground)$WEIR mount -f t.tar.zst mnt 2> log & pid=$!
            ready mnt
            # A few requests first, so that the threads serving them are started; and every folder listed
            # once, so that the frames its records' checks decode (docs/mount.md) are in the cache, within -M.
            ls -l mnt/folder-1/file-1 mnt/folder-2 > /dev/null; cat mnt/folder-3/file-3; ls -R mnt > /dev/null
            before=$(awk '/^VmRSS/ {print $2}' /proc/$pid/status)
            test "$(ls -lR mnt | grep -c '^-rw')" = 24000
            after=$(awk '/^VmRSS/ {print $2}' /proc/$pid/status)
            [ $((after - before)) -lt 1024 ] || { echo "resident memory grew from $before kB to $after kB"; exit 1; }
            kill -TERM $pid; wait $pid
            echo done
            """)
        expectDone(result)
    }

    @Test("listings give each name's attributes to a reader of files: tar c looks few names up; stat as tar x")
    func listingsWithAttributes() throws {
        let scratch = Scratch()
        // Without them, the kernel looks up each of the 320 names tar reads: one request more a name. The
        // first folder's files are looked up (nothing read before), the other folders' are listed with them.
        let result = try run(scratch, """
            mkdir src
            for d in $(seq 1 8); do
                mkdir src/folder-$d; for f in $(seq 1 40); do echo $d $f > src/folder-$d/file-$f; done
            done
            chmod 0600 src/folder-2/file-7; touch -d '2001-02-03 04:05:06' src/folder-3/file-9
            tar -cf t.tar -C src .
            $WEIR -q t.tar
            mkdir mnt x
            tar -xf t.tar -C x
            \(TestShell.asForeground)$WEIR mount -f -v t.tar.zst mnt 2> log & pid=$!
            ready mnt
            tar -cf copy.tar -C mnt .
            kill -INT $pid; wait $pid
            looked=$(sed -n 's/^weir: t.tar.zst: unmounted; .* decoded, \\([0-9]*\\) names looked up$/\\1/p' log)
            [ -n "$looked" ] && [ "$looked" -lt 80 ] || { echo "names looked up: $looked"; cat log; exit 1; }
            mkdir y; tar -xf copy.tar -C y
            diff -r x y
            for t in x y; do (cd $t && find . -mindepth 1 -printf '%p %y %m %s %Ts\\n' | sort) > $t.list; done
            diff x.list y.list
            echo done
            """)
        expectDone(result)
    }

    @Test("a folder lists its names sorted by bytes, the same at every mount, whatever the tar's order; big folders")
    func listingOrder() throws {
        let scratch = Scratch()
        let result = try run(scratch, """
            mkdir -p src/big
            for i in $(seq 1 3000); do : > src/big/f$i; done
            for n in b a B a.c ab _ Z; do : > src/$n; done
            # The tar's order: as the names were given, not sorted.
            (cd src && tar -cf ../t.tar b Z big a B _ ab a.c)
            $WEIR -q t.tar
            mkdir mnt
            for round in 1 2; do
                $WEIR mount t.tar.zst mnt
                ls -f mnt | grep -v '^\\.\\.\\?$' > got-$round
                ls -f mnt/big | grep -v '^\\.\\.\\?$' > big-$round
                fusermount3 -u mnt
            done
            cmp got-1 got-2; cmp big-1 big-2
            printf '%s\\n' B Z _ a a.c ab b big > want
            cmp got-1 want || { cat got-1; exit 1; }
            LC_ALL=C sort big-1 | cmp - big-1
            [ $(wc -l < big-1) = 3000 ]
            echo done
            """)
        expectDone(result)
    }
}
