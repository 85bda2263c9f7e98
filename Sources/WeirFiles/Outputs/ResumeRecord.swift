import Glibc
import WeirFormats
import WeirSystem

/// What the record beside a partial output (``PartialOutput``) says: the
/// input it was made from, the options that shape its bytes, and its frames
/// up to the last checkpoint (the last point known to be on disk).
///
/// The record is text, one fact per line, and only ever grows:
///
///     weir-resume 3
///     identity DEVICE INODE SIZE MTIME_NS CTIME_NS
///     options FINGERPRINT
///     part DEVICE INODE                           the `.part` weir created
///     frame COMPRESSED DECOMPRESSED CHECKSUM [PART_HASH]    one per frame
///     checkpoint FRAMES COMPRESSED_BYTES DECOMPRESSED_BYTES HASH
///
/// Frames are in zstd's terms whichever way the run goes: a compression's
/// output is their compressed bytes, a decompression's their content.
/// `CHECKSUM` is the content checksum the frame stores (0 for none);
/// `PART_HASH`, written by a compression, the XXH64 of the frame's bytes as
/// the `.part` holds them, read back once they are synced: with it, resuming
/// checks a kept frame at hash speed instead of decoding it
/// (``PartialOutput/Check``). Version 2 (weir before 2026-11-27) wrote no
/// `PART_HASH`; its records are still read, their frames checked by decoding.
///
/// A checkpoint's hash (FNV-1a, 64 bits) covers every byte before it, and
/// its sizes are the sums of the frames':
/// an append cut short by a crash or a power cut leaves lines whose
/// checkpoint is missing or does not match, and reading stops at the last
/// one that does.
package struct ResumeRecord: Equatable {
    /// The last checkpoint: the frames on disk and their bytes, compressed
    /// and decompressed.
    struct Checkpoint: Equatable {
        var frames: Int
        var compressedBytes: Int
        var decompressedBytes: Int
    }

    /// `DEVICE INODE SIZE MTIME_NS CTIME_NS` of the input.
    var identity: String
    /// The options that change the output's bytes (``PartialOutput``).
    var options: String
    /// `DEVICE INODE` of the `.part` this record was made with: a `.part`
    /// that is another file (a link to the input put there, a copy) is never
    /// written through.
    var part: String
    /// The frames up to ``checkpoint`` (none without one).
    var entries: [SeekTable.Entry] = []
    /// Each entry's `PART_HASH`, nil where its line has none.
    var partHashes: [UInt64?] = []
    /// Whether a whole line after the last good checkpoint is not one a
    /// record holds, or a checkpoint that does not match what it covers:
    /// the record was changed, not only cut short (a crash leaves at most
    /// a line without its newline).
    var damaged = false
    /// The last whole checkpoint, if any.
    var checkpoint: Checkpoint?

    static let magic = "weir-resume 3"
    /// The versions ``parse(_:)`` reads: 2 lacks `PART_HASH`.
    static let readable: Set<Substring> = ["weir-resume 2", "weir-resume 3"]

    /// The record's first four lines.
    static func header(identity: String, options: String, part: String) -> String {
        "\(magic)\nidentity \(identity)\noptions \(options)\npart \(part)\n"
    }

    /// The identity line's value for an input. The change time is in it:
    /// bytes edited in place with the modification time put back (`touch
    /// -r`) change it, and so does a new link to the file.
    package static func identity(of status: FileStatus) -> String {
        func nanoseconds(_ time: timespec) -> Int { Int(time.tv_sec) * 1_000_000_000 + Int(time.tv_nsec) }
        return "\(status.device) \(status.inode) \(status.size) \(nanoseconds(status.modificationTime)) "
            + "\(nanoseconds(status.changeTime))"
    }

    /// The part line's value for the file `fstat` described as `status`.
    static func part(_ status: stat) -> String { "\(status.st_dev) \(status.st_ino)" }

    /// A dictionary as the options line names it: its ID, size and a hash
    /// of its bytes; `-` for none.
    package static func fingerprint(of dictionary: ZstdDictionary?) -> String {
        dictionary.map { "\($0.id)/\($0.bytes.count)/\(hash($0.bytes))" } ?? "-"
    }

    /// The lines of `entries` (with their `partHashes`, if any) and then a
    /// checkpoint, given the hash of everything before them; returns the
    /// text and the hash after it.
    static func append(_ entries: ArraySlice<SeekTable.Entry>, partHashes: [UInt64]? = nil, checkpoint: Checkpoint,
                       after hash: UInt64) -> (text: String, hash: UInt64) {
        var text = ""
        for (index, entry) in entries.enumerated() {
            text += "frame \(entry.compressedSize) \(entry.decompressedSize) \(entry.checksum)"
            if let partHashes { text += " \(partHashes[index])" }
            text += "\n"
        }
        var lead =
            text + "checkpoint \(checkpoint.frames) \(checkpoint.compressedBytes) \(checkpoint.decompressedBytes) "
        let hashed = Self.hash(Array(lead.utf8), from: hash)
        lead += "\(hashed)\n"
        return (lead, Self.hash(Array(lead.utf8), from: hash))
    }

    /// FNV-1a over `bytes`, continuing from `hash`.
    static func hash(_ bytes: [UInt8], from hash: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
        var value = hash
        for byte in bytes {
            value ^= UInt64(byte)
            value &*= 0x100_0000_01b3
        }
        return value
    }

    /// Reads the record in `bytes`: nil when it does not start as a record
    /// does; otherwise its identity, options and last whole checkpoint, and
    /// the hash of everything up to that checkpoint (for appending after it).
    static func parse(_ bytes: [UInt8]) -> (record: ResumeRecord, hash: UInt64, length: Int)? {
        var lines: [(text: Substring, start: Int, end: Int)] = []
        var start = 0
        for index in bytes.indices where bytes[index] == UInt8(ascii: "\n") {
            lines.append((Substring(decoding: bytes[start..<index], as: UTF8.self), start, index + 1))
            start = index + 1
        }
        guard lines.count >= 4, readable.contains(lines[0].text), lines[1].text.hasPrefix("identity "),
              lines[2].text.hasPrefix("options "), lines[3].text.hasPrefix("part ") else { return nil }
        var record = ResumeRecord(identity: String(lines[1].text.dropFirst("identity ".count)),
                                  options: String(lines[2].text.dropFirst("options ".count)),
                                  part: String(lines[3].text.dropFirst("part ".count)))
        var hash = Self.hash(Array(bytes[..<lines[3].end]))
        var length = lines[3].end
        var pending: [SeekTable.Entry] = []
        var pendingHashes: [UInt64?] = []
        for line in lines.dropFirst(4) {
            let fields = line.text.split(separator: " ")
            if fields.first == "frame", fields.count == 4 || fields.count == 5, let compressed = UInt32(fields[1]),
               let decompressed = UInt32(fields[2]), let checksum = UInt32(fields[3]) {
                let partHash = fields.count == 5 ? UInt64(fields[4]) : nil
                if fields.count == 5 && partHash == nil {
                    record.damaged = true
                    break
                }
                pending.append(SeekTable.Entry(compressedSize: compressed, decompressedSize: decompressed,
                                               checksum: checksum))
                pendingHashes.append(partHash)
                continue
            }
            guard fields.first == "checkpoint", fields.count == 5, let frames = Int(fields[1]),
                  let compressed = Int(fields[2]), let decompressed = Int(fields[3]),
                  let stated = UInt64(fields[4]) else {
                record.damaged = true
                break
            }
            let covered = Self.hash(Array(bytes[length..<(line.end - fields[4].utf8.count - 1)]), from: hash)
            let compressedTotal = pending.reduce(record.checkpoint?.compressedBytes ?? 0) {
                $0 + Int($1.compressedSize)
            }
            let decompressedTotal = pending.reduce(record.checkpoint?.decompressedBytes ?? 0) {
                $0 + Int($1.decompressedSize)
            }
            guard covered == stated, frames == record.entries.count + pending.count, compressed == compressedTotal,
                  decompressed == decompressedTotal else {
                record.damaged = true
                break
            }
            record.entries += pending
            record.partHashes += pendingHashes
            pending = []
            pendingHashes = []
            record.checkpoint = Checkpoint(frames: frames, compressedBytes: compressed, decompressedBytes: decompressed)
            hash = Self.hash(Array(bytes[length..<line.end]), from: hash)
            length = line.end
        }
        return (record, hash, length)
    }
}
