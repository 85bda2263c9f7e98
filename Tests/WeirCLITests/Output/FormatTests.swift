import Testing
import WeirCLI

/// Byte counts, speeds and clock times as the progress and summary lines show them.
@Suite("formats")
struct FormatTests {
    @Test("byte counts: B below 1 KiB, then KiB, MiB, GiB with three significant figures")
    func units() {
        #expect(ByteFormat.string(0) == "0 B")
        #expect(ByteFormat.string(1023) == "1023 B")
        #expect(ByteFormat.string(1024) == "1.00 KiB")
        #expect(ByteFormat.string(1536) == "1.50 KiB")
        #expect(ByteFormat.string(150 * 1024) == "150.0 KiB")
        #expect(ByteFormat.string(5 << 20) == "5.00 MiB")
        #expect(ByteFormat.string(200_800_000) == "191.5 MiB")
        #expect(ByteFormat.string(1_363_652_608) == "1.27 GiB")
        #expect(ByteFormat.string(3 << 40) == "3.00 TiB")
        #expect(ByteFormat.string(1_048_570) == "1.00 MiB")  // not "1024.0 KiB"
        #expect(ByteFormat.string(1_048_000) == "1023.4 KiB")
        #expect(ByteFormat.speed(890.0 * 1_048_576) == "890.0 MiB/s")
        #expect(ByteFormat.speed(-5) == "0 B/s")
    }

    @Test("durations read like a clock: m:ss, then h:mm:ss; --:-- when unknown")
    func clock() {
        #expect(ClockFormat.string(0) == "0:00")
        #expect(ClockFormat.string(7.9) == "0:07")
        #expect(ClockFormat.string(754) == "12:34")
        #expect(ClockFormat.string(3723) == "1:02:03")
        #expect(ClockFormat.string(-1) == "--:--")
        #expect(ClockFormat.string(.infinity) == "--:--")
        #expect(ClockFormat.string(.nan) == "--:--")
    }
}
