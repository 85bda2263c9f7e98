import Dispatch
import WeirFormats
import WeirSystem

/// Decodes the leading run of lz4 frames that declare their content size
/// (weir writes one per chunk) of a whole mapped file in parallel: each
/// frame's end is found by walking its block headers, without decoding, and
/// each frame is decoded whole by liblz4 on a worker, into a buffer of
/// exactly its declared size. A file of one frame (stock `lz4`'s) is left
/// to ``MixedStreamDecoder``, as is what follows the run.
///
/// Bound and threads: ``WholeMemberDecoder``'s; a frame larger than its `frameLimit`
/// ends the run.
struct Lz4FrameScan {
    /// The run's parallel decoding of members, with its session and workers.
    let members: WholeMemberDecoder
    let operation: WeirError.Operation

    /// The size and declared content size of the lz4 frame that starts
    /// `bytes`, when it declares one (not 0) and lies whole in `bytes`; nil otherwise
    /// (the frame is then left to the serial decoder, which judges it).
    static func frame(_ bytes: UnsafeRawBufferPointer) -> (size: Int, content: Int)? {
        func word(_ at: Int) -> UInt32 {
            (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[at + $1]) << (8 * $1) }
        }
        guard bytes.count >= 15, word(0) == 0x184D_2204 else { return nil }
        let flags = bytes[4]
        // Version 01, reserved bit clear, a content size, no dictionary.
        guard flags & 0xC3 == 0x40, flags & 0x08 != 0 else { return nil }
        let blockMaximum = [0, 0, 0, 0, 64 << 10, 256 << 10, 1 << 20, 4 << 20][Int(bytes[5] >> 4) & 7]
        guard blockMaximum > 0 else { return nil }
        let content = UInt64(word(6)) | UInt64(word(10)) << 32
        // 0 is no size to liblz4 (LZ4F_frameInfo_t): such a frame decodes to
        // whatever its blocks hold, as `lz4` decodes it, serially.
        guard content > 0, content <= UInt64(Int.max) else { return nil }
        let blockChecksum = flags & 0x10 != 0 ? 4 : 0
        var at = 15
        while true {
            guard at + 4 <= bytes.count else { return nil }
            let header = word(at)
            at += 4
            if header == 0 { break }
            let size = Int(header & 0x7FFF_FFFF)
            guard size <= blockMaximum else { return nil }
            at += size + blockChecksum
        }
        at += flags & 0x04 != 0 ? 4 : 0
        return at <= bytes.count ? (at, Int(content)) : nil
    }

    /// Queues every frame of the run of sized lz4 frames that starts `data`
    /// (one region, the whole file), when there are two or more; returns
    /// the bytes they take (`sequence`: the next output number).
    func decode(_ data: DispatchData, region: UnsafeRawBufferPointer,
                sequence: inout Int) throws(WeirError) -> Int {
        guard members.isParallel else { return 0 }
        var frames: [WholeMemberDecoder.Member] = []
        var offset = 0
        while let found = Self.frame(UnsafeRawBufferPointer(rebasing: region[offset...])),
              found.content <= members.frameLimit {
            frames.append((offset, found.size, found.content))
            offset += found.size
        }
        guard frames.count > 1 else { return 0 }
        let (path, operation) = (members.path, self.operation)
        return try members.decode(
            frames, in: data, region: region, sequence: &sequence
        ) { worker, rest, frame, output in
            let problem: String?
            do throws(WeirError) {
                problem = try worker.members.decodeLz4Frame(rest, size: frame.size, into: output,
                                                            content: frame.content)
            } catch { return .failed(error) }
            guard let reason = problem else { return .confirmed }
            return .failed(.formatCorrupt(.lz4, path: path, operation: operation, reason, offset: frame.start))
        }
    }
}
