import Dispatch
import Testing
@testable import WeirFormats
@testable import WeirFormatsTestSupport
@testable import WeirSystem
@testable import WeirTestSupport

/// `verify`'s check: a frame against the input it was made from.
@Suite("Frame verifier")
struct FrameVerifierTests {
    /// `input` compressed as one frame at level 3, with a checksum (TestFrames,
    /// which the files' tests share).
    static func frame(of input: [UInt8]) throws -> [UInt8] {
        try TestFrames.frame(of: input)
    }

    /// What checking `frame` against `input`, given in `pieces` regions, throws.
    static func check(_ frame: [UInt8], against input: [UInt8], pieces: Int = 1) -> WeirError? {
        var data = DispatchData.empty
        let step = max(1, input.count / pieces)
        for start in stride(from: 0, to: input.count, by: step) {
            input[start..<min(input.count, start + step)].withUnsafeBytes { data.append($0) }
        }
        do throws(WeirError) {
            let verifier = try FrameVerifier(dictionary: nil, path: "in")
            try frame.withUnsafeBytes { frame in
                Result { () throws(WeirError) in
                    try verifier.check(frame, against: data, frame: 4, offset: 1000, path: "in")
                }
            }.get()
            return nil
        } catch {
            return error
        }
    }

    @Test("a frame that decodes to its input passes, in one region or several", arguments: [1, 3])
    func passes(pieces: Int) throws {
        let input = TestData.text(300_000, seed: 3)
        #expect(Self.check(try Self.frame(of: input), against: input, pieces: pieces) == nil)
    }

    @Test("an input that differs in one byte fails, naming the frame, its offset and the byte", arguments: [1, 3])
    func differentByte(pieces: Int) throws {
        let input = TestData.text(300_000, seed: 3)
        let frame = try Self.frame(of: input)
        var other = input
        other[250_000] ^= 1
        let error = try #require(Self.check(frame, against: other, pieces: pieces))
        #expect(error.kind == .verificationFailed && error.frame == 4 && error.offset == 1000)
        #expect(error.reason == "verify failed: frame 4 (input offset 1000) does not decode to its input: "
                + "the first byte that differs is at input offset 251000")
    }

    @Test("a flipped bit in the frame, or a frame of another length, fails")
    func damaged() throws {
        let input = TestData.text(300_000, seed: 3)
        var frame = try Self.frame(of: input)
        frame.withUnsafeMutableBytes { FrameVerifier.damage($0) }
        #expect(Self.check(frame, against: input)?.kind == .verificationFailed)
        let whole = try Self.frame(of: input)
        #expect(Self.check(whole, against: Array(input.dropLast()))?.kind == .verificationFailed)
        #expect(Self.check(whole, against: input + [0])?.kind == .verificationFailed)
    }
}
