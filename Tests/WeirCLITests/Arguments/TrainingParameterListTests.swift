import Testing
import Weir
import WeirCLI
import WeirFormats

/// The lists of --train-cover=, --train-fastcover= and --train-legacy=, read
/// as zstd 1.5.4's parseCoverParameters, parseFastCoverParameters and
/// parseLegacyParameters read them.
@Suite("training parameter lists")
struct TrainingParameterListTests {
    typealias Parameters = DictionaryBuilder.Parameters

    @Test("cover: k, d, steps, split and shrink, in any order; the keys not named are 0")
    func cover() {
        #expect(TrainingParameterList.cover("k=48,d=8,steps=32") == Parameters(k: 48, d: 8, steps: 32))
        #expect(TrainingParameterList.cover("split=80,k=1K") == Parameters(k: 1024, split: 80))
        #expect(TrainingParameterList.cover("d=8,d=6") == Parameters(d: 6), "a later pair wins")
        #expect(TrainingParameterList.cover("k=0") == Parameters(), "what a lone --train-cover stands for")
        #expect(TrainingParameterList.cover("k=") == Parameters(), "no digits read as 0, as zstd")
    }

    @Test("shrink alone allows 1% of regression; shrink=N allows N")
    func shrink() {
        #expect(TrainingParameterList.fastCover("steps=1,shrink") == Parameters(steps: 1, shrink: 1))
        #expect(TrainingParameterList.fastCover("shrink=5,steps=1") == Parameters(steps: 1, shrink: 5))
        #expect(TrainingParameterList.cover("shrink=0") == Parameters(shrink: 0))
        #expect(TrainingParameterList.cover("shrinkage") == nil)
    }

    @Test("fastCover adds f and accel; the numbers are parsed, not bounded (libzstd refuses accel=15)")
    func fastCover() {
        #expect(TrainingParameterList.fastCover("k=46,d=8,f=15,split=80")
                == Parameters(k: 46, d: 8, f: 15, split: 80))
        #expect(TrainingParameterList.fastCover("k=56,d=8,accel=15") == Parameters(k: 56, d: 8, accel: 15))
        #expect(TrainingParameterList.fastCover("f=2MiB") == Parameters(f: 2 << 20))
        #expect(TrainingParameterList.cover("f=20") == nil, "f is fastCover's")
        #expect(TrainingParameterList.cover("accel=2") == nil, "accel is fastCover's")
    }

    @Test("refused, as zstd refuses them", arguments: ["", "k", "k=1,", ",k=1", "k=1;d=2", "x=1", "k=1x", "k=-1",
                                                     "K=1", "k=4294967296", "k=4194304K", "k=4096M", "k=1,,d=2"])
    func refused(list: String) {
        #expect(TrainingParameterList.cover(list) == nil)
        #expect(TrainingParameterList.fastCover(list) == nil)
    }

    @Test("legacy: s=N or selectivity=N, nothing else")
    func legacy() {
        #expect(TrainingParameterList.legacy("s=8") == 8)
        #expect(TrainingParameterList.legacy("selectivity=5") == 5)
        #expect(TrainingParameterList.legacy("s=") == 0)
        #expect(TrainingParameterList.legacy("s=4294967295") == UInt32.max)
        for refused in ["", "8", "s8", "s=8,", "s=8x", "sel=8", "s=4294967296", "k=1"] {
            #expect(TrainingParameterList.legacy(refused) == nil, "\(refused)")
        }
    }

    @Test("after a search, zstd's lines of what it chose")
    func chosen() {
        #expect(TrainingParameterList.chosen(.fastCover(Parameters(k: 537, d: 8, f: 20, steps: 4, split: 75, accel: 1)))
                == "k=537\nd=8\nf=20\nsteps=4\nsplit=75\naccel=1\n")
        #expect(TrainingParameterList.chosen(.cover(Parameters(k: 770, d: 6, steps: 40, split: 100)))
                == "k=770\nd=6\nsteps=40\nsplit=100\n")
        #expect(TrainingParameterList.chosen(.legacy(selectivity: 9)) == "")
    }
}
