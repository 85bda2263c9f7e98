import Foundation
import Testing

/// The member index weir writes when it compresses a tar (issue 61,
/// docs/members.md), read back here by hand from the file's bytes and
/// `zstd -d`, so that the test does not trust weir's own decoder; and the
/// archive read as before by zstd, pzstd and GNU tar.
@Suite("Member index, written")
struct MemberIndexCommandTests {
    /// What the test reads of an index: the header and each member's offsets and name.
    struct Dump {
        var flags = 0
        var endOffset = 0
        var contentSize = 0
        var members: [(offset: Int, headerLength: Int, end: Int, type: UInt8, path: String)] = []
    }

    /// The member index of the file `name`, read from its seek table (the
    /// entry just before it, of no content, magic 0x184D2A5B); nil when there
    /// is none. Its zstd frame is decoded by zstd.
    static func index(_ name: String, in scratch: Scratch) throws -> Dump? {
        let file = [UInt8](try #require(scratch.data(name)))
        func u32(_ at: Int) -> Int { (0 ..< 4).reduce(0) { $0 | Int(file[at + $1]) << (8 * $1) } }
        guard file.count >= 17, u32(file.count - 4) == 0x8F92_EAB1 else { return nil }
        let count = u32(file.count - 9), entrySize = file[file.count - 5] & 0x80 != 0 ? 12 : 8
        let table = file.count - 17 - count * entrySize
        let last = table + 8 + (count - 1) * entrySize
        let size = u32(last)
        guard u32(last + 4) == 0, u32(table - size) == 0x184D_2A5B else { return nil }
        #expect(Array(file[table - size + 8 ..< table - size + 16]) == Array("WEIRTARI".utf8))
        // Version 2 (docs/members.md): the header uncompressed, then one zstd frame of column blocks.
        var head = table - size + 16
        func headVarint() -> Int {
            var value = 0, shift = 0
            while true {
                let byte = file[head]
                head += 1
                value |= Int(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }
        #expect(headVarint() == 2)
        var dump = Dump(flags: headVarint())
        let members = headVarint()
        (dump.endOffset, dump.contentSize) = (headVarint(), headVarint())
        try Data(file[head ..< table]).write(to: scratch.url.appendingPathComponent("records.zst"))
        let decoded = try scratch.zstd(["-dc", "records.zst"])
        #expect(decoded.status == 0, "\(decoded.stderr)")
        let blocks = [UInt8](decoded.stdout)
        var position = 0
        func varint(_ bytes: [UInt8], _ at: inout Int) -> Int {
            var value = 0, shift = 0
            while true {
                let byte = bytes[at]
                at += 1
                value |= Int(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }
        var (end, previousPath, mtime) = (0, [UInt8](), 0)
        while position < blocks.count {
            let count = varint(blocks, &position)
            let lengths = (0 ..< 18).map { _ in varint(blocks, &position) }
            var columns: [[UInt8]] = []
            for length in lengths {
                columns.append(Array(blocks[position ..< position + length]))
                position += length
            }
            var at = [Int](repeating: 0, count: 18)
            func value(_ column: Int) -> Int { varint(columns[column], &at[column]) }
            func byte(_ column: Int) -> UInt8 {
                at[column] += 1
                return columns[column][at[column] - 1]
            }
            func text(_ column: Int) -> [UInt8] {
                let start = at[column]
                while columns[column][at[column]] != 0 { at[column] += 1 }
                at[column] += 1
                return Array(columns[column][start ..< at[column] - 1])
            }
            for _ in 0 ..< count {
                let offset = end + value(0), headerLength = (value(1) + 1) * 512
                let extra = value(2)
                let size = Int(byte(3)) | Int(byte(4)) << 8 | Int(byte(5)) << 16 | value(6) << 24
                mtime += value(7)
                let type = byte(8)
                for column in 9 ... 11 { _ = value(column) }
                let pop = value(12)
                let slashes = previousPath.indices.filter { previousPath[$0] == UInt8(ascii: "/") }
                let kept = slashes.count - pop
                let path = (kept > 0 ? Array(previousPath[...slashes[kept - 1]]) : []) + text(13)
                _ = text(14)
                for column in 15 ... 16 where byte(column) == 1 { _ = text(column) }
                if type == UInt8(ascii: "3") || type == UInt8(ascii: "4") { _ = (value(17), value(17)) }
                let predicted = type == UInt8(ascii: "0") || type == UInt8(ascii: "1") ? (size + 511) / 512 * 512 : 0
                let dataLength = predicted + ((extra >> 1) ^ -(extra & 1))
                end = offset + headerLength + dataLength
                dump.members.append((offset, headerLength, end, type, String(decoding: path, as: UTF8.self)))
                previousPath = path
            }
            #expect(at == lengths)
        }
        #expect(dump.members.count == members)
        return dump
    }

    /// A tree with a folder, a symbolic link, files over several frames,
    /// and, unless `short`, a name over 100 bytes and a path over 255.
    static func makeTree(_ scratch: Scratch, short: Bool) throws {
        let deep = "tree/" + String(repeating: "d", count: 120) + "/" + String(repeating: "e", count: 110)
        let long = short ? "" : "; mkdir -p \(deep); echo long > \(deep)/" + String(repeating: "f", count: 101)
        let make = "mkdir -p tree/sub/empty && ln -s sub/b tree/link && echo b > tree/sub/b" + long
        #expect(try WeirProcess.shell(make, in: scratch.url).status == 0)
        scratch.text("tree/big", size: 300_000)
        scratch.text("tree/sub/mid", size: 70_000, seed: 2)
    }

    /// Checks the index of `name` against `tar`, the archive it was made
    /// from: tar's own listing, every member's bytes a tar of that member
    /// alone, the end and the content size.
    static func expectIndex(_ name: String, of tar: String, in scratch: Scratch,
                            sourceLocation: SourceLocation = #_sourceLocation) throws {
        let dump = try #require(try index(name, in: scratch), "no member index in \(name)",
                                sourceLocation: sourceLocation)
        let content = try #require(scratch.data(tar))
        let listed = try WeirProcess.shell("tar tf \(tar)", in: scratch.url)
        let names = String(decoding: listed.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(dump.members.map(\.path) == names, sourceLocation: sourceLocation)
        #expect(dump.flags == 0 && dump.contentSize == content.count, sourceLocation: sourceLocation)
        #expect(dump.endOffset == dump.members.last?.end, sourceLocation: sourceLocation)
        #expect(content[dump.endOffset ..< dump.endOffset + 1024].allSatisfy { $0 == 0 },
                sourceLocation: sourceLocation)
        for member in dump.members {
            #expect(member.headerLength % 512 == 0 && member.headerLength >= 512, sourceLocation: sourceLocation)
            let alone = content[member.offset ..< member.end] + Data(count: 1024)
            try alone.write(to: scratch.url.appendingPathComponent("one.tar"))
            let one = try WeirProcess.shell("tar tf one.tar", in: scratch.url)
            #expect(String(decoding: one.stdout, as: UTF8.self) == member.path + "\n", "\(one.stderr)",
                    sourceLocation: sourceLocation)
        }
    }

    @Test("""
          GNU tar's ustar, pax and gnu archives, piped and from a file: the index lists tar tf's names and where \
          each member lies; zstd, pzstd and tar --zstd read the archive as before
          """,
          arguments: ["ustar", "pax", "gnu"])
    func tarFormats(format: String) throws {
        let scratch = Scratch()
        try Self.makeTree(scratch, short: format == "ustar")
        #expect(try WeirProcess.shell("tar --format=\(format) -cf a.tar tree", in: scratch.url).status == 0)
        // GNU tar's pax headers name its process: the same archive through a pipe is tar's file, cat.
        let piped = try WeirProcess.shell("cat a.tar | $WEIR -q -B 64K > piped.tar.zst", in: scratch.url)
        #expect(piped.status == 0, "\(piped.stderr)")
        let file = try WeirProcess.run(["-q", "-B", "64K", "-T1", "-1", "a.tar", "-o", "file.tar.zst"], in: scratch.url)
        #expect(file.status == 0, "\(file.stderr)")
        for name in ["piped.tar.zst", "file.tar.zst"] {
            try Self.expectIndex(name, of: "a.tar", in: scratch)
            #expect(try scratch.zstd(["-dc", name]).stdout == scratch.data("a.tar"), "\(name)")
            let pzstd = try WeirProcess.run(["-dc", name], in: scratch.url, executable: "/usr/bin/pzstd")
            #expect(pzstd.status == 0 && pzstd.stdout == scratch.data("a.tar"), "\(name): \(pzstd.stderr)")
            let extract = "rm -rf out && mkdir out && tar --zstd -xf \(name) -C out && diff -r tree out/tree"
            let tar = try WeirProcess.shell(extract, in: scratch.url)
            #expect(tar.status == 0, "\(name): \(tar.stderr)")
        }
    }

    @Test("""
          a file's chunks walked by the workers that compress them, each from a guess checked in order: the \
          file's output is the pipe's, byte for byte, on tars that lay traps for a guess (a tar inside the tar, \
          blocks of zeros, long names, sparse files, many small members), cut or whole, one or two threads
          """, arguments: ["posix", "gnu"])
    func fileAsPipe(format: String) throws {
        let scratch = Scratch()
        let long = String(repeating: "n", count: 150)
        let make = """
            set -e; mkdir -p t/in t/\(long); for i in $(seq 1 300); do head -c $((i * 37)) /dev/urandom > t/in/f$i; done
            tar --format=\(format) -cf t/inner.tar t/in; head -c 3000000 /dev/zero > t/zeros
            head -c 5000000 /dev/urandom > t/noise; echo x > t/\(long)/\(long); ln -s \(long) t/sym
            truncate -s 5M t/sparse; printf d | dd of=t/sparse bs=1 seek=4000000 conv=notrunc status=none
            tar --format=\(format) --sparse -cf a.tar t; head -c 7654321 a.tar > cut.tar
            """
        #expect(try WeirProcess.shell(make, in: scratch.url).status == 0)
        for tar in ["a.tar", "cut.tar"] {
            // Chunks of 64 KiB are walked after each is compressed; of 2 MiB at -1, step by step as libzstd reads them.
            for (chunk, threads) in [("64K", "-T2"), ("2M", "-T2"), ("2M", "-T1"), ("200K", "-T2")] {
                let flags = "-q -1 \(threads) -B \(chunk)"
                let runs = "$WEIR \(flags) \(tar) -o file.zst -f && cat \(tar) | $WEIR \(flags) > pipe.zst"
                let run = try WeirProcess.shell(runs, in: scratch.url)
                #expect(run.status == 0, "\(run.stderr)")
                #expect(scratch.data("file.zst") == scratch.data("pipe.zst"), "\(tar) \(flags)")
                if tar == "a.tar" {
                    try Self.expectIndex("file.zst", of: tar, in: scratch)
                } else {
                    #expect(try Self.index("file.zst", in: scratch) == nil, "\(flags)")
                }
            }
        }
    }

    @Test("--no-member-index leaves the index out, --no-seek-table both; an input that is not a tar has none")
    func leftOut() throws {
        let scratch = Scratch()
        try Self.makeTree(scratch, short: false)
        #expect(try WeirProcess.shell("tar -cf a.tar tree", in: scratch.url).status == 0)
        scratch.text("plain", size: 300_000)
        for (flags, output) in [(["--no-member-index"], "none.tar.zst"), (["--no-seek-table"], "bare.tar.zst"),
                                ([], "plain.zst")] {
            let input = output == "plain.zst" ? "plain" : "a.tar"
            let run = try WeirProcess.run(["-q", "-B", "64K"] + flags + [input, "-o", output], in: scratch.url)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try Self.index(output, in: scratch) == nil, "\(flags)")
            #expect(try scratch.zstd(["-dc", output]).stdout == scratch.data(input), "\(flags)")
        }
        let footer = try #require(scratch.data("bare.tar.zst")).suffix(4)
        #expect(Array(footer) != [0xB1, 0xEA, 0x92, 0x8F], "--no-seek-table wrote a table")
        #expect(try #require(scratch.data("none.tar.zst")).suffix(4).elementsEqual([0xB1, 0xEA, 0x92, 0x8F]))
    }

    @Test("""
          a tar cut inside a member or between members (a piece parallel --pipepart cuts), and one whose stream \
          stops being tar: no index, the content intact; the joined pieces get the whole tar's from --index
          """)
    func endedEarly() throws {
        let scratch = Scratch()
        try Self.makeTree(scratch, short: false)
        #expect(try WeirProcess.shell("tar -cf a.tar tree", in: scratch.url).status == 0)
        let whole = try #require(scratch.data("a.tar"))
        #expect(try WeirProcess.run(["-q", "-B", "64K", "a.tar", "-o", "a.tar.zst"], in: scratch.url).status == 0)
        let listing = try #require(try Self.index("a.tar.zst", in: scratch))
        // Cut in the middle of the largest member's data, and just after it.
        let big = try #require(listing.members.first { $0.path == "tree/big" })
        let cut = big.offset + big.headerLength + 100_000
        // The member after the big one overwritten with bytes that are not a header.
        var damaged = whole
        let next = big.end
        damaged.replaceSubrange(next ..< next + 512, with: Data(repeating: 0x41, count: 512))
        try whole.prefix(cut).write(to: scratch.url.appendingPathComponent("cut.tar"))
        try whole.prefix(big.end).write(to: scratch.url.appendingPathComponent("between.tar"))
        try damaged.write(to: scratch.url.appendingPathComponent("damaged.tar"))
        for name in ["cut.tar", "between.tar", "damaged.tar"] {
            let run = try WeirProcess.shell("cat \(name) | $WEIR -q -B 64K > \(name).zst", in: scratch.url)
            #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
            #expect(try scratch.zstd(["-dc", "\(name).zst"]).stdout == scratch.data(name))
            #expect(try Self.index("\(name).zst", in: scratch) == nil, "\(name)")
        }
        // README's recipe for many machines: the pieces joined, then indexed once, as a whole.
        let pieces = "head -c \(cut) a.tar | $WEIR -q -B 64K > joined.tar.zst"
            + " && tail -c +\(cut + 1) a.tar | $WEIR -q -B 64K >> joined.tar.zst && $WEIR -q --index joined.tar.zst"
        let joined = try WeirProcess.shell(pieces, in: scratch.url)
        #expect(joined.status == 0, "\(joined.stderr)")
        try Self.expectIndex("joined.tar.zst", of: "a.tar", in: scratch)
        // One index in the file: the one the last table lists.
        let file = try #require(scratch.data("joined.tar.zst"))
        let magic = Data([0x5B, 0x2A, 0x4D, 0x18])
        var found = 0, from = file.startIndex
        while let range = file.range(of: magic, in: from ..< file.endIndex) {
            if file[range.upperBound + 4 ..< range.upperBound + 12] == Data("WEIRTARI".utf8) { found += 1 }
            from = range.upperBound
        }
        #expect(found == 1)
    }

    @Test("-r: a tar among other files gets its index, the others none; any level, one thread")
    func recursive() throws {
        let scratch = Scratch()
        try Self.makeTree(scratch, short: false)
        let make = "mkdir dir && tar -cf dir/a.tar tree && cp tree/big dir/b"
        #expect(try WeirProcess.shell(make, in: scratch.url).status == 0)
        let run = try WeirProcess.run(["-q", "-r", "-19", "-T1", "-B", "64K", "dir"], in: scratch.url)
        #expect(run.status == 0, "\(run.stderr)")
        try Self.expectIndex("dir/a.tar.zst", of: "dir/a.tar", in: scratch)
        #expect(try Self.index("dir/b.zst", in: scratch) == nil)
    }

    @Test("""
          --index on pzstd's tar, a concatenation, and weir's own without an index: the members appended in place, \
          the bytes before unchanged; twice changes nothing
          """)
    func indexesOthers() throws {
        let scratch = Scratch()
        try Self.makeTree(scratch, short: false)
        scratch.text("tree/more", size: 3_000_000, seed: 3)
        #expect(try WeirProcess.shell("tar -cf a.tar tree", in: scratch.url).status == 0)
        let made = "pzstd -q -p 2 -1 a.tar -o p.tar.zst"
            + " && head -c 1000000 a.tar | zstd -q > c.tar.zst && tail -c +1000001 a.tar | zstd -q >> c.tar.zst"
            + " && $WEIR -q -B 256K --no-member-index a.tar -o w.tar.zst"
        #expect(try WeirProcess.shell(made, in: scratch.url).status == 0)
        for name in ["p.tar.zst", "c.tar.zst", "w.tar.zst"] {
            let before = try #require(scratch.data(name))
            #expect(try Self.index(name, in: scratch) == nil)
            let run = try WeirProcess.run(["--index", name], in: scratch.url)
            #expect(run.status == 0 && run.stderr.contains("\(name): member index of "), "\(run.stderr)")
            #expect(try #require(scratch.data(name)).prefix(before.count) == before, "\(name)")
            try Self.expectIndex(name, of: "a.tar", in: scratch)
            #expect(try scratch.zstd(["-dc", name]).stdout == scratch.data("a.tar"), "\(name)")
            let again = try WeirProcess.run(["--index", name], in: scratch.url)
            #expect(again.status == 0 && again.stderr.contains("\(name): already seekable"), "\(again.stderr)")
        }
    }

    @Test("--index --no-member-index: pzstd's tar gets a seek table and no member index; weir's own is left alone")
    func indexWithoutMembers() throws {
        let scratch = Scratch()
        try Self.makeTree(scratch, short: false)
        #expect(try WeirProcess.shell("tar -cf a.tar tree && pzstd -q -p 2 -1 a.tar -o p.tar.zst"
                                      + " && $WEIR -q -B 256K --no-member-index a.tar -o w.tar.zst",
                                      in: scratch.url).status == 0)
        let run = try WeirProcess.run(["--index", "--no-member-index", "p.tar.zst"], in: scratch.url)
        #expect(run.status == 0 && run.stderr.contains("p.tar.zst: seek table of "), "\(run.stderr)")
        #expect(try Self.index("p.tar.zst", in: scratch) == nil)
        let ownBefore = scratch.data("w.tar.zst")
        let own = try WeirProcess.run(["--index", "--no-member-index", "w.tar.zst"], in: scratch.url)
        #expect(own.status == 0 && own.stderr.contains("w.tar.zst: already seekable"), "\(own.stderr)")
        #expect(scratch.data("w.tar.zst") == ownBefore)
    }

