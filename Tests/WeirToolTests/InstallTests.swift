import Foundation
import Testing

/// scripts/install and scripts/uninstall into a temporary PREFIX, and the
/// aliases unweir and weircat acting by the name they are called by.
@Suite("install, uninstall and aliases")
struct InstallTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every path under `folder`, relative to it, sorted.
    static func tree(_ folder: URL) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: folder.path)
        var paths: [String] = []
        while let path = enumerator?.nextObject() as? String { paths.append(path) }
        return paths.sorted()
    }

    @Test("install puts everything in place; unweir and weircat act by name; uninstall removes exactly that")
    func installAndUninstall() throws {
        let prefix = Scratch()
        let work = Scratch()
        let script = Self.root.appendingPathComponent("scripts").path
        // A file of someone else's, already there: uninstall must leave it.
        try FileManager.default.createDirectory(atPath: prefix.path("bin"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: prefix.path("bin/other"), contents: Data("#!/bin/sh\n".utf8))

        let install = try WeirProcess.run(["\(script)/install", "--binary", WeirProcess.binary, prefix.url.path],
                                          in: work.url, executable: "/bin/bash")
        #expect(install.status == 0, "\(install.stderr)")
        let installed = Self.tree(prefix.url)
        for path in ["bin/weir", "bin/unweir", "bin/weircat", "share/man/man1/weir.1", "share/man/man1/unweir.1",
                     "share/man/man1/weircat.1", "share/bash-completion/completions/weir",
                     "share/bash-completion/completions/unweir", "share/zsh/site-functions/_weir",
                     "share/fish/vendor_completions.d/weir.fish", "share/fish/vendor_completions.d/unweir.fish",
                     "share/weir/install-manifest"] {
            #expect(installed.contains(path), "\(path) is missing")
        }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: prefix.path("bin/unweir")) == "weir")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: prefix.path("bin/weircat")) == "weir")
        #expect(FileManager.default.contents(atPath: prefix.path("share/man/man1/weir.1"))
                == FileManager.default.contents(atPath: Self.root.appendingPathComponent("docs/weir.1").path))
        let zsh = try String(contentsOfFile: prefix.path("share/zsh/site-functions/_weir"), encoding: .utf8)
        #expect(zsh.hasPrefix("#compdef weir unweir weircat\n"))

        // The aliases, run from the installed links.
        let original = work.text("notes.txt", size: 500_000)
        let weir = try WeirProcess.run(["-q", "notes.txt"], in: work.url, executable: prefix.path("bin/weir"))
        #expect(weir.status == 0, "\(weir.stderr)")
        try FileManager.default.removeItem(atPath: work.path("notes.txt"))
        let cat = try WeirProcess.run(["-q", "notes.txt.zst"], in: work.url, executable: prefix.path("bin/weircat"))
        #expect(cat.status == 0, "\(cat.stderr)")
        #expect(cat.stdout == original)
        #expect(!work.exists("notes.txt"))
        let un = try WeirProcess.run(["-q", "notes.txt.zst"], in: work.url, executable: prefix.path("bin/unweir"))
        #expect(un.status == 0, "\(un.stderr)")
        #expect(work.data("notes.txt") == original)
        #expect(work.exists("notes.txt.zst"))  // kept, as weir -d keeps it
        // Flags still work after the alias's own: unweir -c is weir -d -c.
        let unc = try WeirProcess.run(["-c", "notes.txt.zst"], in: work.url, executable: prefix.path("bin/unweir"))
        #expect(unc.stdout == original)
        let version = try WeirProcess.run(["--version"], in: work.url, executable: prefix.path("bin/weircat"))
        #expect(version.stdout.starts(with: Data("weir ".utf8)))

        // Installing again replaces the earlier install.
        let again = try WeirProcess.run(["\(script)/install", "--binary", WeirProcess.binary, prefix.url.path],
                                        in: work.url, executable: "/bin/bash")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(Self.tree(prefix.url) == installed)

        let uninstall = try WeirProcess.run(
            ["\(script)/uninstall", prefix.url.path], in: work.url, executable: "/bin/bash")
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        #expect(Self.tree(prefix.url) == ["bin", "bin/other"])

        let twice = try WeirProcess.run(["\(script)/uninstall", prefix.url.path], in: work.url, executable: "/bin/bash")
        #expect(twice.status != 0)
        #expect(twice.stderr.contains("no weir install"))
    }

    @Test("a link of another name is plain weir")
    func otherNames() throws {
        let work = Scratch()
        let original = work.text("notes.txt", size: 10_000)
        try FileManager.default.createSymbolicLink(atPath: work.path("zip-it"), withDestinationPath: WeirProcess.binary)
        let result = try WeirProcess.run(["-q", "notes.txt"], in: work.url, executable: work.path("zip-it"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(work.exists("notes.txt.zst"))
        #expect(work.data("notes.txt") == original)
    }

    /// The run-time packages, from the one list scripts/package checks the .deb's Depends against.
    static func runtimePackages() throws -> [String] {
        let list = try String(contentsOfFile: root.appendingPathComponent("scripts/package.d/runtime-packages").path,
                              encoding: .utf8)
        return list.split(separator: "\n").map(String.init).filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    @Test("README's Install section and install.sh name exactly the run-time packages of the one list")
    func runtimePackagesAreOneList() throws {
        let packages = try Self.runtimePackages()
        #expect(packages.contains("libzstd1") && packages.contains("libjemalloc2"))
        let readme = try String(contentsOfFile: Self.root.appendingPathComponent("README.md").path, encoding: .utf8)
        let install = try #require(readme.components(separatedBy: "## Install").dropFirst().first?
            .components(separatedBy: "\n## ").first)
        let named = Set(
            install.components(separatedBy: "`").enumerated()
                .filter {
                    $0.offset % 2 == 1 && $0.element.hasPrefix("lib") || $0.offset % 2 == 1 && $0.element == "zlib1g"
                }
                .map(\.element))
        #expect(named == Set(packages), "README's Install section names \(named.sorted())")
        let script = try String(contentsOfFile: Self.root.appendingPathComponent("scripts/package.d/install.sh").path,
                                encoding: .utf8)
        let lines = script.split(separator: "\n").filter { $0.contains("apt-get install") }
        #expect(!lines.isEmpty)
        for line in lines {
            let words = Set(line.components(separatedBy: "apt-get install ")[1]
                .split(whereSeparator: { " `()".contains($0) }).map(String.init)
                .filter { $0.hasPrefix("lib") || $0 == "zlib1g" })
            #expect(words == Set(packages), "install.sh: \(line)")
        }
    }
}
