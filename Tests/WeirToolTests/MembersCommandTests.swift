import Foundation
import Glibc
import Testing

/// `weir -l --members` and `weir -d --member=PATTERN` on `.tar.zst` files
/// weir wrote from archives GNU tar made (ustar, pax, gnu): the listing
/// against `tar tf`/`tar tvf` byte for byte, and the members written as a
/// tar stream that `tar x` extracts, against tar's own extraction (`diff -r`).
@Suite("weir --members, --member")
struct MembersCommandTests {
    /// The shell's setting for every comparison: tar's dates in a fixed
    /// zone off UTC, its names quoted as in the C locale.
    static let setting = "export TZ=IST-5:30 LC_ALL=C; "

    /// A tree with files, a folder, names over 100 and 255 bytes (not in
    /// ustar's, which cannot hold them), a hard link, a symbolic link, a
    /// sparse file (`tar -S`, but for ustar), a name with a tab and a backslash; archived
    /// as `FORMAT.tar` by GNU tar, then compressed by weir in 64 KiB frames
    /// from the file (`FORMAT.tar.zst`) and from a pipe (`FORMAT.piped.zst`).
    static func archives(_ scratch: Scratch, formats: [String] = ["ustar", "pax", "gnu"]) throws {
        let long = String(repeating: "l", count: 90)
        let made = try WeirProcess.shell(setting + """
            set -e
            mkdir -p tree/dir/sub tree/empty
            head -c 300000 /dev/urandom > tree/dir/big.bin
            for i in 1 2 3; do echo "file $i" > tree/dir/f$i.txt; done
            echo deep > tree/dir/sub/deep.txt
            ln tree/dir/f1.txt tree/dir/hard.txt
            ln -s f2.txt tree/dir/sym
            printf 'tab\\there' > $'tree/dir/odd\\tname\\\\x'
            truncate -s 2000000 tree/sparse.img
            printf data | dd of=tree/sparse.img bs=1 seek=1000000 conv=notrunc 2>/dev/null
            mkdir -p tree/\(long)/\(long)
            echo over100 > tree/\(long)/\(long)/n.txt
            cp -a tree tree-ustar
            mkdir -p tree/\(long)/\(long)/\(long)
            echo over255 > tree/\(long)/\(long)/\(long)/m.txt
            find tree tree-ustar -exec touch -h -d '2021-03-04 05:06:07' {} +
            for format in \(formats.joined(separator: " ")); do
                # ustar holds neither long names past 255 bytes nor sparse files.
                source=tree sparse=-S; [ $format = ustar ] && source=tree-ustar sparse=
                tar --format=$format $sparse -cf $format.tar $source
                $WEIR -q -B 64K $format.tar -o $format.tar.zst
                tar --format=$format $sparse -cf - $source | $WEIR -q -B 64K > $format.piped.zst
            done
            """, in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
    }

    @Test("-l --members prints tar tf's names and, with -v, tar tvf's lines, byte for byte, for every format")
    func listsAsTar() throws {
        let scratch = Scratch()
        try Self.archives(scratch)
        for format in ["ustar", "pax", "gnu"] {
            for archive in ["\(format).tar.zst", "\(format).piped.zst"] {
                for verbose in ["", "v"] {
                    let compared = try WeirProcess.shell(Self.setting + """
                        tar t\(verbose)f \(format).tar > tar.out &&
                        $WEIR -l\(verbose) --members \(archive) > weir.out &&
                        cmp tar.out weir.out && wc -l < weir.out
                        """, in: scratch.url)
                    #expect(compared.status == 0, "\(archive) -\(verbose): \(compared.stderr)")
                    #expect((Int(String(decoding: compared.stdout, as: UTF8.self)
                        .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 10, "\(archive)")
                }
            }
        }
    }

