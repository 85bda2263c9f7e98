import Foundation
import Testing

/// What `--member` and `-t` make of a member index that lies with a valid
/// checksum, and `--member`'s patterns as GNU tar's (issue 67). The crafted
/// indexes are re-encoded as weir writes one (version 2, its columns
/// rewritten): their zstd frame's checksum right, the seek table's entry resized.
@Suite("the member index checked against the archive; --member as tar")
struct MemberIndexTrustCommandTests {
    /// Reads an unsigned LEB128 varint of `bytes` at `at`, moving `at` past it.
    static func uvarint(_ bytes: [UInt8], _ at: inout Int) -> Int {
        var value = 0, shift = 0
        while true {
            let byte = bytes[at]
            at += 1
            value |= Int(byte & 0x7F) << shift
            shift += 7
            if byte < 0x80 { return value }
        }
    }

    static func encoded(_ value: Int) -> [UInt8] {
        var value = value, out: [UInt8] = []
        repeat {
            out.append(UInt8(value & 0x7F) | (value > 0x7F ? 0x80 : 0))
            value >>= 7
        } while value > 0
        return out
    }

    /// `name`'s member index with its first member's data length set to
    /// `dataLength` and the second member's gap set to `secondGap`,
    /// re-encoded with a valid checksum, written to `out`.
    static func lie(_ name: String, dataLength: Int, secondGap: (Int) -> Int, out: String,
                    in scratch: Scratch) throws {
        let file = [UInt8](try #require(scratch.data(name)))
        func u32(_ at: Int) -> Int { (0 ..< 4).reduce(0) { $0 | Int(file[at + $1]) << (8 * $1) } }
        try #require(file.count > 17 && u32(file.count - 4) == 0x8F92_EAB1, "\(name) has no seek table")
        let count = u32(file.count - 9), entrySize = file[file.count - 5] & 0x80 != 0 ? 12 : 8
        let tableAt = file.count - 9 - count * entrySize - 8
        let indexAt = tableAt - u32(tableAt + 8 + (count - 1) * entrySize)
        try #require(count > 0 && indexAt >= 0 && u32(indexAt) == 0x184D_2A5B, "\(name) has no member index")
        // Version 2 (docs/members.md): the counts uncompressed, then one zstd frame of column blocks.
        var headEnd = indexAt + 16
        for _ in 0 ..< 5 { _ = uvarint(file, &headEnd) }
        try Data(file[headEnd ..< tableAt]).write(to: scratch.url.appendingPathComponent("index.zst"))
        let blocks = [UInt8](try scratch.zstd(["-dc", "index.zst"]).stdout)
        // The first block: its member count, 18 column lengths, the columns.
        var at = 0
        let members = uvarint(blocks, &at)
        let lengths = (0 ..< 18).map { _ in uvarint(blocks, &at) }
        var columns: [[UInt8]] = []
        for length in lengths {
            columns.append(Array(blocks[at ..< at + length]))
            at += length
        }
        let rest = blocks[at...]
        func values(_ column: Int) -> [Int] {
            var position = 0
            return (0 ..< members).map { _ in uvarint(columns[column], &position) }
        }
        // Column 0: gaps; 2: data length minus the size rounded to 512 (zigzag); 3–6: the size.
        var gaps = values(0), extras = values(2)
        let size = Int(columns[3][0]) | Int(columns[4][0]) << 8 | Int(columns[5][0]) << 16 | values(6)[0] << 24
        let predicted = (size + 511) / 512 * 512
        let oldLength = predicted + ((extras[0] >> 1) ^ -(extras[0] & 1))
        let extra = dataLength - predicted
        extras[0] = extra < 0 ? (-extra) * 2 - 1 : extra * 2
        gaps[1] = secondGap(gaps[1] + oldLength - dataLength)
        columns[0] = gaps.flatMap(encoded)
        columns[2] = extras.flatMap(encoded)
        var crafted = encoded(members) + columns.flatMap { encoded($0.count) }
        for column in columns { crafted += column }
        crafted += rest
        try Data(crafted).write(to: scratch.url.appendingPathComponent("records"))
        let frame = try scratch.zstd(["-q", "-c", "--check", "records"]).stdout
        let content = Array(file[(indexAt + 8) ..< headEnd]) + [UInt8](frame)
        func le32(_ value: Int) -> [UInt8] { (0 ..< 4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        var table = Array(file[tableAt...])
        table.replaceSubrange((8 + (count - 1) * entrySize) ..< (12 + (count - 1) * entrySize),
                              with: le32(8 + content.count))
        let lying = Array(file[..<indexAt]) + le32(0x184D_2A5B) + le32(content.count) + content + table
        try Data(lying).write(to: scratch.url.appendingPathComponent(out))
    }

    /// `a.tar.zst`: a.txt ("hello\n"), b.txt, c.txt in small frames, with its index (from a pipe).
    static func archive(_ scratch: Scratch) throws {
        let make = "printf 'hello\\n' > a.txt && printf 'bee\\n' > b.txt && printf 'sea\\n' > c.txt"
            + " && tar -cf a.tar a.txt b.txt c.txt && $WEIR -q -B 16K < a.tar > a.tar.zst"
        let made = try WeirProcess.shell(make, in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
    }

    @Test("""
          an index whose data length for a member is 0, or a block too many, with a valid checksum: --member \
          refuses it with the file and offset, never the header alone nor the next member's bytes
          """)
    func dataLengthLies() throws {
        let scratch = Scratch()
        try Self.archive(scratch)
        let good = try WeirProcess.shell("$WEIR -dc --member=a.txt a.tar.zst | tar xOf -", in: scratch.url)
        #expect(good.status == 0 && good.stdout == Data("hello\n".utf8), "\(good.stderr)")
        // 0: b.txt keeps its offset (its gap grows); 1024: b.txt's offset moves a block into its data.
        try Self.lie("a.tar.zst", dataLength: 0, secondGap: { $0 }, out: "zero.tar.zst", in: scratch)
        try Self.lie("a.tar.zst", dataLength: 1024, secondGap: { _ in 0 }, out: "long.tar.zst", in: scratch)
        let zero = try WeirProcess.run(["-dc", "--member=a.txt", "zero.tar.zst"], in: scratch.url)
        #expect(zero.status == 1 && zero.stdout.isEmpty, "\(zero.stderr)")
        #expect(zero.stderr.contains("weir: zero.tar.zst: member index disagrees with the archive")
                    && zero.stderr.contains("a.txt") && zero.stderr.contains("offset 0"), "\(zero.stderr)")
        // A block too many moves every later member: the index is refused whole, or the member.
        let long = try WeirProcess.run(["-dc", "--member=a.txt", "long.tar.zst"], in: scratch.url)
        #expect(long.status == 1 && long.stdout.isEmpty && long.stderr.contains("weir: long.tar.zst: "),
                "\(long.stderr)")
        // The index's other members still read right.
        let other = try WeirProcess.shell("$WEIR -dc --member=c.txt zero.tar.zst | tar xOf -", in: scratch.url)
        #expect(other.status == 0 && other.stdout == Data("sea\n".utf8), "\(other.stderr)")
    }

    @Test("-t checks the member index as it checks the seek table: a record that lies, a damaged index frame")
    func testChecksIndex() throws {
        let scratch = Scratch()
        try Self.archive(scratch)
        #expect(try WeirProcess.run(["-t", "a.tar.zst"], in: scratch.url).status == 0)
        try Self.lie("a.tar.zst", dataLength: 0, secondGap: { $0 }, out: "zero.tar.zst", in: scratch)
        let lying = try WeirProcess.run(["-t", "zero.tar.zst"], in: scratch.url)
        #expect(lying.status == 1 && lying.stderr.contains("zero.tar.zst: member index disagrees with the archive"),
                "\(lying.stderr)")
        var damaged = try #require(scratch.data("a.tar.zst"))
        let tag = try #require(damaged.range(of: Data("WEIRTARI".utf8)))
        damaged[tag.upperBound + 20] ^= 0x55
        try damaged.write(to: scratch.url.appendingPathComponent("damaged.tar.zst"))
        let run = try WeirProcess.run(["-t", "damaged.tar.zst"], in: scratch.url)
        #expect(run.status == 1 && run.stderr.contains("damaged.tar.zst") && run.stderr.contains("member index"),
                "\(run.stderr)")
        // In the stream of events, its one end object says so (not "ok", then an error).
        let events = try WeirProcess.run(["-t", "--progress=json", "damaged.tar.zst"], in: scratch.url)
        let ends = events.stderr.split(separator: "\n").filter { $0.contains("\"event\":\"end\"") }
        #expect(events.status == 1 && ends.count == 1 && ends.first?.contains("\"status\":\"error\"") == true,
                "\(events.stderr)")
    }

    /// `p.tar.zst`: a.txt, then b.txt behind a pax header that renames it
    /// secret.txt (as `tar x` names it), then c.txt; and `gap.tar.zst`, its
    /// index lying with a valid checksum: b.txt's record starts at its ustar
    /// block, past its pax header (a gap no tar written end to end has),
    /// and names it b.txt, as that block alone does.
    static func paxGap(_ scratch: Scratch) throws {
        let make = MountCommandTests.lieFunction + """

            printf 'hello\\n' > a.txt; printf 'bee\\n' > b.txt; printf 'sea\\n' > c.txt
            tar --format=pax -cf p.tar a.txt
            tar --format=pax --pax-option='path:=secret.txt' -rf p.tar b.txt
            tar --format=pax -rf p.tar c.txt
            $WEIR -q -B 16K p.tar
            # Each member: a pax header, its records, the ustar block, the data. secret.txt: 2048 to 4096.
            lie p.tar.zst gap.tar.zst secret.txt offset=3072 header_length=512 path=b.txt
            """
        let made = try WeirProcess.shell(make, in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
    }

    @Test("""
          a record that starts past its member's own pax header (a gap), named as the ustar block alone names \
          it: --member and -t refuse it, never another name for the member's bytes; the honest archive reads
          """)
    func recordPastItsPaxHeader() throws {
        let scratch = Scratch()
        try Self.paxGap(scratch)
        let honest = try WeirProcess.shell("$WEIR -dc --member=secret.txt p.tar.zst | tar xvOf -", in: scratch.url)
        #expect(honest.status == 0 && honest.stdout == Data("bee\n".utf8)
                    && honest.stderr.contains("secret.txt"), "\(honest.stderr)")
        let lying = try WeirProcess.run(["-dc", "--member=b.txt", "gap.tar.zst"], in: scratch.url)
        #expect(lying.status == 1 && lying.stdout.isEmpty
                    && lying.stderr.contains("weir: gap.tar.zst: member index disagrees with the archive")
                    && lying.stderr.contains("b.txt") && lying.stderr.contains("offset 2048")
                    && lying.stderr.contains("secret.txt"), "\(lying.stderr)")
        let test = try WeirProcess.run(["-t", "gap.tar.zst"], in: scratch.url)
        #expect(test.status == 1 && test.stderr.contains("gap.tar.zst: member index disagrees with the archive"),
                "\(test.stderr)")
        // The members around it read as they are.
        let other = try WeirProcess.shell("$WEIR -dc --member=c.txt gap.tar.zst | tar xOf -", in: scratch.url)
        #expect(other.status == 0 && other.stdout == Data("sea\n".utf8), "\(other.stderr)")
    }

    @Test("""
          -t refuses an index whose last record was left out (a later copy of a name with it), its end offset \
          kept or moved back to the last record's end, or said to end early: the records end where the tar does
          """)
    func testChecksIndexEnd() throws {
        let scratch = Scratch()
        let suite = ManualTests.root.appendingPathComponent("scripts/harness/member-index-test").path
        let made = try WeirProcess.shell("""
            set -e
            printf 'old\\n' > a.txt; printf 'x\\n' > b.txt; tar -cf dup.tar a.txt b.txt
            printf 'NEW\\n' > a.txt; tar -rf dup.tar a.txt
            $WEIR -q -B 16K < dup.tar > dup.tar.zst
            python3 - <<'PY'
            import importlib.machinery, importlib.util
            loader = importlib.machinery.SourceFileLoader("suite", "\(suite)")
            suite = importlib.util.module_from_spec(importlib.util.spec_from_loader("suite", loader))
            loader.exec_module(suite)
            archive = suite.Archive(open("dup.tar.zst", "rb").read())
            members = [dict(m) for m in archive.members][:-1]
            header = list(archive.header)
            header[2] = len(members)
            open("kept.tar.zst", "wb").write(archive.with_content(suite.encode_columns(header, members)))
            last = members[-1]
            header[3] = last["offset"] + last["header_length"] + last["data_length"]
            open("moved.tar.zst", "wb").write(archive.with_content(suite.encode_columns(header, members)))
            header[1], header[3] = 1, archive.header[3]
            open("early.tar.zst", "wb").write(archive.with_content(suite.encode_columns(header, members)))
            PY
            """, in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try WeirProcess.run(["-t", "dup.tar.zst"], in: scratch.url).status == 0)
        for (name, words) in [("kept", "its last member ends at 2048, its end blocks are said to begin at 3072"),
                              ("moved", "no end block at 2048"),
                              ("early", "it says the tar ended early, but its last member ends at 2048")] {
            let run = try WeirProcess.run(["-t", "\(name).tar.zst"], in: scratch.url)
            #expect(run.status == 1 && run.stderr.contains("weir: \(name).tar.zst: member index disagrees with "
                + "the archive: \(words)"), "\(run.stderr)")
        }
    }

    @Test("""
          --member=PATTERN as tar --wildcards: dir/* leaves the folder entry dir/ out; an empty pattern \
          selects every member, as tar's, and never takes the next argument
          """)
    func patternsAsTar() throws {
        let scratch = Scratch()
        let make = "mkdir -p d/s && echo a > d/s/a && echo b > d/b && tar -cf a.tar d && $WEIR -q < a.tar > a.tar.zst"
        #expect(try WeirProcess.shell(make, in: scratch.url).status == 0)
        for (pattern, tarArguments) in [("d/s/*", "--wildcards 'd/s/*'"), ("d/*", "--wildcards 'd/*'"), ("", "''")] {
            let weir = try WeirProcess.shell("$WEIR -dc '--member=\(pattern)' a.tar.zst | tar tf -", in: scratch.url)
            let tar = try WeirProcess.shell("tar tf a.tar \(tarArguments)", in: scratch.url)
            #expect(weir.status == 0 && tar.status == 0, "\(pattern): \(weir.stderr) \(tar.stderr)")
            let ours = String(decoding: weir.stdout, as: UTF8.self)
            let theirs = String(decoding: tar.stdout, as: UTF8.self)
            #expect(ours == theirs, "\(pattern): weir \(ours) tar \(theirs)")
        }
        // `--member= a.tar.zst`: the archive is the input, not the pattern (standard input stays unread).
        let empty = try WeirProcess.run(["-dc", "--member=", "a.tar.zst"], in: scratch.url)
        let whole = try WeirProcess.run(["-dc", "a.tar.zst"], in: scratch.url)
        // Every member, then the end blocks: the archive's own bytes up to its end blocks (tar pads after them).
        #expect(empty.status == 0 && empty.stdout.count > 2048 && whole.stdout.starts(with: empty.stdout),
                "\(empty.stderr)")
    }

    @Test("a hard link read alone whose target comes after it: the link is written and a warning names both")
    func laterLinkTarget() throws {
        let scratch = Scratch()
        let make = """
            python3 -c '
            import io, tarfile
            with tarfile.open("later.tar", "w", format=tarfile.GNU_FORMAT) as t:
                i = tarfile.TarInfo("b"); i.type = tarfile.LNKTYPE; i.linkname = "a"; t.addfile(i)
                d = b"hello\\n"; i = tarfile.TarInfo("a"); i.size = len(d); t.addfile(i, io.BytesIO(d))
            ' && $WEIR -q < later.tar > later.tar.zst
            """
        let made = try WeirProcess.shell(make, in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
        let run = try WeirProcess.run(["-dc", "--member=b", "later.tar.zst"], in: scratch.url)
        #expect(run.status == 0 && run.stderr.contains("later.tar.zst")
                    && run.stderr.contains("hard link b links to a, which comes after it in the archive"),
                "\(run.stderr)")
    }
}
