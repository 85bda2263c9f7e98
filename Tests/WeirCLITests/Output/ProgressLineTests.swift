import Testing
import WeirCLI

/// The line's layout at fixed widths, and the control sequences that draw and clear it.
@Suite("progress line")
struct ProgressLineTests {
    let full = ProgressLine(counter: "(1/3)", name: "linux.tar", fraction: 0.42, bytesIn: 536_870_912,
                            bytesOut: 78_852_915, ratio: 0.1469, speed: 933_232_640, elapsed: 3.2, eta: 4.7)

    @Test("a wide line shows every field, in order, with a bar filling the room left")
    func wide() {
        let text = full.text(width: 120)
        #expect(text.count == 119)
        #expect(text.hasPrefix("(1/3) linux.tar  42% [=============="))
        #expect(text.hasSuffix("]  512.0 MiB =>  75.20 MiB  (14.69%)  890.0 MiB/s 0:03 ETA 0:04"))
    }

    @Test("the bar is never wider than the maximum, on a very wide terminal")
    func veryWide() {
        let text = full.text(width: 400)
        #expect(text.contains("[" + String(repeating: "=", count: 21) + ">" + String(repeating: " ", count: 28) + "]"))
    }

    @Test("every width from 1 to 200 fits, one column to spare")
    func fits() {
        for width in 1...200 {
            let text = full.text(width: width)
            #expect(text.count <= max(1, width - 1), "width \(width): \(text)")
            let unknown = ProgressLine(name: "(stdin)", bytesIn: 5_000, bytesOut: 900, ratio: 0.18,
                                       speed: 1_000, elapsed: 65)
            #expect(unknown.text(width: width).count <= max(1, width - 1))
        }
    }

    /// Which fields a line shows, by the text that marks them.
    func fields(_ text: String) -> Set<String> {
        let marks = ["bar": "[", "ratio": "(14.69%)", "bytesOut": "=>", "elapsed": "0:03", "counter": "(1/3)",
                     "name": "linux.tar", "eta": "ETA", "speed": "MiB/s", "bytesIn": "512.0 MiB", "percent": "42%"]
        return Set(marks.filter { text.contains($0.value) }.map(\.key))
    }

    @Test("narrow terminals: the bar goes first, then ratio, output, elapsed, counter, name, ETA, speed, bytes")
    func narrow() {
        let order = ["bar", "ratio", "bytesOut", "elapsed", "counter", "name", "eta", "speed", "bytesIn"]
        var shown = Set(order + ["percent"])
        for width in stride(from: 200, through: 6, by: -1) {
            let now = fields(full.text(width: width))
            #expect(now.isSubset(of: shown), "width \(width): a field came back")
            let gone = shown.subtracting(now)
            for field in gone {  // whatever went, everything before it in the order went too
                #expect(order.prefix(while: { $0 != field }).allSatisfy { !now.contains($0) }, "width \(width)")
            }
            #expect(now.contains("percent"), "width \(width)")
            shown = now
        }
        #expect(full.text(width: 80) == "(1/3) linux.tar  42%  512.0 MiB =>  75.20 MiB  890.0 MiB/s 0:03 ETA 0:04")
        #expect(full.text(width: 54) == "(1/3) linux.tar  42%  512.0 MiB  890.0 MiB/s ETA 0:04")
        #expect(full.text(width: 50) == "linux.tar  42%  512.0 MiB  890.0 MiB/s ETA 0:04")
        #expect(full.text(width: 30) == " 42%  512.0 MiB  890.0 MiB/s")
        #expect(full.text(width: 10) == " 42%")
        #expect(full.text(width: 3) == " 4")
    }

    @Test("a long name is shortened from the left before it is dropped")
    func longName() {
        var line = full
        line.name = "backups/2024/very-long-database-dump-name.sql"
        let text = line.text(width: 100)
        #expect(text.count <= 99)
        let name = text.split(separator: " ")[1]
        #expect(name.hasPrefix("...") && name.hasSuffix("dump-name.sql") && name.count == 99 / 3)
        let narrower = line.text(width: 72)
        #expect(narrower.contains(" ...") && narrower.contains(".sql "), "\(narrower)")
        #expect(narrower.count <= 71)
    }

    @Test("without a total: bytes lead, no percent, no bar, no ETA")
    func noTotal() {
        let line = ProgressLine(name: "(stdin)", bytesIn: 3 << 30, bytesOut: 1 << 29, ratio: 1.0 / 6,
                                speed: Double(100 << 20), elapsed: 61)
        #expect(line.text(width: 100) == "(stdin)   3.00 GiB =>  512.0 MiB  (16.67%)  100.0 MiB/s 1:01")
        #expect(line.text(width: 20) == "  3.00 GiB")
    }

    @Test("an unknown speed and ETA show placeholders, not zeros")
    func unknownSpeed() {
        let line = ProgressLine(name: "f", fraction: 0, bytesIn: 0, bytesOut: 0, elapsed: 0)
        #expect(line.text(width: 60) == "f   0%        0 B =>        0 B        - B/s 0:00 ETA --:--")
    }

    @Test("the bar: empty, partial, full")
    func bar() {
        #expect(ProgressLine.bar(0, width: 10) == "[>         ]")
        #expect(ProgressLine.bar(0.5, width: 10) == "[=====>    ]")
        #expect(ProgressLine.bar(0.999, width: 10) == "[=========>]")
        #expect(ProgressLine.bar(1, width: 10) == "[==========]")
        #expect(ProgressLine.bar(7, width: 4) == "[====]")
        #expect(ProgressLine.bar(.nan, width: 4) == "[>   ]")
    }

    @Test("drawing and clearing: carriage return, the line, erase to end of line")
    func controlSequences() {
        #expect(ProgressLine.clear == "\r\u{1B}[K")
        #expect(ProgressLine.redraw("abc") == "\r" + "abc" + "\u{1B}[K")
        #expect(!full.text(width: 120).contains("\n"))
    }
}
