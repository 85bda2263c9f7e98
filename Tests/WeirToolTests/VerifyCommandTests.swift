import Foundation
import Testing

/// `--verify`: every frame decoded and compared with its input before it is
/// written. WEIR_TEST_DAMAGE_FRAME=N flips one bit of frame N after it is
/// compressed (only with --verify), as a bad memory cell would.
@Suite("weir --verify")
struct VerifyCommandTests {
    @Test("a verified output is the plain output, byte for byte, and stock zstd decodes it (file, pipe, -r)")
    func verifiedOutput() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 3_500_000)
        #expect(try WeirProcess.run(["-B1M", "in", "-o", "plain.zst"], in: scratch.url).status == 0)
        let verified = try WeirProcess.run(["-B1M", "--verify", "in", "-o", "verified.zst"], in: scratch.url)
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(scratch.data("verified.zst") == scratch.data("plain.zst"))
        #expect(try scratch.zstd(["-dc", "verified.zst"]).stdout == original)
        let piped = try WeirProcess.shell("cat in | $WEIR -B1M --verify -c > piped.zst", in: scratch.url)
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(scratch.data("piped.zst") == scratch.data("plain.zst"))
        try FileManager.default.createDirectory(atPath: scratch.path("tree"), withIntermediateDirectories: false)
        for size in [0, 1, 70_000] { scratch.text("tree/f\(size)", size: size, seed: UInt64(size)) }
        let tree = try WeirProcess.run(["-r", "--verify", "-q", "tree"], in: scratch.url)
        #expect(tree.status == 0, "\(tree.stderr)")
        for size in [0, 1, 70_000] {
            #expect(try scratch.zstd(["-dc", "tree/f\(size).zst"]).stdout == scratch.data("tree/f\(size)"))
        }
    }

    @Test("a flipped bit fails the file with the frame's offset: nothing under the output's name, --rm keeps the input")
    func flippedBit() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 3_500_000)
        let run = try WeirProcess.run(["-B1M", "--verify", "--rm", "in"], in: scratch.url,
                                      environment: ["WEIR_TEST_DAMAGE_FRAME": "2"])
        #expect(run.status == 1)
        #expect(
            run.stderr.contains("weir: in: verify failed: frame 2 (input offset 2097152) does not decode to its input"),
            "\(run.stderr)")
        #expect(scratch.names == ["in"], "\(scratch.names)")
        #expect(scratch.data("in") == original)
        // Through a pipe: the run fails, and frame 2 never reaches the output.
        let piped = try WeirProcess.shell("cat in | WEIR_TEST_DAMAGE_FRAME=2 $WEIR -B1M --verify -c > out.zst",
                                          in: scratch.url)
        #expect(piped.status == 1)
        #expect(piped.stderr.contains("(stdin): verify failed: frame 2"), "\(piped.stderr)")
        let written = try scratch.zstd(["-dc", "out.zst"])
        #expect(original.starts(with: written.stdout) && written.stdout.count <= 2 << 20)
    }

    @Test("small files of -r are checked too; each that fails is left as it was")
    func smallFiles() throws {
        let scratch = Scratch()
        try FileManager.default.createDirectory(atPath: scratch.path("tree"), withIntermediateDirectories: false)
        for name in ["a", "b"] { scratch.text("tree/\(name)", size: 50_000, seed: name == "a" ? 1 : 2) }
        let run = try WeirProcess.run(["-r", "--verify", "--rm", "tree"], in: scratch.url,
                                      environment: ["WEIR_TEST_DAMAGE_FRAME": "0"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("tree/a: verify failed: frame 0") && run.stderr.contains("tree/b: verify failed"),
                "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("tree")).sorted() == ["a", "b"])
    }

    @Test("the test hook does nothing without --verify; --verify goes with checksums and data, not -l or --no-check -d")
    func scope() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 3_000_000)
        let run = try WeirProcess.run(["-B1M", "in"], in: scratch.url, environment: ["WEIR_TEST_DAMAGE_FRAME": "1"])
        #expect(run.status == 0)
        #expect(try scratch.zstd(["-dc", "in.zst"]).stdout == original)
        #expect(try WeirProcess.run(["-d", "--verify", "-c", "in.zst"], in: scratch.url).stdout == original)
        for refused in [["-d", "--verify", "--no-check", "in.zst"], ["-l", "--verify", "in.zst"]] {
            let refusal = try WeirProcess.run(refused, in: scratch.url)
            #expect(refusal.status == 1 && refusal.stderr.contains("--verify"), "\(refused): \(refusal.stderr)")
        }
    }
}
