import Testing
import WeirFiles

/// The names `--exclude-compressed` skips, as zstd 1.5.4 reads them.
@Suite("Compressed names")
struct CompressedNameTests {
    @Test("zstd's extensions match, anywhere in a path", arguments: ["a.zst", "a.tar.tzst", "x/y.gz", "b.tgz", "c.lzma",
                                                                    "d.xz", "e.txz", "f.lz4", "g.tlz4", "dir/.gz"])
    func matches(name: String) {
        #expect(CompressedName.matches(name))
    }

    @Test("other names do not: other case, other suffix, a dot only in a folder, a bare extension",
          arguments: ["a.GZ", "a.zstd", "a.gz.bak", "a.bz2", "a.gz/b", ".gz", "plain", "a.zip"])
    func others(name: String) {
        #expect(!CompressedName.matches(name))
    }
}