    @Test("""
          -lv --members on many members: times every 37 s across summer time's start and end in several zones, \
          years before 1000 and after 9999, owners by name and by number, widening sizes; tar tvf's bytes
          """)
    func listsManyAsTar() throws {
        let scratch = Scratch()
        // Europe's changes of 2021 (03-28 01:00 and 10-31 01:00 UTC) and America's (03-14 07:00, 11-07 06:00).
        let made = try WeirProcess.shell("""
            set -e
            mkdir many
            i=0
            for centre in 1616893200 1635642000 1615705200 1636264800; do
                for step in $(seq -150 150); do
                    name=many/f$i
                    head -c $(( (i * 7919) % 100000 )) /dev/zero > $name
                    touch -d @$(( centre + step * 37 )) $name
                    if [ $(( i % 5 )) = 0 ]; then chown 4321:8765 $name; fi
                    i=$(( i + 1 ))
                done
            done
            tar -cf many.tar many
            echo old > old.txt
            tar --mtime=@-40000000000 -cf old.tar old.txt
            tar --mtime=@316000000000 -cf new.tar old.txt
            tar -Af many.tar old.tar
            tar -Af many.tar new.tar
            $WEIR -q -B 64K many.tar -o many.tar.zst
            """, in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
        let zones = ["Europe/Berlin", "America/New_York", "EST5EDT,M3.2.0,M11.1.0", "Australia/Lord_Howe", "UTC0"]
        for zone in zones {
            let compared = try WeirProcess.shell("""
                export TZ='\(zone)' LC_ALL=C
                tar tvf many.tar > tar.out && $WEIR -lv --members many.tar.zst > weir.out &&
                cmp tar.out weir.out && wc -l < weir.out
                """, in: scratch.url)
            #expect(compared.status == 0, "\(zone): \(compared.stderr) \(compared.stdout)")
            #expect(String(decoding: compared.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                        == "1207", "\(zone)")
        }
    }

    /// Extracts `patterns` with weir (`weir -d --member=… | tar x`) and with
    /// tar (`tar x --wildcards …`) from `format`'s archive; `diff -r` of the
    /// two, and their names, types, modes, times, sizes, links and blocks.
    func compareExtraction(_ scratch: Scratch, format: String, archive: String, patterns: [String],
                           tarNames: [String]? = nil, output: String = "pipe", input: String = "file") throws {
        let members = patterns.map { "--member='\($0)'" }.joined(separator: " ")
            + (input == "file" ? " \(archive)" : "")
        let feed = input == "file" ? "" : "cat \(archive) | "
        let names = (tarNames ?? patterns).map { "'\($0)'" }.joined(separator: " ")
        // Folders tar made on the way to a member get the time of the extraction: their modes alone.
        let list = "-type d -printf '%P d %m\\n' -o -printf '%P %y %m %T@ %s %n %b %l\\n' | sort"
        let write = output == "pipe" ? "\(feed)$WEIR -d \(members) | tar -x -C w"
            : "\(feed)$WEIR -d \(members) -o out.tar && tar -x -C w -f out.tar"
        let run = try WeirProcess.shell(Self.setting + """
            rm -rf w t out.tar && mkdir w t && set -o pipefail &&
            \(write) && tar -x -C t --wildcards -f \(format).tar \(names) && diff -r --no-dereference w t &&
            (cd w && find . \(list)) > w.list && (cd t && find . \(list)) > t.list && cmp w.list t.list
            """, in: scratch.url)
        #expect(run.status == 0, "\(archive) \(patterns) from a \(input) to a \(output): \(run.stderr)")
    }

    @Test("""
          -d --member: a file, a folder, wildcards, long names, a hard link, \
          a sparse file; tar x of weir's stream is tar's own extraction
          """)
    func extractsAsTar() throws {
        let scratch = Scratch()
        try Self.archives(scratch)
        let long = String(repeating: "l", count: 90)
        for format in ["ustar", "pax", "gnu"] {
            let root = format == "ustar" ? "tree-ustar" : "tree"
            var cases: [[String]] = [
                ["\(root)/dir/big.bin"], ["\(root)/dir"], ["\(root)/dir/"], ["*.txt"], ["\(root)/*/f?.txt"],
                ["\(root)/sparse.img"], ["\(root)/\(long)/\(long)/n.txt"],
                ["\(root)/dir/sym", "\(root)/dir/sub"], ["\(root)/dir/odd*"],
            ]
            if format != "ustar" { cases.append(["\(root)/\(long)/\(long)/\(long)/m.txt"]) }
            for patterns in cases {
                try compareExtraction(scratch, format: format, archive: "\(format).tar.zst", patterns: patterns)
                // From a pipe: no index, the members picked as the stream passes.
                try compareExtraction(scratch, format: format, archive: "\(format).tar.zst", patterns: patterns,
                                      input: "pipe")
            }
            // A hard link brings the member it links to, as tar x needs it (tar x of the link alone fails).
            try compareExtraction(scratch, format: format, archive: "\(format).tar.zst",
                                  patterns: ["\(root)/dir/hard.txt"],
                                  tarNames: ["\(root)/dir/f1.txt", "\(root)/dir/hard.txt"])
            try compareExtraction(scratch, format: format, archive: "\(format).piped.zst", patterns: ["\(root)/dir"],
                                  output: "file")
        }
        // The sparse member stays sparse: its blocks are tar's, not 2 MB of zeros.
        let sparse = try WeirProcess.shell(Self.setting + """
            rm -rf w && mkdir w && $WEIR -d --member=tree/sparse.img gnu.tar.zst | tar -x -C w &&
            test $(stat -c %b w/tree/sparse.img) -lt 100 && cmp w/tree/sparse.img tree/sparse.img
            """, in: scratch.url)
        #expect(sparse.status == 0, "\(sparse.stderr)")
    }

    @Test("-d --member writes exactly the members' bytes as they stand in the tar, then two zero blocks")
    func streamIsTheMembersBytes() throws {
        let scratch = Scratch()
        try Self.archives(scratch, formats: ["pax"])
        // The whole tree: every member, so the stream is the tar itself up to its end blocks.
        let run = try WeirProcess.shell("""
            $WEIR -d --member=tree pax.tar.zst > all.tar && size=$(stat -c %s all.tar) &&
            cmp -n $((size - 1024)) all.tar pax.tar && tail -c 1024 all.tar | cmp - <(head -c 1024 /dev/zero)
            """, in: scratch.url)
        #expect(run.status == 0, "\(run.stderr)")
    }

    @Test("-l --members to a full disk, past the listing's first written piece: exit 1, one message, ENOSPC")
    func listingToFullDisk() throws {
        let scratch = Scratch()
        // 3,000 names of ~110 bytes: a listing of ~330 KB, written in more than one piece.
        let made = try WeirProcess.shell("""
            set -e; mkdir -p t/\(String(repeating: "d", count: 100))
            cd t/d*; for i in $(seq 1000 3999); do : > f$i; done; cd ../..
            tar -cf a.tar t && $WEIR -q a.tar -o a.tar.zst
            """, in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
        // The machine's /dev/full, as a node of this folder (char 1,7).
        #expect(mknod(scratch.path("full"), S_IFCHR | 0o600, dev_t((1 << 8) | 7)) == 0, "mknod needs root")
        let run = try WeirProcess.run(["-l", "--members", "a.tar.zst"], in: scratch.url,
                                      stdoutPath: scratch.path("full"))
        #expect(run.status == 1)
        #expect(run.stderr == "weir: (stdout): write failed: No space left on device\n", "\(run.stderr)")
    }

    @Test("a name not in the archive: exit 1, tar's words with the name, the other members still written")
    func notFound() throws {
        let scratch = Scratch()
        try Self.archives(scratch, formats: ["gnu"])
        let run = try WeirProcess.shell("""
            set -o pipefail; mkdir w && $WEIR -d --member=tree/dir/f1.txt --member=tree/nope gnu.tar.zst | tar -x -C w
            """, in: scratch.url)
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr == "weir: gnu.tar.zst: tree/nope: Not found in archive\n", "\(run.stderr)")
        #expect(scratch.data("w/tree/dir/f1.txt") == Data("file 1\n".utf8))
        #expect(!scratch.exists("w/tree/nope"))
    }

    @Test("""
          refused: no member index (with how to add one), content that is not \
          a tar (file or pipe), a tar cut short, -z or -t with --member
          """)
    func refuses() throws {
        let scratch = Scratch()
        try Self.archives(scratch, formats: ["gnu"])
        scratch.text("notes", size: 100_000)
        #expect(try WeirProcess.run(["-q", "notes"], in: scratch.url).status == 0)
        #expect(try scratch.zstd(["-q", "gnu.tar", "-o", "plain.tar.zst"]).status == 0)
        let plain = try WeirProcess.run(["-d", "--member=tree/dir", "plain.tar.zst"], in: scratch.url)
        #expect(plain.status == 1 && plain.stdout.isEmpty, "\(plain.stdout.count)")
        #expect(plain.stderr.contains("weir: plain.tar.zst: has no member index")
                    && plain.stderr.contains("weir -d -c FILE | weir > new.tar.zst"), "\(plain.stderr)")
        // Several frames without an index: weir --index adds one.
        #expect(try WeirProcess.run(["-q", "-B", "64K", "--no-member-index", "gnu.tar", "-o", "p.tar.zst"],
                                    in: scratch.url).status == 0)
        let several = try WeirProcess.run(["-d", "--member=tree/dir", "p.tar.zst"], in: scratch.url)
        #expect(several.status == 1 && several.stderr.contains("has no member index")
                    && several.stderr.contains("weir --index FILE adds one"), "\(several.stderr)")
        let listed = try WeirProcess.run(["-l", "--members", "plain.tar.zst"], in: scratch.url)
        #expect(listed.status == 1 && listed.stderr.contains("has no member index"), "\(listed.stderr)")
        for arguments in [["-d", "--member=x", "notes.zst"], ["-l", "--members", "notes.zst"]] {
            let run = try WeirProcess.run(arguments, in: scratch.url)
            #expect(run.status == 1 && run.stdout.isEmpty, "\(arguments)")
            #expect(run.stderr.contains("weir: notes.zst: its content is not a tar archive"), "\(run.stderr)")
        }
        // From a pipe, content that is not a tar; a tar cut inside a member.
        let notTar = try WeirProcess.shell("cat notes.zst | $WEIR -d --member=x", in: scratch.url)
        #expect(notTar.status == 1 && notTar.stdout.isEmpty, "\(notTar.stdout.count)")
        #expect(notTar.stderr.contains("weir: (stdin): its content is not a tar archive"), "\(notTar.stderr)")
        let cut = try WeirProcess.shell("head -c 200000 gnu.tar | zstd -q | $WEIR -d --member=tree", in: scratch.url)
        #expect(cut.status == 1
                    && cut.stderr.contains("(stdin): truncated input: the tar archive ends inside a member"),
                "\(cut.stderr)")
        for flags in [["-z", "--member=x"], ["-t", "--member=x"], ["-d", "--members"],
                      ["-d", "--member=x", "--range=0:1"]] {
            let run = try WeirProcess.run(flags + ["gnu.tar.zst"], in: scratch.url)
            #expect(run.status == 1 && run.stdout.isEmpty && run.stderr.contains("--member"), "\(flags): \(run.stderr)")
        }
    }

    @Test("""
          a damaged member index (a flipped byte, a cut frame) fails \
          with the file and the index's offset, writing nothing
          """)
    func damagedIndex() throws {
        let scratch = Scratch()
        try Self.archives(scratch, formats: ["gnu"])
        // The index's frame: the seek table's last entry, just before the table.
        let located = try WeirProcess.shell("""
            python3 - <<'PY'
            import struct
            data = open("gnu.tar.zst", "rb").read()
            frames, descriptor = struct.unpack("<IB", data[-9:-4])
            size = 12 if descriptor & 0x80 else 8
            table = len(data) - 9 - frames * size - 8
            last = struct.unpack_from("<I", data, table + 8 + (frames - 1) * size)[0]
            start = table - last
            assert struct.unpack_from("<I", data, start)[0] == 0x184D2A5B
            flipped = bytearray(data); flipped[start + 30] ^= 0x40
            open("flipped.tar.zst", "wb").write(flipped)
            print(start)
            PY
            """, in: scratch.url)
        #expect(located.status == 0, "\(located.stderr)")
        let offset = String(decoding: located.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        for arguments in [["-d", "--member=tree/dir"], ["-l", "--members"]] {
            let run = try WeirProcess.run(arguments + ["flipped.tar.zst"], in: scratch.url)
            #expect(run.status == 1 && run.stdout.isEmpty, "\(arguments): \(run.stdout.count)")
            #expect(run.stderr.hasPrefix("weir: flipped.tar.zst: ") && run.stderr.contains("member index")
                        && run.stderr.contains("offset \(offset)"), "\(arguments): \(run.stderr)")
        }
    }
}
