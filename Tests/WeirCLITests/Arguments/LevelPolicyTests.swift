import Testing
import WeirCLI
import WeirFormats

/// The level a run resolves from `-#`, `--fast`, `--ultra` and the default, as zstd's programs do.
@Suite("the level policy")
struct LevelPolicyTests {
    @Test("the level given, the default without one, --fast=N as -N (never past libzstd's fastest)")
    func requested() {
        #expect(LevelPolicy(level: nil, fast: nil, ultra: false).requested == Zstd.defaultLevel)
        #expect(LevelPolicy(level: 7, fast: nil, ultra: false).requested == 7)
        #expect(LevelPolicy(level: 7, fast: 4, ultra: false).requested == -4)
        #expect(LevelPolicy(level: nil, fast: 1 << 30, ultra: false).requested == Zstd.minLevel)
    }

    @Test("a compression clamps to 19 without --ultra and to libzstd's maximum with it, saying so")
    func clamped() {
        let plain = LevelPolicy(level: 22, fast: nil, ultra: false).resolved
        #expect(plain.level == 19)
        #expect(plain.warning == "compression level 22 is above the maximum 19 without --ultra; using 19")
        let ultra = LevelPolicy(level: 99, fast: nil, ultra: true).resolved
        #expect(ultra.level == Zstd.maxLevel)
        #expect(ultra.warning == "compression level 99 is above the maximum \(Zstd.maxLevel); using \(Zstd.maxLevel)")
        #expect(LevelPolicy(level: 19, fast: nil, ultra: false).resolved.warning == nil)
        #expect(LevelPolicy(level: 22, fast: nil, ultra: true).resolved == (22, nil))
    }

    @Test("-b's levels: clamped to libzstd's maximum (not 19), the last never below the first")
    func benchmark() {
        #expect(LevelPolicy(level: 21, fast: nil, ultra: false).benchmarkLevels(last: nil) == 21...21)
        #expect(LevelPolicy(level: 3, fast: nil, ultra: false).benchmarkLevels(last: 99) == 3...Zstd.maxLevel)
        #expect(LevelPolicy(level: 9, fast: nil, ultra: false).benchmarkLevels(last: 1) == 9...9)
        #expect(LevelPolicy(level: nil, fast: 2, ultra: false).benchmarkLevels(last: 1) == -2...1)
    }
}
