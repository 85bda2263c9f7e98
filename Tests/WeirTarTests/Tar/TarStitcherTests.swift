import Dispatch
import Foundation
import Testing
@testable import WeirSystem
@testable import WeirTar
@testable import WeirTarTestSupport
@testable import WeirTestSupport

/// The chunks' walks put together (``TarStitcher``) against one walk of the
/// whole content (``TarScanner``): the same index, byte for byte, however the
/// content is cut into chunks and the chunks into steps, on tars that lay
/// traps for a walk that guesses where its first header lies.
@Suite("Tar stitcher")
struct TarStitcherTests {
    /// GNU tar's archive (`format`) of a tree that tempts a guess: a tar
    /// inside the tar (its headers lie on the outer tar's 512-byte
    /// boundaries), files of zeros (blocks that read as the tar's end), long
    /// names (pax records, GNU long names: headers of several blocks), a
    /// GNU sparse file with extension blocks, links, and many small files.
    static func trap(format: String) throws -> [UInt8] {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let long = String(repeating: "n", count: 150)
        let script = """
            set -e; mkdir -p t/in t/\(long) \
            && for i in $(seq 1 40); do head -c $((i * 97)) /dev/urandom > t/in/f$i; done \
            && tar --format=\(format) -cf t/inner.tar t/in && head -c 70000 /dev/zero > t/zeros \
            && echo x > t/\(long)/\(long) && ln -s \(long) t/sym && ln t/zeros t/hard && truncate -s 9M t/sparse \
            && for k in $(seq 1 25); do printf d | dd of=t/sparse bs=1 seek=$((k * 300000)) conv=notrunc status=none; \
            done \
            && for i in $(seq 1 60); do printf "$i" > t/s$i; done \
            && tar --format=\(format) --sparse -cf a.tar t
            """
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", script]
        shell.currentDirectoryURL = folder
        try shell.run()
        shell.waitUntilExit()
        try #require(shell.terminationStatus == 0)
        return [UInt8](try Data(contentsOf: folder.appendingPathComponent("a.tar")))
    }

