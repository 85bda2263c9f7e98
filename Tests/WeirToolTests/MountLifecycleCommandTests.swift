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
}
