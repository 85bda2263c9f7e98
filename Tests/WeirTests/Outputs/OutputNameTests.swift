import Testing
@testable import Weir

@Suite("Output names")
struct OutputNameTests {
    @Test func compressed() {
        #expect(OutputName.compressed(for: "a/b.tar") == "a/b.tar.zst")
    }

    @Test func decompressed() throws {
        #expect(try OutputName.decompressed(for: "dir/x.zst") == "dir/x")
        #expect(try OutputName.decompressed(for: "x.zstd") == "x")
        #expect(try OutputName.decompressed(for: "src.tzst") == "src.tar")
        #expect(throws: WeirError.self) { try OutputName.decompressed(for: "x.gz") }
        #expect(throws: WeirError.self) { try OutputName.decompressed(for: "dir.zst/.zst") }
        do {
            _ = try OutputName.decompressed(for: "notes.txt")
        } catch {
            #expect(error.kind == .unknownSuffix)
            #expect(error.description.hasPrefix("notes.txt: unknown suffix"))
            #expect(error.hint == .nameOutput)
        }
    }
}
