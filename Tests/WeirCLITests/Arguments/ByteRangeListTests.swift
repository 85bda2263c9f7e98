import Testing
import WeirCLI

/// `--range=LIST`, parsed.
@Suite("byte range lists")
struct ByteRangeListTests {
    @Test("START:END, START:+LENGTH, START:, :END, with size suffixes, comma-separated")
    func valid() throws {
        let list = try #require(ByteRangeList("10:20,1G:+1M,5K:,:3,7:7"))
        #expect(list.ranges(size: 2 << 30) == [10 ..< 20, (1 << 30) ..< (1 << 30) + (1 << 20), 5120 ..< (2 << 30),
                                               0 ..< 3, 7 ..< 7])
        #expect(!list.isAscending)
        #expect(ByteRangeList("0:10,10:+5,100:")?.isAscending == true)
        #expect(ByteRangeList("0:,5:6")?.isAscending == false)
        #expect(ByteRangeList("2MiB:+1KB")?.ranges(size: 0) == [(2 << 20) ..< (2 << 20) + 1024])
    }

    @Test(
        "refused: no colon, an end before its start, unknown suffixes, overflow, empty parts",
        arguments: ["", "10", "20:10", "1X:2", "a:b", "9223372036854775807:+1", "99999999999T:", "1:2,", ",1:2", "1:+"])
    func invalid(text: String) {
        #expect(ByteRangeList(text) == nil, "\(text)")
    }
}
