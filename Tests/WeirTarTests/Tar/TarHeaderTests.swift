import Testing
import WeirTar
@testable import WeirTestSupport

/// A header's numbers and checksum, read a word at a time, against the
/// plain reading of them byte by byte (what they were read with before):
/// the same value, or the same refusal, for every field a tar can hold.
@Suite("Tar header")
struct TarHeaderTests {
    /// An octal field as tar reads it, a byte a turn: leading spaces, octal
    /// digits, then a NUL, a space or the field's end; nil for anything else.
    static func plainOctal(_ field: [UInt8]) -> Int? {
        var index = 0
        while index < field.count, field[index] == 0x20 { index += 1 }
        var value = 0
        while index < field.count {
            let byte = field[index]
            if byte == 0 || byte == 0x20 { break }
            guard byte >= 0x30, byte <= 0x37, value <= Int.max >> 3 else { return nil }
            value = value << 3 | Int(byte - 0x30)
            index += 1
        }
        return value
    }

    static func number(_ field: [UInt8]) -> Int? {
        field.withUnsafeBytes { TarHeader.number($0) }
    }

    @Test("every 8-byte field of NULs, spaces, octal and other digits reads as byte by byte")
    func eightBytes() {
        // 5^8 fields: every place of a terminator, of a space, of a bad digit.
        let alphabet: [UInt8] = [0, 0x20, UInt8(ascii: "1"), UInt8(ascii: "7"), UInt8(ascii: "8")]
        var field = [UInt8](repeating: 0, count: 8)
        var mismatches = 0
        for code in 0 ..< 390_625 {
            var rest = code
            for index in 0 ..< 8 {
                field[index] = alphabet[rest % 5]
                rest /= 5
            }
            if Self.number(field) != Self.plainOctal(field) {
                mismatches += 1
                if mismatches < 5 { Issue.record("\(field): \(String(describing: Self.number(field)))") }
            }
        }
        #expect(mismatches == 0)
    }

    @Test("12-byte fields, as GNU tar and others write them and at random, read as byte by byte")
    func twelveBytes() {
        var random = SeededGenerator(seed: 82)
        let alphabet: [UInt8] = [0, 0x20, UInt8(ascii: "0"), UInt8(ascii: "3"), UInt8(ascii: "7"),
                                 UInt8(ascii: "9"), UInt8(ascii: "/"), 0x7F]
        var mismatches = 0
        func check(_ field: [UInt8]) {
            if Self.number(field) != Self.plainOctal(field) {
                mismatches += 1
                if mismatches < 5 { Issue.record("\(field): \(String(describing: Self.number(field)))") }
            }
        }
        // Spaces, then digits, then an end (or none), then anything: every length of each.
        for spaces in 0 ... 12 {
            for digits in 0 ... 12 - spaces {
                for ender: UInt8 in [0, 0x20, UInt8(ascii: "8"), UInt8(ascii: "x")] {
                    for _ in 0 ..< 8 {
                        var field = [UInt8](repeating: 0x20, count: spaces)
                        field += (0 ..< digits).map { _ in
                            UInt8(ascii: "0") + UInt8.random(in: 0 ... 7, using: &random)
                        }
                        if field.count < 12 { field.append(ender) }
                        while field.count < 12 { field.append(alphabet.randomElement(using: &random)!) }
                        check(field)
                    }
                }
            }
        }
        for _ in 0 ..< 200_000 {
            check((0 ..< 12).map { _ in alphabet.randomElement(using: &random)! })
        }
        // GNU tar's widest: 11 digits and a NUL; and 12 digits, no end.
        check(Array("77777777777\0".utf8))
        check(Array("777777777777".utf8))
        #expect(Self.number(Array("777777777777".utf8)) == (1 << 36) - 1)
        #expect(mismatches == 0)
    }

    @Test("the checksum, unsigned and signed, of blocks of every byte")
    func checksum() {
        var random = SeededGenerator(seed: 512)
        for round in 0 ..< 2_000 {
            // Bytes low, high, or any: the signed and unsigned sums part ways on high bytes.
            let top: UInt8 = [0x7F, 0xFF, 0x20][round % 3]
            var block = (0 ..< 512).map { _ in UInt8.random(in: 0 ... top, using: &random) }
            block[0] = 1  // not the all-zero block
            for index in 148 ..< 156 { block[index] = 0x20 }
            let unsigned = block.reduce(0) { $0 + Int($1) }
            let signed = block.reduce(0) { $0 + Int(Int8(bitPattern: $1)) }
            let sums = [unsigned, signed, unsigned + 1] + (signed >= 0 ? [] : [0])
            for (which, sum) in sums.enumerated() {
                var stamped = block
                // Six octal digits, a NUL, a space, as GNU tar writes them (the field's own bytes then differ).
                let digits = Array(String(max(0, sum), radix: 8).utf8)
                let text = [UInt8](repeating: UInt8(ascii: "0"), count: max(0, 6 - digits.count)) + digits + [0, 0x20]
                stamped.replaceSubrange(148 ..< 148 + min(8, text.count), with: text.prefix(8))
                let valid = stamped.withUnsafeBytes { TarHeader($0).checksumIsValid }
                let expected = which < 2 && text.count == 8 && (which == 0 || signed >= 0)
                #expect(valid == expected, "round \(round), sum \(which): \(sum)")
            }
        }
    }
}
