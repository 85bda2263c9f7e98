import Glibc
import Weir

/// The lines `weir -l --members` prints, as GNU tar prints them: `tar tf`'s
/// names, or with `verbose` `tar tvf`'s lines — mode string, owner/group,
/// size, date and time (local time, `%Y-%m-%d %H:%M`), name, then
/// `-> TARGET` or `link to TARGET` — to the byte (GNU tar's list.c,
/// `print_header`). Names and link targets are quoted in tar's default
/// `escape` style (gnulib's quotearg): `\\`, C escapes of controls, `\ooo`
/// for other bytes that do not print (in a UTF-8 locale, valid UTF-8 prints
/// as it is; in the C locale, no byte above 127 does).
///
/// The owner/group/size column grows as tar's does: to the widest seen so
/// far, never narrowing, from 19 characters.
package struct TarListing {
    /// Whether the names are printed as tar prints them in a UTF-8 locale.
    let utf8: Bool
    package let verbose: Bool
    /// tar's `ugswidth`: the width of "owner/group size", which only grows.
    private var ownerSizeWidth = 19
    /// tar's `datewidth`.
    private var dateWidth = 16
    /// The last date written and its text, for members that share a time
    /// (most of a tarball's): the conversion runs once per change of time.
    private var lastDate: Int64?
    private var lastDateText: [UInt8] = []

    package init(verbose: Bool, utf8: Bool) {
        self.verbose = verbose
        self.utf8 = utf8
    }

    /// Appends `member`'s line to `output`.
    package mutating func append(_ member: TarMember, to output: inout [UInt8]) {
        append(member.record, to: &output)
    }

    /// Appends the line of the member `member` describes to `output`.
    package mutating func append(_ member: MemberIndex.Member, to output: inout [UInt8]) {
        MemberIndex.Record.with(member) { append($0, to: &output) }
    }

    /// Appends the line of the member `member` describes to `output`.
    /// Nothing is allocated per line: every field is written in place.
    package mutating func append(_ member: MemberIndex.Record, to output: inout [UInt8]) {
        guard verbose else {
            appendQuoted(member.path, to: &output)
            output.append(UInt8(ascii: "\n"))
            return
        }
        Self.appendMode(type: member.type, mode: member.mode, path: member.path, to: &output)
        output.append(UInt8(ascii: " "))
        let user = member.uname.isEmpty ? Self.digits(member.uid) : member.uname.count
        let group = member.gname.isEmpty ? Self.digits(member.gid) : member.gname.count
        // A device shows "major,minor" where a file shows its size, as tar tvf does.
        let device = member.type == UInt8(ascii: "3") || member.type == UInt8(ascii: "4")
        let sizeWidth = device ? Self.digits(member.devmajor) + 1 + Self.digits(member.devminor)
                               : Self.digits(member.size)
        let pad = user + 1 + group + 1 + sizeWidth
        ownerSizeWidth = max(ownerSizeWidth, pad)
        if member.uname.isEmpty {
            Self.appendDecimal(member.uid, to: &output)
        } else {
            output.append(contentsOf: member.uname)
        }
        output.append(UInt8(ascii: "/"))
        if member.gname.isEmpty {
            Self.appendDecimal(member.gid, to: &output)
        } else {
            output.append(contentsOf: member.gname)
        }
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 1 + ownerSizeWidth - pad))
        if device {
            Self.appendDecimal(member.devmajor, to: &output)
            output.append(UInt8(ascii: ","))
            Self.appendDecimal(member.devminor, to: &output)
        } else {
            Self.appendDecimal(member.size, to: &output)
        }
        output.append(UInt8(ascii: " "))
        if lastDate != member.mtime {
            lastDateText.removeAll(keepingCapacity: true)
            Self.appendDate(member.mtime, to: &lastDateText)
            lastDate = member.mtime
        }
        dateWidth = max(dateWidth, lastDateText.count)
        output += lastDateText
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: dateWidth - lastDateText.count + 1))
        appendQuoted(member.path, to: &output)
        switch member.type {
        case UInt8(ascii: "2"):
            output.append(contentsOf: " -> ".utf8)
            appendQuoted(member.link, to: &output)
        case UInt8(ascii: "1"):
            output.append(contentsOf: " link to ".utf8)
            appendQuoted(member.link, to: &output)
        default: break
        }
        output.append(UInt8(ascii: "\n"))
    }

    /// How many digits `value` (not negative) has in decimal.
    static func digits(_ value: Int) -> Int {
        var count = 1, rest = value
        while rest >= 10 {
            rest /= 10
            count += 1
        }
        return count
    }

    /// Appends `value` (not negative) in decimal.
    static func appendDecimal(_ value: Int, to output: inout [UInt8]) {
        let count = digits(value)
        output.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: count))
        var rest = value, at = output.count
        for _ in 0 ..< count {
            at -= 1
            output[at] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
    }

    /// tar's ten-character mode string: the type (`-` file, `d` folder or a
    /// file whose name ends in `/`, `h` hard link, `l` symbolic link, `b`
    /// `c` devices, `p` FIFO, `C` contiguous, `?` other), then `rwx` three
    /// times with set-user-ID, set-group-ID and sticky as `s`/`S`, `t`/`T`.
    package static func modeString(type: UInt8, mode: UInt32, path: [UInt8]) -> [UInt8] {
        var text: [UInt8] = []
        path.withUnsafeBytes { appendMode(type: type, mode: mode, path: $0, to: &text) }
        return text
    }

    /// Appends ``modeString(type:mode:path:)``.
    static func appendMode(type: UInt8, mode: UInt32, path: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        let kind: Unicode.Scalar = switch type {
            case UInt8(ascii: "0"), 0, UInt8(ascii: "S"): path.last == UInt8(ascii: "/") ? "d" : "-"
            case UInt8(ascii: "1"): "h"
            case UInt8(ascii: "2"): "l"
            case UInt8(ascii: "3"): "c"
            case UInt8(ascii: "4"): "b"
            case UInt8(ascii: "5"), UInt8(ascii: "D"): "d"
            case UInt8(ascii: "6"): "p"
            case UInt8(ascii: "7"): "C"
            default: "?"
        }
        func bit(_ mask: UInt32, _ letter: Unicode.Scalar) -> UInt8 { mode & mask != 0 ? UInt8(ascii: letter) : 0x2D }
        func execute(_ mask: UInt32, special: UInt32, _ set: Unicode.Scalar, _ unset: Unicode.Scalar) -> UInt8 {
            UInt8(ascii: mode & special != 0 ? (mode & mask != 0 ? set : unset) : (mode & mask != 0 ? "x" : "-"))
        }
        output.append(UInt8(ascii: kind))
        output.append(bit(0o400, "r"))
        output.append(bit(0o200, "w"))
        output.append(execute(0o100, special: 0o4000, "s", "S"))
        output.append(bit(0o040, "r"))
        output.append(bit(0o020, "w"))
        output.append(execute(0o010, special: 0o2000, "s", "S"))
        output.append(bit(0o004, "r"))
        output.append(bit(0o002, "w"))
        output.append(execute(0o001, special: 0o1000, "t", "T"))
    }

    /// Appends tar's date: `%Y-%m-%d %H:%M` in local time (`localtime_r`,
    /// so TZ is respected), or the seconds when the local time cannot be
    /// had. Years of four digits are written here, the same digits
    /// `strftime` writes; any other year goes through `strftime` itself.
    static func appendDate(_ seconds: Int64, to output: inout [UInt8]) {
        var time = time_t(seconds)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else {
            output += String(seconds).utf8
            return
        }
        let year = Int(parts.tm_year) + 1900
        guard (1000 ... 9999).contains(year) else {
            var buffer = [CChar](repeating: 0, count: 64)
            let count = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M", &parts)
            output += buffer.prefix(count).map { UInt8(bitPattern: $0) }
            return
        }
        func two(_ value: Int32) {
            output.append(UInt8(ascii: "0") + UInt8(value / 10 % 10))
            output.append(UInt8(ascii: "0") + UInt8(value % 10))
        }
        appendDecimal(year, to: &output)
        output.append(UInt8(ascii: "-"))
        two(parts.tm_mon + 1)
        output.append(UInt8(ascii: "-"))
        two(parts.tm_mday)
        output.append(UInt8(ascii: " "))
        two(parts.tm_hour)
        output.append(UInt8(ascii: ":"))
        two(parts.tm_min)
    }

    /// `bytes` in tar's escape quoting style.
    func appendQuoted(_ bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        // Most names need no quoting: printable ASCII without a backslash.
        if bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }) {
            output.append(contentsOf: bytes)
            return
        }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\\"): output.append(contentsOf: "\\\\".utf8)
            case 0x07: output.append(contentsOf: "\\a".utf8)
            case 0x08: output.append(contentsOf: "\\b".utf8)
            case 0x0C: output.append(contentsOf: "\\f".utf8)
            case 0x0A: output.append(contentsOf: "\\n".utf8)
            case 0x0D: output.append(contentsOf: "\\r".utf8)
            case 0x09: output.append(contentsOf: "\\t".utf8)
            case 0x0B: output.append(contentsOf: "\\v".utf8)
            case 0x20 ..< 0x7F: output.append(byte)
            default:
                if utf8, byte >= 0x80, let length = Self.printableUTF8(bytes, at: index) {
                    output.append(contentsOf: bytes[index ..< index + length])
                    index += length
                    continue
                }
                output.append(UInt8(ascii: "\\"))
                output.append(UInt8(ascii: "0") + (byte >> 6))
                output.append(UInt8(ascii: "0") + (byte >> 3 & 7))
                output.append(UInt8(ascii: "0") + (byte & 7))
            }
            index += 1
        }
    }

    /// The length of the valid UTF-8 sequence at `index` when it encodes a
    /// printable character (U+00A0 and above), else nil.
    static func printableUTF8(_ bytes: UnsafeRawBufferPointer, at index: Int) -> Int? {
        let lead = bytes[index]
        let length = lead >= 0xF0 && lead < 0xF5 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 && lead < 0xE0 ? 2 : 0
        guard length > 0, index + length <= bytes.count else { return nil }
        var decoder = UTF8()
        var iterator = bytes[index ..< index + length].makeIterator()
        guard case .scalarValue(let scalar) = decoder.decode(&iterator), scalar.value >= 0xA0 else { return nil }
        return length
    }
}