    @Test("""
          a tar of 1 MiB or less gets its member index from a file as from a pipe, alone and under -r (issue 67): \
          -l --members lists it, --member extracts from it
          """)
    func smallTar() throws {
        let scratch = Scratch()
        try Self.makeTree(scratch, short: true)
        #expect(try WeirProcess.shell("tar -cf a.tar tree && mkdir r && cp a.tar r/b.tar", in: scratch.url).status == 0)
        #expect(try #require(scratch.data("a.tar")).count <= 1 << 20)
        let file = try WeirProcess.run(["-q", "a.tar"], in: scratch.url)
        #expect(file.status == 0, "\(file.stderr)")
        let tree = try WeirProcess.run(["-q", "-r", "r"], in: scratch.url)
        #expect(tree.status == 0, "\(tree.stderr)")
        let piped = try WeirProcess.shell("$WEIR -q < a.tar > piped.tar.zst", in: scratch.url)
        #expect(piped.status == 0, "\(piped.stderr)")
        for name in ["a.tar.zst", "r/b.tar.zst", "piped.tar.zst"] {
            try Self.expectIndex(name, of: "a.tar", in: scratch)
            let list = try WeirProcess.run(["-l", "--members", name], in: scratch.url)
            #expect(list.status == 0 && String(decoding: list.stdout, as: UTF8.self).contains("tree/sub/b"),
                    "\(name): \(list.stderr)")
            let member = try WeirProcess.shell("$WEIR -dc --member=tree/sub/b \(name) | tar xOf -", in: scratch.url)
            #expect(member.status == 0 && member.stdout == Data("b\n".utf8), "\(name): \(member.stderr)")
        }
    }

    @Test("--index on a tar in one zstd frame: its index appended, as the compressor gives a tar of one frame one")
    func oneFrame() throws {
        let scratch = Scratch()
        try Self.makeTree(scratch, short: false)
        #expect(try WeirProcess.shell("tar -cf a.tar tree && zstd -q -T0 a.tar -o one.tar.zst && cp a.tar small.tar",
                                      in: scratch.url).status == 0)
        let before = try #require(scratch.data("one.tar.zst"))
        let run = try WeirProcess.run(["--index", "one.tar.zst"], in: scratch.url)
        #expect(run.status == 0 && run.stderr.contains("one.tar.zst: member index of "), "\(run.stderr)")
        #expect(try #require(scratch.data("one.tar.zst")).prefix(before.count) == before)
        try Self.expectIndex("one.tar.zst", of: "a.tar", in: scratch)
        // The compressor's own one-frame output of the same tar holds the same index.
        let own = try WeirProcess.run(["-q", "small.tar", "-o", "own.tar.zst"], in: scratch.url)
        #expect(own.status == 0, "\(own.stderr)")
        try Self.expectIndex("own.tar.zst", of: "a.tar", in: scratch)
        #expect(try Self.index("own.tar.zst", in: scratch)?.members.map(\.path)
                    == Self.index("one.tar.zst", in: scratch)?.members.map(\.path))
    }
}

