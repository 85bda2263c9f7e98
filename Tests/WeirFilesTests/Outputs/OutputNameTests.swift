import Testing
@testable import WeirFiles
@testable import WeirFormats
@testable import WeirSystem

@Suite("Output names")
struct OutputNameTests {
    @Test func compressed() {
        #expect(OutputName.compressed(for: "a/b.tar") == "a/b.tar.zst")
        #expect(OutputName.compressed(for: "a/b.tar", suffix: CompressedFormat.gzip.suffix) == "a/b.tar.gz")
    }

    @Test func decompressed() throws {
        #expect(try OutputName.decompressed(for: "dir/x.zst") == "dir/x")
        #expect(try OutputName.decompressed(for: "x.zstd") == "x")
        // zstd 1.5.4's other suffixes, a tar's short ones giving .tar.
        for (input, output) in [("x.gz", "x"), ("x.tgz", "x.tar"), ("x.xz", "x"), ("x.txz", "x.tar"),
                                ("x.lzma", "x"), ("x.lz4", "x"), ("x.tlz4", "x.tar")] {
            #expect(try OutputName.decompressed(for: input) == output)
        }
        #expect(try OutputName.decompressed(for: "src.tzst") == "src.tar")
        #expect(throws: WeirError.self) { try OutputName.decompressed(for: "x.bz2") }
        #expect(throws: WeirError.self) { try OutputName.decompressed(for: "dir.zst/.zst") }
        do {
            _ = try OutputName.decompressed(for: "notes.txt")
        } catch {
            #expect(error.kind == .unknownSuffix)
            #expect(error.description.hasPrefix("notes.txt: unknown suffix"))
            #expect(error.hint == .nameOutput)
        }
    }

    @Test("output names keep the bytes and look at scalars, not characters")
    func outputNames() throws {
        let name = FileName.string(fromBytes: [0x61, 0xFF] + Array(".tzst".utf8))
        #expect(FileName.bytes(of: try OutputName.decompressed(for: name)) == [0x61, 0xFF] + Array(".tar".utf8))
        #expect(FileName.bytes(of: OutputName.compressed(for: name)) == [0x61, 0xFF] + Array(".tzst.zst".utf8))
        // U+0600 joins the dot that follows into one Character.
        #expect(try OutputName.decompressed(for: "\u{600}.zst") == "\u{600}")
        #expect(throws: WeirError.self) { try OutputName.decompressed(for: "dir/.zst") }
    }
}
