import Glibc

extension PartialOutput {
    /// What an earlier run's record and `.part` must match to be resumed.
    ///
    /// Every kept frame is checked, not only the last: a byte flipped in
    /// the middle of a `.part`, another file's `.part` copied in, or a
    /// record written by hand starts over instead of ending as an output
    /// that does not decode, or decodes to another file. Each frame is
    /// decoded (its own checksum verified, and the checksum it stores
    /// compared with the record's) and its content compared with the
    /// input's bytes (a compression) or the `.part`'s (a decompression,
    /// whose frames are the input's). Decoding runs about ten times faster
    /// than compressing at high levels, so the check costs a fraction of
    /// what resuming saves; `--verify` and `--rm` need no more than this.
    struct Check {
        let identity: String
        let options: String
        let holds: Holds
        let dictionary: ZstdDictionary?
        let input: Descriptor?
        /// The `.part`, as messages name it.
        let path: String

        /// Why the record's input or options rule it out, or nil.
        func mismatchOfRecord(_ record: ResumeRecord) -> String? {
            if record.identity != identity { return "the input changed since it was written" }
            if record.options != options { return "it was written with other options" }
            guard record.checkpoint != nil else { return "it holds no whole frame" }
            return nil
        }

        /// Why the kept frames do not check, or nil when they all do.
        ///
        /// - Throws: ``WeirError`` when the input cannot be read (a disk's
        ///   read error): that says nothing of the `.part`, which stays for
        ///   a run that can read its input, rather than being started over.
        func mismatchOfFrames(_ record: ResumeRecord, part: Descriptor) throws(WeirError) -> String? {
            guard let checkpoint = record.checkpoint else { return "it holds no whole frame" }
            let totals = holds.totals(of: checkpoint)
            guard let size = try? part.status().size, size >= totals.output else {
                return "it is shorter than its record says"
            }
            // The frames: in the `.part` (a compression) or in the input.
            guard let frames = holds == .frames ? part : input,
                  let verifier = try? FrameVerifier(dictionary: dictionary, path: path) else {
                return "its input cannot be read"
            }
            var framesAt = 0, contentAt = 0
            for (index, entry) in record.entries.enumerated() {
                let compressed = Int(entry.compressedSize), decompressed = Int(entry.decompressedSize)
                guard let frame = try read(frames, count: compressed, at: framesAt),
                      FrameHeader.startsFrame(frame) else { return "its frames are not where its record says" }
                if let reason = try check(frame, entry, index: index, contentAt: contentAt, part: part,
                                          verifier: verifier) {
                    return reason
                }
                framesAt += compressed
                contentAt += decompressed
            }
            return nil
        }

        /// Why frame `index`, `frame` (all its bytes), does not check.
        private func check(_ frame: [UInt8], _ entry: SeekTable.Entry, index: Int, contentAt: Int, part: Descriptor,
                           verifier: FrameVerifier) throws(WeirError) -> String? {
            let size = Int(entry.decompressedSize)
            if Self.isSkippable(frame) {
                return holds == .content && size == 0 ? nil : "its frame \(index) is not what its record says"
            }
            // The checksum a frame stores (descriptor bit 2) is the record's.
            let hasChecksum = frame.count >= 9 && frame[4] & 0x04 != 0
            if hasChecksum {
                let stored = frame.suffix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                guard stored == entry.checksum else { return "its frame \(index) is not what its record says" }
            }
            let content = holds == .frames ? input : part
            guard let content, let bytes = try read(content, count: size, at: contentAt) else {
                return holds == .frames ? "its input cannot be read" : "it is shorter than its record says"
            }
            let matches = frame.withUnsafeBytes { frame in
                bytes.withUnsafeBytes { bytes in
                    (try? verifier.check(frame, against: bytes, frame: index, offset: contentAt, path: path)) != nil
                }
            }
            if matches { return nil }
            return holds == .frames ? "its frame \(index) does not decode to the input's bytes"
                : "its frame \(index)'s content is not the input's"
        }

        /// `count` bytes of `file` at `offset`, or nil when it holds fewer or
        /// (the `.part`) cannot be read.
        ///
        /// - Throws: ``WeirError`` when `file` is the input and its read fails.
        private func read(_ file: Descriptor, count: Int, at offset: Int) throws(WeirError) -> [UInt8]? {
            do throws(WeirError) {
                let bytes = try file.read(count: count, at: offset, operation: .read)
                return bytes.count == count ? bytes : nil
            } catch {
                if let input, input.fd == file.fd { throw error }
                return nil
            }
        }

        /// Whether `frame` starts with a skippable frame's magic.
        private static func isSkippable(_ frame: [UInt8]) -> Bool {
            frame.count >= 8 && frame[0] & 0xF0 == 0x50 && frame[1] == 0x2A && frame[2] == 0x4D && frame[3] == 0x18
        }
    }
}
