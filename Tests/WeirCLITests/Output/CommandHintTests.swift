import Testing
import Weir
import WeirCLI
import WeirSystem

@Suite("zstd's hints in weir's flags")
struct CommandHintTests {
    @Test("a hint follows the reason as zstd words it")
    func messages() {
        var exists = WeirError(.outputExists, path: "a.zst", operation: .create, reason: "already exists")
        #expect(CommandHint.message(for: exists) == "a.zst: already exists")
        exists.hint = .forceOverwrite
        #expect(CommandHint.message(for: exists) == "a.zst: already exists; use -f to overwrite it")
        #expect(
            CommandHint.message(for: .terminalOutput())
                == "(stdout): stdout is a terminal, aborting: will not write compressed data to it (use -c or -f to "
                    + "force)"
        )
        #expect(CommandHint.message(for: .terminalInput(path: "(stdin)", compressing: true))
                    == "(stdin): stdin is a terminal, aborting (use -f to read it anyway)")
    }

    @Test("the -M suggested is the smallest whole KiB or MiB that holds the window",
          arguments: [(1, "1K"), (1024, "1K"), (1025, "2K"), (500_000, "489K"), (1 << 20, "1024K"),
                      ((1 << 20) + 1, "2M"), (3 << 30, "3072M")] as [(UInt64, String)])
    func windowLimit(bytes: UInt64, argument: String) {
        #expect(CommandHint.text(.windowLimit(log: 19, bytes: bytes), limits: ProcessLimits(onlineCores: 2))
                == " (use --long=19 or -M\(argument))")
    }

    @Test("in a cgroup too small for the window, no -M advice that the kernel would kill, but the limit")
    func windowBeyondTheGroup() {
        let group = ProcessLimits(onlineCores: 2, memoryLimit: 64 << 20)
        // --long=27's window, 128 MiB, in 64 MiB: zstd's advice would be -M128M, and an OOM kill.
        #expect(
            CommandHint.text(.windowLimit(log: 27, bytes: 128 << 20), limits: group)
                == " (that is more than this process's memory limit of 64.00 MiB allows: decode it where more memory "
                    + "is free)"
        )
        // A window that fits beside weir's own memory keeps zstd's advice.
        #expect(CommandHint.text(.windowLimit(log: 25, bytes: 20 << 20), limits: group) == " (use --long=25 or -M20M)")
    }

    @Test("compression past the memory limit: the --long that fits, or none")
    func compressionMemory() {
        #expect(CommandHint.text(.compressionMemory(longWindowLog: 23))
                == " (--long=23 fits; or compress it where more memory is free)")
        #expect(CommandHint.text(.compressionMemory(longWindowLog: nil)) == " (compress it where more memory is free)")
    }

    @Test("every hint the library gives has its own words")
    func everyHint() {
        let texts = WeirError.Hint.every.map { CommandHint.text($0, limits: ProcessLimits(onlineCores: 2)) }
        #expect(!texts.contains(""))
        #expect(Set(texts).count == texts.count)
    }
}
