import Testing
import Weir
import WeirCLI
import WeirFormats

/// WEIR_CLEVEL and WEIR_NBTHREADS read into the arguments that go before the command line's.
@Suite("environment defaults")
struct EnvironmentDefaultsTests {
    @Test("a level: positive as --level, unclamped (the command clamps it with a warning); negative as --fast",
          arguments: [("7", ["--level", "7"]), ("99", ["--level", "99"]), (" 22\t", ["--level", "22"]),
                      ("+5", ["--level", "5"]), ("-5", ["--fast=5"])])
    func level(text: String, expected: [String]) {
        let defaults = EnvironmentDefaults(environment: ["WEIR_CLEVEL": text])
        #expect(defaults.warnings.isEmpty)
        #expect(defaults.arguments(before: []) == expected)
    }

    @Test("the fastest level is the library's, as --fast=N is clamped; a level flag beats a negative level")
    func fastest() {
        let defaults = EnvironmentDefaults(environment: ["WEIR_CLEVEL": "-1000000"])
        #expect(defaults.level == Zstd.minLevel)
        #expect(defaults.arguments(before: []) == ["--fast=\(-Zstd.minLevel)"])
        #expect(defaults.arguments(before: ["--level", "3"]).isEmpty)
        #expect(defaults.arguments(before: ["--", "--level"]) == ["--fast=\(-Zstd.minLevel)"])
    }

    @Test(
        "what is not a level or a number of threads is ignored, with a warning that names it",
        arguments: [
            ("WEIR_CLEVEL", "abc"), ("WEIR_CLEVEL", "0"), ("WEIR_CLEVEL", "5x"), ("WEIR_CLEVEL", ""),
            ("WEIR_CLEVEL", "99999999999999999999"),
            ("WEIR_CLEVEL", "50000000000"), ("WEIR_CLEVEL", String(Int.min)), ("WEIR_NBTHREADS", "-1"),
            ("WEIR_NBTHREADS", "257"),
            ("WEIR_NBTHREADS", "many"),
        ])
    func invalid(variable: String, text: String) {
        let defaults = EnvironmentDefaults(environment: [variable: text])
        #expect(defaults.level == nil && defaults.threads == nil)
        #expect(defaults.warnings.count == 1)
        #expect(defaults.warnings.first?.hasPrefix("ignoring \(variable)=\(text): not a ") == true)
        #expect(defaults.arguments(before: []).isEmpty)
    }

    @Test("threads: 0 to 256")
    func threads() {
        #expect(EnvironmentDefaults(environment: ["WEIR_NBTHREADS": "0"]).arguments(before: []) == ["--threads", "0"])
        #expect(EnvironmentDefaults(environment: ["WEIR_NBTHREADS": "256"]).threads == 256)
    }
}
