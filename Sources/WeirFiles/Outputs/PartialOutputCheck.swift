import Glibc
import WeirFormats
import WeirSystem

extension PartialOutput {
    /// What an earlier run's record and `.part` must match to be resumed.
    ///
    /// Every kept frame is checked, not only the last: a byte flipped in
    /// the middle of a `.part`, another file's `.part` copied in, or a
    /// record written by hand starts over instead of ending as an output
    /// that does not decode, or decodes to another file.
    ///
    /// At hash speed, without decoding, when the frame stores a content
    /// checksum and (a compression) its record line a `PART_HASH`
    /// (``ResumeRecord``):
    /// - a compression: the frame's bytes in the `.part` hash (XXH64) to the
    ///   record's `PART_HASH` (a damaged or swapped `.part` fails), the
    ///   checksum the frame stores is the record's, and the input's bytes
    ///   it was made from hash to that checksum (XXH64's low 32 bits, as
    ///   zstd computes it): another input's frames fail;
    /// - a decompression: the frame in the input starts where the record
    ///   says and stores the record's checksum, and the `.part`'s content of
    ///   it hashes to that checksum.
    /// Otherwise (a version 2 record, frames without checksums, `--verify`,
    /// which promises each frame decoded) the frame is decoded, its own
    /// checksum verified, and its content compared with the input's bytes
    /// (a compression) or the `.part`'s (a decompression, whose frames are
    /// the input's).
    struct Check {
        let identity: String
        let options: String
        let holds: Holds
        let dictionary: ZstdDictionary?
        let input: Descriptor?
        /// The `.part`, as messages name it.
        let path: String
        /// Decode every kept frame, whatever the record holds (`--verify`).
        var decodes = false

        /// Why the record's input or options rule it out, or nil.
        func mismatchOfRecord(_ record: ResumeRecord) -> String? {
            if record.identity != identity { return "the input changed since it was written" }
            if record.options != options { return "it was written with other options" }
            guard record.checkpoint != nil else { return Self.noCheckpoint(record) }
            return nil
        }

        /// Why a record has no checkpoint: never made one, or changed.
        private static func noCheckpoint(_ record: ResumeRecord) -> String {
            record.damaged ? "its record was changed (a checkpoint does not match the lines before it)"
                : "it holds no whole frame"
        }

        /// Whether the `.part` at `partPath` (not followed if a link) is the
        /// input itself under another name: a hard link to it.
        func partIsInput(_ partPath: String) -> Bool {
            var part = stat(), source = stat()
            guard let input, FileName.withCString(partPath, { lstat($0, &part) }) == 0,
                  fstat(input.fd, &source) == 0 else { return false }
            return part.st_dev == source.st_dev && part.st_ino == source.st_ino
        }

        /// Why the kept frames do not check, or nil when they all do.
        ///
        /// - Throws: ``WeirError`` when the input cannot be read (a disk's
        ///   read error): that says nothing of the `.part`, which stays for
        ///   a run that can read its input, rather than being started over.
        func mismatchOfFrames(_ record: ResumeRecord, part: Descriptor) throws(WeirError) -> String? {
            guard let checkpoint = record.checkpoint else { return Self.noCheckpoint(record) }
            let totals = holds.totals(of: checkpoint)
            guard let size = try? part.status().size, size >= totals.output else {
                return "it is shorter than its record says"
            }
            // The frames: in the `.part` (a compression) or in the input.
            guard let frames = holds == .frames ? part : input else { return "its input cannot be read" }
            var verifier: FrameVerifier?
            var framesAt = 0, contentAt = 0
            for (index, entry) in record.entries.enumerated() {
                let compressed = Int(entry.compressedSize), decompressed = Int(entry.decompressedSize)
                guard let frame = try read(frames, count: compressed, at: framesAt),
                      FrameHeader.startsFrame(frame) else { return "its frames are not where its record says" }
                let partHash = index < record.partHashes.count ? record.partHashes[index] : nil
                let reason: String?
                if let verdict = try hashCheck(frame, entry, partHash: partHash, index: index, contentAt: contentAt,
                                               part: part) {
                    reason = verdict.reason
                } else {
                    if verifier == nil { verifier = try? FrameVerifier(dictionary: dictionary, path: path) }
                    guard let verifier else { return "its input cannot be read" }
                    reason = try check(frame, entry, index: index, contentAt: contentAt, part: part,
                                       verifier: verifier)
                }
                if let reason { return reason }
                framesAt += compressed
                contentAt += decompressed
            }
            return nil
        }

        /// The checksum frame `frame` stores (descriptor bit 2), if any.
        private static func storedChecksum(_ frame: [UInt8]) -> UInt32? {
            guard frame.count >= 9, frame[4] & 0x04 != 0 else { return nil }
            return frame.suffix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        }

        /// Whether a frame checks, and if not why.
        private enum Verdict {
            case checks
            case fails(String)

            var reason: String? {
                if case .fails(let reason) = self { return reason }
                return nil
            }
        }

        /// Frame `index` checked by hashing, not decoding: nil when it cannot
        /// be (see ``Check``), else the verdict.
        private func hashCheck(_ frame: [UInt8], _ entry: SeekTable.Entry, partHash: UInt64?, index: Int,
                               contentAt: Int, part: Descriptor) throws(WeirError) -> Verdict? {
            guard !decodes, !Self.isSkippable(frame), let stored = Self.storedChecksum(frame) else { return nil }
            let size = Int(entry.decompressedSize)
            switch holds {
            case .frames:
                guard let partHash else { return nil }
                let mine = frame.withUnsafeBytes { ContentHash.of($0) }
                guard mine == partHash, stored == entry.checksum else {
                    return .fails("its frame \(index) is not what its record says")
                }
                guard let input else { return .fails("its input cannot be read") }
                // A read error of the input throws: it says nothing of the `.part`.
                guard let content = try ContentHash.of(input, count: size, at: contentAt) else {
                    return .fails("its input cannot be read")
                }
                return UInt32(truncatingIfNeeded: content) == stored ? .checks :
                    .fails("its frame \(index) does not decode to the input's bytes")
            case .content:
                guard stored == entry.checksum else { return .fails("its frame \(index) is not what its record says") }
                guard let content = try? ContentHash.of(part, count: size, at: contentAt) else {
                    return .fails("it is shorter than its record says")
                }
                return UInt32(truncatingIfNeeded: content) == stored ? .checks :
                    .fails("its frame \(index)'s content is not the input's")
            }
        }

        /// Why frame `index`, `frame` (all its bytes), does not check, by decoding it.
        private func check(_ frame: [UInt8], _ entry: SeekTable.Entry, index: Int, contentAt: Int, part: Descriptor,
                           verifier: FrameVerifier) throws(WeirError) -> String? {
            let size = Int(entry.decompressedSize)
            if Self.isSkippable(frame) {
                return holds == .content && size == 0 ? nil : "its frame \(index) is not what its record says"
            }
            // The checksum a frame stores is the record's.
            if let stored = Self.storedChecksum(frame), stored != entry.checksum {
                return "its frame \(index) is not what its record says"
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
