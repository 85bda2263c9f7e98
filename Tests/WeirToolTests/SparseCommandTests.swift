import Foundation
import Testing
import Glibc

/// `--sparse` / `--no-sparse`: runs of zeros in decompressed output become
/// holes in a file, as zstd makes them.
@Suite("weir sparse output")
struct SparseCommandTests {
    /// The 512-byte blocks allocated to `name`, and its size.
    static func allocation(_ scratch: Scratch, _ name: String) -> (blocks: Int, size: Int) {
        var info = stat()
        guard stat(scratch.path(name), &info) == 0 else { return (-1, -1) }
        return (Int(info.st_blocks), Int(info.st_size))
    }

    /// A 12 MiB image: 3 MiB of zeros, 1 MiB of text, 4 MiB of zeros, 64 KiB
    /// of text, then zeros to the end (a trailing hole), compressed by zstd.
    static func image(in scratch: Scratch) throws -> Data {
        var image = Data(count: 12 << 20)
        let text = scratch.text("text", size: 1 << 20, seed: 9)
        image.replaceSubrange((3 << 20)..<(4 << 20), with: text)
        image.replaceSubrange((8 << 20)..<((8 << 20) + (64 << 10)), with: text.prefix(64 << 10))
        _ = FileManager.default.createFile(atPath: scratch.path("image"), contents: image)
        try scratch.zstd(["-q", "image", "-o", "image.zst"])
        return image
    }

    @Test("to a file, weir -d leaves holes as zstd -d does: same bytes, same size, fewer blocks than --no-sparse")
    func holes() throws {
        let scratch = Scratch()
        let image = try Self.image(in: scratch)
        for (arguments, name) in [(["-d", "image.zst", "-o", "sparse"], "sparse"),
                                  (["-d", "--no-sparse", "image.zst", "-o", "dense"], "dense"),
                                  (["-d", "--sparse", "-T1", "image.zst", "-o", "sparse1"], "sparse1")] {
            let run = try WeirProcess.run(["-q"] + arguments, in: scratch.url)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            #expect(scratch.data(name) == image, "\(name)")
        }
        try scratch.zstd(["-q", "-d", "image.zst", "-o", "stock"])
        let sparse = Self.allocation(scratch, "sparse"), dense = Self.allocation(scratch, "dense")
        let stock = Self.allocation(scratch, "stock")
        #expect(sparse.size == image.count)
        #expect(Self.allocation(scratch, "sparse1").blocks == sparse.blocks)
        // The data is 1 MiB + 64 KiB: 2,176 blocks of 512 bytes; the image 24,576.
        #expect(dense.blocks >= 24_576)
        #expect(sparse.blocks < 4_000, "sparse: \(sparse.blocks) blocks")
        #expect(sparse.blocks <= stock.blocks, "weir \(sparse.blocks) blocks, zstd \(stock.blocks)")
    }

    @Test("standard output is written densely unless --sparse asks, and is then sparse in a regular file")
    func standardOutput() throws {
        let scratch = Scratch()
        let image = try Self.image(in: scratch)
        try WeirProcess.run(["-dc", "image.zst"], in: scratch.url, stdoutPath: "plain")
        try WeirProcess.run(["-dc", "--sparse", "image.zst"], in: scratch.url, stdoutPath: "asked")
        #expect(scratch.data("plain") == image)
        #expect(scratch.data("asked") == image)
        #expect(Self.allocation(scratch, "plain").blocks >= 24_576)
        #expect(Self.allocation(scratch, "asked").blocks < 4_000)
    }

    @Test("pass-through output is sparse too, and an input of zeros only becomes one hole of the right size")
    func passThroughAndAllZeros() throws {
        let scratch = Scratch()
        _ = FileManager.default.createFile(atPath: scratch.path("zeros"), contents: Data(count: 5 << 20))
        let copied = try WeirProcess.run(["-q", "-d", "--pass-through", "zeros", "-o", "copy"], in: scratch.url)
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect(Self.allocation(scratch, "copy").blocks == 0)
        #expect(Self.allocation(scratch, "copy").size == 5 << 20)
        try WeirProcess.run(["-q", "zeros", "-o", "zeros.zst"], in: scratch.url)
        let decoded = try WeirProcess.run(["-q", "-d", "zeros.zst", "-o", "back"], in: scratch.url)
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(Self.allocation(scratch, "back").blocks == 0)
        #expect(Self.allocation(scratch, "back").size == 5 << 20)
        #expect(scratch.data("back") == Data(count: 5 << 20))
    }
}