    /// The index of `tar` cut into chunks at `cuts`, each walked in steps
    /// of `step` as a worker does (the first from 0, the others guessing),
    /// stitched in order, reading from `tar` where a walk is done again;
    /// the index's blocks closed at `blockBytes` of raw columns.
    static func stitched(_ tar: [UInt8], cuts: [Int], step: Int,
                         blockBytes: Int = MemberIndex.blockBytes) throws -> [UInt8]? {
        let stitcher = TarStitcher(blockBytes: blockBytes)
        let bounds = [0] + cuts.filter { $0 > 0 && $0 < tar.count }.sorted() + [tar.count]
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: tar.count, alignment: 16)
        defer { bytes.deallocate() }
        bytes.copyBytes(from: tar)
        let content = UnsafeRawBufferPointer(bytes)
        func read(_ offset: Int, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
            let count = max(0, min(buffer.count, content.count - offset))
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: content[offset ..< offset + count]))
            return count
        }
        for (start, end) in zip(bounds, bounds.dropFirst()) where end > start {
            let segment = TarSegment(chunkStart: start, chunkEnd: end, start: start == 0 ? 0 : nil)
            for at in stride(from: start, to: end, by: step) {
                segment.feed(UnsafeRawBufferPointer(rebasing: content[at ..< min(end, at + step)]), at: at)
            }
            segment.end()
            try stitcher.take(segment, read: read)
        }
        return try stitcher.finish(contentSize: tar.count, path: "a.tar.zst")?.frame.bytes(path: "a.tar.zst")
    }

    @Test("""
          chunks of any size, cut anywhere, walked in steps of any size, guessing where their first header \
          lies: the index one walk of the whole tar gives, byte for byte
          """, arguments: ["gnu", "posix", "oldgnu"])
    func sameAsOneWalk(format: String) throws {
        let tar = try Self.trap(format: format)
        let whole = try #require(try TestTar.scannedIndex(tar))
        for chunk in [512, 1000, 4096, 5000, 65536, 300_000, 1 << 20] {
            for step in [100, 512, 4096, 1 << 18] {
                let cuts = Array(stride(from: chunk, to: tar.count, by: chunk))
                #expect(try Self.stitched(tar, cuts: cuts, step: step) == whole, "chunks of \(chunk), steps \(step)")
            }
        }
        // Cuts at random places, chunks of random sizes.
        var random = SeededGenerator(seed: 82)
        for _ in 0 ..< 40 {
            let cuts = (0 ..< Int.random(in: 1 ... 40, using: &random)).map { _ in
                Int.random(in: 1 ..< tar.count, using: &random)
            }
            let step = [1, 7, 512, 4096, 1 << 18].randomElement(using: &random) ?? 512
            #expect(try Self.stitched(tar, cuts: cuts, step: step) == whole, "cuts \(cuts.sorted()), steps \(step)")
        }
    }

    /// A tar python's tarfile writes in `format` ("GNU" or "PAX"): 400
    /// members of every kind the index codes apart (devices, links, FIFOs,
    /// folders, long names and link targets), owners, ids and times that
    /// change every few members (varints of one to three bytes), 560
    /// KB: what tests a join's copy of every column, and its cut where
    /// a block closes.
    static func varied(format: String) throws -> [UInt8] {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = """
            import tarfile, io
            with tarfile.open("a.tar", "w", format=tarfile.\(format)_FORMAT) as t:
                for i in range(400):
                    deep = "/".join("d%d" % (i // k % 3) for k in (100, 20, 5))
                    info = tarfile.TarInfo(deep + "/" + ("long" * (i % 40) if i % 7 == 0 else "") + "m%d" % i)
                    info.mtime = 1700000000 + (i // 3) * 977 - (i % 5) * 3
                    info.uname, info.gname = ["root", "user", "x" * 20][i // 4 % 3], "g%d" % (i // 9)
                    info.uid, info.gid, info.mode = i % 4 * 1000, i // 9, 0o644 if i % 2 else 0o755
                    kind, data = i % 11, b""
                    if kind == 1: info.type, info.linkname = tarfile.SYMTYPE, "t" * (i % 150 + 1)
                    elif kind == 2: info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, i, 300 + i
                    elif kind == 3: info.type, info.devmajor, info.devminor = tarfile.BLKTYPE, 8, i % 16
                    elif kind == 4: info.type = tarfile.DIRTYPE
                    elif kind == 5: info.type = tarfile.FIFOTYPE
                    elif kind == 6 and i > 6: info.type, info.linkname = tarfile.LNKTYPE, "m6"
                    else: data = bytes([i % 256]) * (i * 37 % 3000)
                    info.size = len(data)
                    t.addfile(info, io.BytesIO(data))
            """
        return try pythonTar(script, in: folder)
    }

    /// The `a.tar` that python3 `script` writes in `folder`.
    static func pythonTar(_ script: String, in folder: URL) throws -> [UInt8] {
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", "-c", script]
        python.currentDirectoryURL = folder
        try python.run()
        python.waitUntilExit()
        try #require(python.terminationStatus == 0)
        return [UInt8](try Data(contentsOf: folder.appendingPathComponent("a.tar")))
    }

    @Test("""
          chunks' walks joined into blocks that close anywhere (inside a chunk's members, several in one \
          chunk): the index one walk of the whole tar gives, byte for byte, blocks and all
          """, arguments: ["GNU", "PAX"])
    func joinsAcrossBlocks(format: String) throws {
        let tar = try Self.varied(format: format)
        var random = SeededGenerator(seed: 83)
        for blockBytes in [256, 1000, 4096, 30000] {
            let whole = try #require(try TestTar.scannedIndex(tar, blockBytes: blockBytes))
            for chunk in [7680, 65536, 1 << 20, tar.count] {
                let cuts = Array(stride(from: chunk, to: tar.count, by: chunk))
                #expect(try Self.stitched(tar, cuts: cuts, step: 1 << 18, blockBytes: blockBytes) == whole,
                        "blocks of \(blockBytes), chunks of \(chunk)")
            }
            let cuts = (0 ..< 12).map { _ in Int.random(in: 1 ..< tar.count, using: &random) }
            #expect(try Self.stitched(tar, cuts: cuts, step: 4096, blockBytes: blockBytes) == whole,
                    "blocks of \(blockBytes), cuts \(cuts.sorted())")
        }
    }

    @Test("""
          a tar cut short, one with bytes changed anywhere (its checksums made good again or not), bytes that \
          are not a tar: the same index as one walk, or none where it gives none
          """)
    func damagedAsOneWalk() throws {
        let tar = try Self.trap(format: "gnu")
        var random = SeededGenerator(seed: 68)
        for round in 0 ..< 150 {
            var bytes = tar
            switch round % 3 {
            case 0: bytes = Array(bytes[..<Int.random(in: 1 ..< bytes.count, using: &random)])
            case 1:
                for _ in 0 ..< Int.random(in: 1 ... 4, using: &random) {
                    bytes[Int.random(in: 0 ..< bytes.count, using: &random)] = UInt8.random(in: 0 ... 255,
                                                                                             using: &random)
                }
            default:
                // A header's byte changed, its checksum made good: a walk that reads it otherwise.
                let block = Int.random(in: 0 ..< bytes.count / 512, using: &random) * 512
                bytes[block + Int.random(in: 0 ..< 148, using: &random)] = UInt8.random(in: 32 ... 126, using: &random)
                let sum = bytes[block ..< block + 148].reduce(0) { $0 + Int($1) } + 8 * 32
                    + bytes[block + 156 ..< block + 512].reduce(0) { $0 + Int($1) }
                let field = Array(String(format: "%06o\0 ", sum).utf8)
                bytes.replaceSubrange(block + 148 ..< block + 156, with: field)
            }
            let whole = try TestTar.scannedIndex(bytes)
            let chunk = [512, 3000, 65536].randomElement(using: &random) ?? 512
            let cuts = Array(stride(from: chunk, to: bytes.count, by: chunk))
            #expect(try Self.stitched(bytes, cuts: cuts, step: 4096) == whole, "round \(round)")
        }
        let text = [UInt8](repeating: UInt8(ascii: "a"), count: 100_000)
        #expect(try Self.stitched(text, cuts: [4096, 50_000], step: 512) == nil)
    }

    @Test("""
          members whose header blocks straddle many chunks (pax records of megabytes) are read from the file \
          once, not again for every chunk they straddle
          """)
    func longHeadersReadOnce() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = """
            import tarfile, io
            with tarfile.open("a.tar", "w", format=tarfile.PAX_FORMAT) as t:
                for i in range(3):
                    info = tarfile.TarInfo(f"m{i}")
                    info.size = 10
                    info.pax_headers = {"comment": "c" * (3 << 20)}
                    t.addfile(info, io.BytesIO(b"0123456789"))
            """
        let tar = try Self.pythonTar(script, in: folder)
        let whole = try #require(try TestTar.scannedIndex(tar))
        let stitcher = TarStitcher()
        var read = 0
        let chunk = 64 << 10
        try tar.withUnsafeBytes { content in
            for start in stride(from: 0, to: tar.count, by: chunk) {
                let end = min(tar.count, start + chunk)
                // Each chunk's guess: none inside a pax record, so each is walked from the file.
                let segment = TarSegment(chunkStart: start, chunkEnd: end, start: start == 0 ? 0 : nil)
                segment.feed(UnsafeRawBufferPointer(rebasing: content[start ..< end]), at: start)
                segment.end()
                try stitcher.take(segment) { offset, buffer in
                    let count = max(0, min(buffer.count, tar.count - offset))
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: content[offset ..< offset + count]))
                    read += count
                    return count
                }
            }
        }
        #expect(try stitcher.finish(contentSize: tar.count, path: "a.tar.zst")?.frame.bytes(path: "a.tar.zst")
                    == whole)
        #expect(read <= 2 * tar.count, "\(read) bytes read from a tar of \(tar.count)")
    }
}
