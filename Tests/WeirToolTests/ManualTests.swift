import Foundation
import Testing

/// The documentation a shell user sees: --help, --version, the man page and
/// the completion scripts, which must all know every flag.
@Suite("help, man page and completions")
struct ManualTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The help text, as a user without a terminal sees it.
    static func help() throws -> String {
        let result = try WeirProcess.run(["--help"], in: root)
        #expect(result.status == 0)
        return String(decoding: result.stdout, as: UTF8.self)
    }

    /// Every flag the help lists, `-z` and `--compress` alike.
    static func flags() throws -> [String] {
        var flags: Set<String> = []
        // An option line starts with its names: "  -T, --threads <N>   Worker…",
        // "  --check/--no-check   Write…".
        for line in try help().split(separator: "\n") where line.hasPrefix("  -") {
            let words = line.split(separator: " ")
            for word in words.prefix(while: { $0.hasPrefix("-") || $0.hasPrefix("<") }) where word.hasPrefix("-") {
                for flag in word.split(separator: "/") {
                    flags.insert(String(flag.trimmingCharacters(in: CharacterSet(charactersIn: ","))))
                }
            }
        }
        return flags.sorted()
    }

    @Test("--help lists every flag, in groups, within 80 columns")
    func help() throws {
        let text = try Self.help()
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            #expect(line.count <= 80, "too wide: \(line)")
        }
        for group in ["OPERATION:", "OUTPUT:", "COMPRESSION:", "DECOMPRESSION:", "THREADS, CHECKSUMS AND MEMORY:",
                      "MESSAGES:"] {
            #expect(text.contains("\n\(group)\n"), "no \(group) group")
        }
        let flags = try Self.flags()
        for flag in ["-z", "--compress", "-d", "-t", "-l", "-c", "-o", "-f", "-k", "--rm", "--ultra", "--fast", "-T",
                     "--threads", "--chunk-size", "--check", "--no-check", "--no-seek-table", "-M", "--memory",
                     "-q", "-v", "-V", "--version", "-h", "--help",
                     // zstd's that scripts reach for (issue 16).
                     "-C", "-H", "--pass-through", "--no-pass-through", "--sparse", "--no-sparse", "--single-thread",
                     "--auto-threads", "--content-size", "--no-content-size", "--stream-size", "--memlimit",
                     "--memlimit-decompress", "--exclude-compressed",
                     "-r", "--recursive", "--output-dir-flat", "--output-dir-mirror", "--filelist"] {
            #expect(flags.contains(flag), "\(flag) is not in --help")
        }
        #expect(text.contains("WEIR_CLEVEL"))
        #expect(text.contains("WEIR_NBTHREADS"))
        #expect(!text.contains("ByteCount("))
    }

    @Test("--version names weir's version, libzstd's, and jemalloc's when it serves the memory")
    func version() throws {
        let result = try WeirProcess.run(["--version"], in: Self.root)
        let text = String(decoding: result.stdout, as: UTF8.self)
        #expect(result.status == 0)
        // Release builds link jemalloc; scripts/test says so when it runs
        // these tests against the release binary (debug builds, run under
        // the sanitizers, do not link it).
        let jemalloc = ProcessInfo.processInfo.environment["WEIR_ALLOCATOR"] == "jemalloc"
        let allocator = jemalloc ? #", jemalloc \d+\.\d+\.\d+"# : ""
        #expect(text.range(of: #"^weir \d+\.\d+\.\d+ \(libzstd \d+\.\d+\.\d+"# + allocator + #"\)\n$"#,
                           options: .regularExpression) != nil, "\(text)")
    }

    @Test("jemalloc runs with weir's settings, which it reads from the executable by name")
    func allocatorSettings() throws {
        guard ProcessInfo.processInfo.environment["WEIR_ALLOCATOR"] == "jemalloc" else { return }
        // stats_print adds to the settings CAllocator gives (malloc_conf):
        // the table jemalloc prints at exit shows the ones in force.
        let result = try WeirProcess.run(["--version"], in: Self.root, environment: ["MALLOC_CONF": "stats_print:true"])
        for setting in [
            "opt.narenas: 1\n", "opt.tcache: false\n", "opt.oversize_threshold: 0\n", "opt.dirty_decay_ms: -1 ",
        ] {
            #expect(result.stderr.contains(setting), "\(setting) not in force")
        }
    }

    @Test("the man page documents every flag, the environment, exit statuses and examples")
    func manPage() throws {
        let page = try String(contentsOf: Self.root.appendingPathComponent("docs/weir.1"), encoding: .utf8)
        for flag in try Self.flags() {
            // mdoc: -z is "Fl z"; --compress is "Fl -compress", or "Fl z , -compress".
            let name = NSRegularExpression.escapedPattern(for: String(flag.dropFirst()))
            let pattern = flag.hasPrefix("--") ? #"(Fl |, )\#(name)(\s|,|$)"# : #"Fl \#(name)(\s|,|$)"#
            #expect(page.range(of: pattern, options: .regularExpression) != nil, "\(flag) is not in docs/weir.1")
        }
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "ENVIRONMENT", "EXIT STATUS", "EXAMPLES"] {
            #expect(page.contains("\n.Sh \(section)\n"), "no \(section) section")
        }
        for word in ["WEIR_CLEVEL", "WEIR_NBTHREADS", "unweir", "weircat", "128+"] {
            #expect(page.contains(word), "docs/weir.1 does not mention \(word)")
        }
        // --progress=json: every key a record has (ProgressJSONCommandTests reads them from a run).
        let progress = try #require(page.range(of: "\n.Sh PROGRESS FOR PROGRAMS\n"), "no PROGRESS FOR PROGRAMS section")
        let section = page[progress.upperBound...].components(separatedBy: "\n.Sh ").first ?? ""
        for key in ProgressJSONCommandTests.keys + ProgressJSONCommandTests.messageKeys {
            #expect(section.contains(".Dq \(key)"), "man weir does not list the --progress=json key \(key)")
        }
    }

    @Test("completion scripts are generated for bash, zsh and fish, with every flag",
          arguments: ["bash", "zsh", "fish"])
    func completions(shell: String) throws {
        let result = try WeirProcess.run(["--generate-completion-script", shell], in: Self.root)
        #expect(result.status == 0, "\(result.stderr)")
        let script = String(decoding: result.stdout, as: UTF8.self)
        #expect(script.count > 500)
        for flag in try Self.flags() {
            let found: Bool
            if shell == "fish" {
                found =
                    flag.hasPrefix("--")
                    ? script.contains("-l '\(flag.dropFirst(2))'") : script.contains("-s '\(flag.dropFirst())'")
            } else {
                found = script.contains(flag)
            }
            #expect(found, "\(flag) is not in the \(shell) completions")
        }
    }
}
