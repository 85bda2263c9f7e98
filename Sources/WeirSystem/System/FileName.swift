/// File names as the system has them — any bytes but NUL — carried in Swift
/// `String`s without loss.
///
/// A name is decoded as UTF-8, except that each byte that is not part of valid
/// UTF-8 becomes the private-use scalar U+10FF00 + byte (U+10FF80…U+10FFFF,
/// Python's "surrogateescape" idea, moved to scalars a `String` can hold). To
/// keep the mapping one to one, a valid UTF-8 encoding of U+10FF80…U+10FFFF
/// in a name is escaped byte by byte the same way. So `bytes(of:)` gives back
/// exactly the bytes `string(fromBytes:)` was given, and a valid UTF-8 name
/// is the plain `String` it always was.
///
/// Every path that reaches a system call goes through ``withCString(_:_:)``:
/// `String.withCString` would write an escape scalar as its own 4 UTF-8
/// bytes and name another file.
package enum FileName {
    /// The escape scalars, one for each byte 0x80…0xFF.
    package static let escapes: ClosedRange<UInt32> = 0x10FF80 ... 0x10FFFF
    /// The scalar standing for each byte, U+10FF00 + byte (all 256 valid
    /// scalars: none is a surrogate, none above U+10FFFF).
    private static let escapeScalars = (UInt32(0x10FF00) ... 0x10FFFF).compactMap { Unicode.Scalar($0) }

    /// The name of these bytes (no NUL among them), invalid UTF-8 escaped.
    package static func string(fromBytes bytes: some Collection<UInt8>) -> String {
        // Valid UTF-8 without 0xF4 holds no scalar from U+100000 up, so no
        // escape scalar: the name is its UTF-8 (most names, at no cost).
        if !bytes.contains(0xF4), let plain = String(validating: bytes, as: UTF8.self) { return plain }
        let bytes = Array(bytes)
        var scalars = String.UnicodeScalarView()
        var index = 0
        while index < bytes.count {
            if let (scalar, length) = scalar(at: index, in: bytes), !escapes.contains(scalar.value) {
                scalars.append(scalar)
                index += length
            } else {
                // Only the one byte: what follows may start a valid character.
                // A valid escape scalar's bytes are all >= 0x80 and go one by one.
                scalars.append(escapeScalars[Int(bytes[index])])
                index += 1
            }
        }
        return String(scalars)
    }

    /// The bytes `name` stands for: escape scalars as their byte, the rest UTF-8.
    package static func bytes(of name: String) -> [UInt8] {
        // 0xF4 leads the UTF-8 of every escape scalar: without it, the name is its UTF-8.
        guard name.utf8.contains(0xF4) else { return Array(name.utf8) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(name.utf8.count)
        for scalar in name.unicodeScalars {
            if let byte = escapedByte(scalar) {
                bytes.append(byte)
            } else {
                UTF8.encode(scalar) { bytes.append($0) }
            }
        }
        return bytes
    }

    /// Calls `body` with `name` as the NUL-terminated path the system expects.
    @discardableResult
    package static func withCString<Result>(_ name: String, _ body: (UnsafePointer<CChar>) -> Result) -> Result {
        let path = bytes(of: name).map { CChar(bitPattern: $0) } + [0]
        return body(path)
    }

    /// The byte an escape scalar stands for; nil for any other scalar.
    package static func escapedByte(_ scalar: Unicode.Scalar) -> UInt8? {
        escapes.contains(scalar.value) ? UInt8(truncatingIfNeeded: scalar.value) : nil
    }

    /// `name` for a message: readable and on one line, not reversible. Each
    /// byte that is not valid UTF-8, and each control character, shows as
    /// `\xFF`; the rest as it is.
    package static func displayed(_ name: String) -> String {
        escaping(withoutPassword(name)) { scalar in
            escapedByte(scalar) ?? (scalar.value < 0x20 || scalar.value == 0x7F ? UInt8(scalar.value) : nil)
        }
    }

    /// `name` as any text shows it: a URL (any `SCHEME://`, any case, or a
    /// `//host/…` reference as a `Location` may hold) with a password in
    /// its credentials shows `***` in its place, as curl
    /// and wget print one (`http://user:SECRET@host/a` gives
    /// `http://user:***@host/a`); any other name as it is. The one place a
    /// password is taken out: ``displayed(_:)`` calls it, and so does every
    /// record that names an input without it (the JSON lines).
    package static func withoutPassword(_ name: String) -> String {
        let bytes = name.utf8
        guard let schemeEnd = authorityStart(bytes) else { return name }
        // The authority ends at the path, the query or the fragment (RFC 3986);
        // its credentials end at its last `@`, the user at their first `:`.
        let authority = bytes[schemeEnd...].prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?")
            && $0 != UInt8(ascii: "#") }
        guard let at = authority.lastIndex(of: UInt8(ascii: "@")) else { return name }
        let credentials = bytes[schemeEnd ..< at]
        // The user ends at the first `:`, or at a `%3A` (which a server's Basic
        // authentication reads as one): what follows is taken for the password.
        if let colon = credentials.firstIndex(of: UInt8(ascii: ":")) {
            return String(name[..<bytes.index(after: colon)]) + "***" + String(name[at...])
        }
        if let percent = credentials.indices.first(where: { index in
            credentials[index...].prefix(3).map { $0 | 0x20 } == Array("%3a".utf8) }) {
            return String(name[..<percent]) + "%3A***" + String(name[at...])
        }
        return name
    }

    /// Where the authority of a URL (`SCHEME://`, any scheme, RFC 3986 3.1)
    /// or of a network-path reference (`//host/…`, what a `Location` may
    /// hold) starts in `bytes`; nil for any other name.
    private static func authorityStart(_ bytes: String.UTF8View) -> String.UTF8View.Index? {
        let slash = UInt8(ascii: "/")
        var index = bytes.startIndex
        if let first = bytes.first, first != slash {
            // SCHEME = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then ":".
            guard first | 0x20 >= UInt8(ascii: "a") && first | 0x20 <= UInt8(ascii: "z") else { return nil }
            guard let colon = bytes.firstIndex(where: { byte in
                !(byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z")
                    || byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
                    || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "."))
            }), bytes[colon] == UInt8(ascii: ":") else { return nil }
            index = bytes.index(after: colon)
        }
        for _ in 0 ..< 2 {
            guard index < bytes.endIndex, bytes[index] == slash else { return nil }
            index = bytes.index(after: index)
        }
        return index
    }

    /// `text` with only the escape scalars shown as `\xFF`: for whole
    /// messages, whose line breaks stay.
    package static func displayingEscapes(_ text: String) -> String {
        escaping(text, escapedByte)
    }

    /// `text` with each scalar for which `byte` answers shown as `\xFF`.
    private static func escaping(_ text: String, _ byte: (Unicode.Scalar) -> UInt8?) -> String {
        guard text.unicodeScalars.contains(where: { byte($0) != nil }) else { return text }
        var shown = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if let value = byte(scalar) {
                shown.append(contentsOf: "\\x".unicodeScalars)
                shown.append(hexDigits[Int(value >> 4)])
                shown.append(hexDigits[Int(value & 15)])
            } else {
                shown.append(scalar)
            }
        }
        return String(shown)
    }

    private static let hexDigits = Array("0123456789ABCDEF".unicodeScalars)

    /// The scalar whose shortest UTF-8 encoding starts at `index`, and its
    /// length; nil when the bytes there are not valid UTF-8 (a stray
    /// continuation byte, a truncated or overlong sequence, a surrogate,
    /// beyond U+10FFFF).
    private static func scalar(at index: Int, in bytes: [UInt8]) -> (Unicode.Scalar, Int)? {
        let lead = bytes[index]
        if lead < 0x80 { return (Unicode.Scalar(lead), 1) }
        let length: Int
        let minimum: UInt32
        var value: UInt32
        switch lead {
        case 0xC2 ... 0xDF: (length, minimum, value) = (2, 0x80, UInt32(lead & 0x1F))
        case 0xE0 ... 0xEF: (length, minimum, value) = (3, 0x800, UInt32(lead & 0x0F))
        case 0xF0 ... 0xF4: (length, minimum, value) = (4, 0x10000, UInt32(lead & 0x07))
        default: return nil
        }
        guard index + length <= bytes.count else { return nil }
        for byte in bytes[index + 1 ..< index + length] {
            guard byte & 0xC0 == 0x80 else { return nil }
            value = value << 6 | UInt32(byte & 0x3F)
        }
        guard value >= minimum, let scalar = Unicode.Scalar(value) else { return nil }
        return (scalar, length)
    }
}
