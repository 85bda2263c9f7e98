import Foundation
import Testing

/// Memory stays flat whatever the input's size (README's promise, R3), on
/// every kind of input weir treats differently: a stream compressed, a tar
/// compressed with its member index, weir's own file decoded, and one frame
/// from `zstd` with and without its size in the header. Each runs on 64 MB
/// (past the first frames, where the pipeline fills: 16 MB peaked 10 MiB
/// lower) and on four times that, streamed through a pipe where weir takes
/// one (no input file to map), and its peak RSS (KiB, `/usr/bin/time -f %M`)
/// on the larger may pass the smaller's by at most `marginKiB`: memory that
/// grew with the input (a frame held whole, an index kept in memory, buffers
/// not handed back) shows as tens of MiB here; a 96 MB frame from
/// `zstd FILE` held whole, as weir did before issue 81, peaked at 122 MiB
/// against 32 MiB for 16 MB. Every output is checked against its input,
/// byte for byte.
@Suite("Memory flat with the input's size")
struct FlatMemoryCommandTests {
    /// The text every input is made of, `copies` times over.
    static let unit = 16_000_000
    static let copies = (small: 4, large: 16)
    /// The most the larger run's peak may pass the smaller's: the same run
    /// peaked up to 2.4 MiB apart from one time to the next (the threads'
    /// timing, jemalloc's), and 1 GB of weir's file 2.2 MiB above 64 MB.
    static let marginKiB = 6 << 10

    /// Runs `line` (with $T the timer, $N the copies) for the small and the
    /// large number of copies; returns the two peaks in KiB after checking
    /// each run's status.
    static func peaks(_ name: String, _ line: String, _ scratch: Scratch) throws -> (small: Int, large: Int) {
        var peaks: [Int] = []
        for copies in [copies.small, copies.large] {
            let command = "set -o pipefail; rm -f weir.rss; T='/usr/bin/time -f %M -o weir.rss'; N=\(copies); " + line
            let run = try WeirProcess.shell(command, in: scratch.url, timeout: 300)
            #expect(run.status == 0, "\(name) ×\(copies): \(run.status) \(run.stderr)")
            peaks.append(try OneFrameCommandTests.peak("weir.rss", scratch))
        }
        return (peaks[0], peaks[1])
    }

    @Test("peak RSS on 256 MB within 6 MiB of 64 MB's: a stream, a tar, weir's file, zstd's frame sized or not",
          arguments: ["stream", "tar", "weirFile", "zstdSized", "zstdUnsized"])
    func flat(kind: String) throws {
        let scratch = Scratch()
        scratch.text("unit", size: Self.unit, seed: 3)
        // A tar of the unit cut in 64 files, archived N times over (GNU tar
        // stores a file named twice twice, where it has one link): N × 64
        // members, the same bytes each time for the same N.
        _ = try FormatsCommandTests.sh("mkdir d && split -n 64 -d unit d/part.", scratch)
        let stream = "for i in $(seq $N); do cat unit; done"
        let tar = "tar -cf - $(for i in $(seq $N); do echo d; done)"
        let line: String
        switch kind {
        case "stream":
            line = "\(stream) | $T $WEIR -q -T2 -c > out.zst && cmp <(zstd -dc out.zst) <(\(stream))"
        case "tar":
            line = "\(tar) | $T $WEIR -q -T2 -c > out.zst && cmp <(zstd -dc out.zst) <(\(tar)) && "
                + "test \"$($WEIR -l --members out.zst | grep -c part)\" = $((64 * N))"
        case "weirFile":
            line = "\(stream) | $WEIR -q -T2 -c > in.zst && cat in.zst | $T $WEIR -q -T2 -dc | cmp - <(\(stream))"
        case "zstdSized":
            line = "\(stream) | zstd -q -3 --stream-size=$((\(Self.unit) * N)) > in.zst && "
                + "zstd -lv in.zst | grep -q 'Decompressed Size' && $T $WEIR -q -T2 -dc in.zst | cmp - <(\(stream))"
        default:
            line = "\(stream) | zstd -q -3 > in.zst && cat in.zst | $T $WEIR -q -T2 -dc | cmp - <(\(stream))"
        }
        let (small, large) = try Self.peaks(kind, line, scratch)
        #expect(large <= small + Self.marginKiB, "\(kind): \(large) KiB on 256 MB, \(small) KiB on 64 MB")
    }
}
