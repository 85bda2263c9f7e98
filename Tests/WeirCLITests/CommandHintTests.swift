import Testing
import Weir
import WeirCLI

@Suite("zstd's hints in weir's flags")
struct CommandHintTests {
    @Test("a hint follows the reason as zstd words it")
    func messages() {
        var exists = WeirError(.outputExists, path: "a.zst", operation: .create, reason: "already exists")
        #expect(CommandHint.message(for: exists) == "a.zst: already exists")
        exists.hint = .forceOverwrite
        #expect(CommandHint.message(for: exists) == "a.zst: already exists; use -f to overwrite it")
        #expect(CommandHint.message(for: .terminalOutput())
                    == "(stdout): stdout is a terminal, aborting: will not write compressed data to it (use -c or -f to force)")
        #expect(CommandHint.message(for: .terminalInput(path: "(stdin)", compressing: true))
                    == "(stdin): stdin is a terminal, aborting (use -f to read it anyway)")
    }

    @Test("the -M suggested is the smallest whole KiB or MiB that holds the window",
          arguments: [(1, "1K"), (1024, "1K"), (1025, "2K"), (500_000, "489K"), (1 << 20, "1024K"),
                      ((1 << 20) + 1, "2M"), (3 << 30, "3072M")] as [(UInt64, String)])
    func windowLimit(bytes: UInt64, argument: String) {
        #expect(CommandHint.text(.windowLimit(log: 19, bytes: bytes)) == " (use --long=19 or -M\(argument))")
    }
}
