/// The check made on a member's header blocks before a byte of the member
/// is written (docs/members.md, "What a reader checks"): every header block
/// must parse as tar (its checksum right), and the name they give the
/// member — a pax `GNU.sparse.name` or `path` record, a GNU long name
/// (`L`), else the ustar prefix and name — must be the path the member index lists. A mismatch
/// means the index points elsewhere than the member it names: the caller
/// refuses the member rather than write another's bytes under its name.
///
/// It reads only the header blocks the index gives (pax `x`, GNU `L`/`K`
/// blocks and their data, then the member's own header, then the extension
/// blocks of an old GNU sparse header, or a pax sparse 1.0 member's map,
/// when the index counts them there).
package enum TarHeaderCheck {
    package static let block = 512

    /// Why header blocks do not name `path`: nil when they do.
    package static func problem(in header: UnsafeRawBufferPointer, path: [UInt8]) -> String? {
        guard header.count >= block, header.count % block == 0 else {
            return "\(header.count) bytes of header blocks, not a whole number of 512-byte blocks"
        }
        var at = 0
        var longName: [UInt8]?
        var paxPath: [UInt8]?
        var paxSparseMap = false
        while at + block <= header.count {
            let one = UnsafeRawBufferPointer(rebasing: header[at ..< at + block])
            guard checksumMatches(one) else {
                return at == 0 || longName != nil || paxPath != nil
                    ? "the header block at +\(at) fails tar's checksum" : "no tar header (its checksum fails)"
            }
            let type = one[156]
            let extended = type == UInt8(ascii: "x") || type == UInt8(ascii: "L") || type == UInt8(ascii: "K")
                || type == UInt8(ascii: "g") || type == UInt8(ascii: "X") || type == UInt8(ascii: "V")
                || type == UInt8(ascii: "A")
            guard extended else {
                let name = TarHeader.extendedName(pax: paxPath, longName: longName) ?? ustarName(one)
                if name != path {
                    return "its header names \(String(decoding: name, as: UTF8.self).debugDescription)"
                }
                // What follows the member's own header, if counted as header: old GNU sparse extension
                // blocks; a pax sparse 1.0 member's map, which libarchive reads with the headers.
                var next = at + block
                if paxSparseMap, next < header.count { return nil }
                var continues = type == UInt8(ascii: "S") && one[482] != 0
                while next < header.count {
                    guard continues else {
                        return "\(header.count - next) bytes of header blocks after the member's own header"
                    }
                    continues = header[next + 504] != 0
                    next += block
                }
                return nil
            }
            // Read as the walk reads it (``TarHeader``): the writer and the check cannot disagree on a size.
            guard let size = TarHeader(one).size else {
                return "the header block at +\(at) has no valid size"
            }
            let dataStart = at + block
            let dataEnd = dataStart + size
            guard dataEnd <= header.count else {
                return "the extended header at +\(at) runs past the header blocks the index lists"
            }
            let data = UnsafeRawBufferPointer(rebasing: header[dataStart ..< dataEnd])
            if type == UInt8(ascii: "L") {
                longName = Array(data.prefix { $0 != 0 })
            } else if type == UInt8(ascii: "x") || type == UInt8(ascii: "X") {
                // A pax sparse member's real name is GNU.sparse.name (its path is GNU's stand-in).
                if paxRecord(in: data, key: Array("GNU.sparse.major".utf8)) == Array("1".utf8) { paxSparseMap = true }
                if let found = paxRecord(in: data, key: Array("GNU.sparse.name".utf8))
                    ?? paxRecord(in: data, key: Array("path".utf8)) {
                    paxPath = found
                }
            }
            at = dataStart + (size + block - 1) / block * block
        }
        return "no member header in the header blocks"
    }

    /// Whether `header`'s checksum field holds the sum of its bytes (the
    /// field counted as spaces), unsigned or, as old tars wrote, signed.
    package static func checksumMatches(_ header: UnsafeRawBufferPointer) -> Bool {
        guard let stored = number(UnsafeRawBufferPointer(rebasing: header[148 ..< 156])) else { return false }
        var unsigned = 0, signed = 0
        for index in 0 ..< block {
            let byte = (148 ..< 156).contains(index) ? UInt8(ascii: " ") : header[index]
            unsigned += Int(byte)
            signed += Int(Int8(bitPattern: byte))
        }
        // An all-zero block sums to 256 with the field as spaces; its stored 0 never matches.
        return stored == unsigned || stored == signed
    }

    /// The name of a ustar (or GNU, or v7) header: the prefix (ustar's
    /// alone), a slash and the name.
    package static func ustarName(_ header: UnsafeRawBufferPointer) -> [UInt8] {
        let name = Array(header[0 ..< 100].prefix { $0 != 0 })
        let isPosix = header[257 ..< 263].elementsEqual("ustar\0".utf8)
        guard isPosix else { return name }
        let prefix = Array(header[345 ..< 500].prefix { $0 != 0 })
        return prefix.isEmpty ? name : prefix + [UInt8(ascii: "/")] + name
    }

    /// A numeric field: octal digits (spaces or NULs around them), or GNU's
    /// base-256 (its first byte's high bit set); nil if neither.
    package static func number(_ field: UnsafeRawBufferPointer) -> Int? {
        guard let first = field.first else { return nil }
        if first & 0x80 != 0 {
            var value = Int(first & 0x3F)
            for byte in field.dropFirst() {
                guard value < Int.max >> 8 else { return nil }
                value = value << 8 | Int(byte)
            }
            return first & 0x40 == 0 ? value : nil
        }
        var value = 0, digits = 0
        var index = field.startIndex
        while index < field.endIndex, field[index] == UInt8(ascii: " ") { index += 1 }
        while index < field.endIndex, (UInt8(ascii: "0") ... UInt8(ascii: "7")).contains(field[index]) {
            guard value < Int.max >> 3 else { return nil }
            value = value << 3 | Int(field[index] - UInt8(ascii: "0"))
            digits += 1
            index += 1
        }
        while index < field.endIndex, field[index] == UInt8(ascii: " ") || field[index] == 0 { index += 1 }
        return digits > 0 && index == field.endIndex ? value : nil
    }

    /// The value of the last pax record `key` in `data` (`LEN key=value\n` records).
    package static func paxRecord(in data: UnsafeRawBufferPointer, key: [UInt8]) -> [UInt8]? {
        var at = 0
        var found: [UInt8]?
        while at < data.count {
            var length = 0, index = at
            while index < data.count, (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(data[index]) {
                length = length * 10 + Int(data[index] - UInt8(ascii: "0"))
                index += 1
                if length > data.count { return found }
            }
            guard index < data.count, data[index] == UInt8(ascii: " "), length > index - at,
                  at + length <= data.count, data[at + length - 1] == UInt8(ascii: "\n") else { return found }
            let record = data[(index + 1) ..< (at + length - 1)]
            if let equals = record.firstIndex(of: UInt8(ascii: "=")), record[..<equals].elementsEqual(key) {
                found = Array(record[(equals + 1)...])
            }
            at += length
        }
        return found
    }
}
