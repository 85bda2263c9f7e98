import Testing
import WeirCLI

/// The rows of `weir -l`, against lines `zstd -l` (1.5.4) printed for the
/// same numbers.
@Suite("weir -l table")
struct ListTableTests {
    @Test("rows and totals are zstd -l's lines to the character")
    func zstdRows() {
        #expect(ListTable.header == "Frames  Skips  Compressed  Uncompressed  Ratio  Check  Filename")
        #expect(ListTable.row(frames: 164, skips: 1, compressed: 200_105_043, decompressed: 1_361_950_720,
                              check: "XXH64", name: "weir.a.zst")
                == "   164      1     191 MiB      1.27 GiB  6.806  XXH64  weir.a.zst")
        #expect(ListTable.row(frames: 165, skips: 1, compressed: 400_942_939, decompressed: 2_723_901_440,
                              check: "XXH64", name: "2 files")
                == "   165      1     382 MiB      2.54 GiB  6.794  XXH64  2 files")
        // A frame that does not say its size leaves the size and ratio blank.
        #expect(ListTable.row(frames: 1, skips: 0, compressed: 16, decompressed: nil, check: "XXH64", name: "small.zst")
                == "     1      0      16   B                       XXH64  small.zst")
    }

    @Test("human sizes choose zstd's unit and precision")
    func humanSizes() {
        for (size, value, suffix, precision) in [(0, 0.0, " B", Int32(0)), (1023, 1023, " B", 0),
                                                 (1536, 1.5, " KiB", 2), (15 << 20, 15, " MiB", 1),
                                                 (Int(10.5 * 1024 * 1024), 10.5, " MiB", 1)] {
            let human = ListTable.human(size)
            #expect(human.value == value && human.suffix == suffix && human.precision == precision, "\(size)")
        }
    }

    @Test("-v rows: offsets and sizes in bytes, ? for an undeclared size")
    func frameRows() {
        #expect(ListTable.frameHeader(fromSeekTable: true).hasSuffix("Kind  (from the seek table)"))
        #expect(ListTable.frameRow(index: 3, offset: 1234, compressed: 567, decompressed: nil, check: "-", kind: "zstd")
                == "      3          1234         567             ?  -         zstd")
    }

    @Test("-vv's block: sizes in bytes, unscaled, as zstd -vv -l prints them")
    func exactBlock() {
        let block = ListTable.verboseBlock(
            name: "file.19.zst", frames: 1, skips: 0, dictionaryID: 0, windowSize: 8_388_608,
            compressed: 20_666, decompressed: nil, check: "XXH64", checksum: 0xf53a_d43d,
            exact: true)
        // zstd 1.5.4's lines for the same file.
        #expect(block == "file.19.zst \n# Zstandard Frames: 1\nDictID: 0\nWindow Size: 8388608 B (8388608 B)\n"
                + "Compressed Size: 20666 B (20666 B)\nCheck: XXH64 f53ad43d\n")
    }
}
