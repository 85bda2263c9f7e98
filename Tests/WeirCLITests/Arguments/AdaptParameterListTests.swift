import Testing
import Weir
import WeirCLI

/// `--adapt=LIST` as zstd 1.5.4's parseAdaptParameters reads it, and what
/// -v says of a level change.
@Suite("--adapt lists and level lines")
struct AdaptParameterListTests {
    let all = -131072...22

    @Test("min and max, in any order, a later one winning; the other bound stays")
    func bounds() {
        #expect(AdaptParameterList.parse("min=1,max=19", over: all) == 1...19)
        #expect(AdaptParameterList.parse("max=5", over: all) == -131072...5)
        #expect(AdaptParameterList.parse("min=-3", over: 1...19) == -3...19)
        #expect(AdaptParameterList.parse("max=9,min=2,max=7", over: all) == 2...7)
        #expect(AdaptParameterList.parse("min=,max=4", over: all) == 0...4, "no digits read as 0, as zstd")
    }

    @Test("anything else, trailing text and min above max are refused, as zstd's bad usage")
    func refused() {
        for list in ["", "min", "min=1,", "min=1x", "level=3", "min=5,max=2", "max=1,min=4", "min=99999999999"] {
            #expect(AdaptParameterList.parse(list, over: all) == nil, "\(list)")
        }
    }

    @Test("-v's line names both levels, the input offset and the time; -vvvv adds zstd's words")
    func lines() {
        let up = LevelChange(from: 3, to: 4, inputOffset: 24 << 20, seconds: 0.4213)
        #expect(LevelChangeLine.text(up) == "--adapt: level 3 → 4 at 24.00 MiB (0.42 s)")
        #expect(LevelChangeLine.zstdText(up) == "slower speed , higher compression")
        let down = LevelChange(from: 1, to: -1, inputOffset: 0, seconds: 2)
        #expect(LevelChangeLine.zstdText(down) == "faster speed , lighter compression")
    }
}
