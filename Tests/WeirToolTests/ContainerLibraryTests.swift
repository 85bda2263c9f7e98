import Foundation
import Testing

/// The library in a container: a program of a user's (Examples/WeirExample,
/// `Compressor` and `Decompressor` with their defaults) gets the workers and
/// chunks the `weir` command gets, planned by the engine from the cgroup's
/// memory limit (ContainerCommandTests has the command's side).
@Suite("the library in a container", .serialized)
struct ContainerLibraryTests {
    /// The example, built beside the test bundle as `weir` is.
    static var example: String { WeirProcess.builtProduct("WeirExample") }

    @Test("128 MiB, level 19, no worker count given: one worker on smaller chunks, and the round trip holds")
    func memoryLimit() throws {
        let scratch = Scratch()
        // As weir -19's (ContainerCommandTests): more than three of the
        // limit's frames, random bytes that touch every page of the tables.
        let original = try ContainerCommandTests.framedMemoryInput(in: scratch)
        let group = try TestCgroup(controller: "memory")
        try group.limitMemory(128 << 20)
        let run = try WeirProcess.shell(group.command("'\(Self.example)' in 19"), in: scratch.url, timeout: 600)
        // Killed by the OOM killer, the shell would say 137.
        #expect(run.status == 0, "\(run.stderr)")
        let lines = String(decoding: run.stdout, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 2, "\(lines)")
        // As `weir -19` in the same group (ContainerCommandTests): one worker,
        // its 64 MiB chunk halved below the 8 MiB default to fit.
        let compressed = lines.first.map(String.init) ?? ""
        #expect(compressed.contains(", 1 threads,"), "\(compressed)")
        let chunk =
            compressed.components(separatedBy: "chunk ").last?.split(separator: ",").first.flatMap { Int($0) } ?? 0
        #expect(chunk > 0 && chunk < 8 << 20, "\(compressed)")
        // Decoding in the group too (its workers fit: frames of 4 MiB).
        #expect(scratch.data("in.out") == original)
        // Outside the group, the real zstd decodes what the library wrote.
        #expect(try scratch.zstd(["-q", "-dc", "in.zst"]).stdout == original)
    }
}
