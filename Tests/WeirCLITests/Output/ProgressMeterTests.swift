import Testing
import Weir
import WeirCLI

/// The meter turns running totals at given times (a fake clock) into percent, speed, ETA and ratio.
@Suite("progress meter")
struct ProgressMeterTests {
    /// Feeds `rate` bytes per second (in) and `ratio × rate` (out) for `seconds`, ten times a second.
    func run(_ meter: inout ProgressMeter, rate: Int, ratio: Double, seconds: Double, from start: Double = 0) {
        var time = start
        while time < start + seconds - 1e-9 {
            time += 0.1
            let bytesIn = meter.bytesIn + rate / 10
            meter.update(bytesIn: bytesIn, bytesOut: Int(Double(bytesIn) * ratio), seconds: time)
        }
    }

    @Test("percent, speed, ETA and ratio against a known total")
    func withTotal() {
        var meter = ProgressMeter(name: "big.tar", total: 100 << 20, mode: .compress)
        #expect(meter.fraction == 0)
        #expect(meter.eta == nil)
        run(&meter, rate: 10 << 20, ratio: 0.25, seconds: 4)
        #expect(meter.bytesIn == 40 << 20)
        #expect(abs(meter.fraction! - 0.4) < 1e-9)
        #expect(abs(meter.speed! - Double(10 << 20)) < 1)
        #expect(abs(meter.eta! - 6) < 1e-6)
        #expect(abs(meter.ratio! - 0.25) < 1e-6)
        let line = meter.line
        #expect(line.counter == nil)
        #expect(line.bytesOut == 10 << 20)
        #expect(abs(line.elapsed - 4) < 1e-9)
        // Slower now: the ETA follows the current speed, not the average.
        run(&meter, rate: 2 << 20, ratio: 0.25, seconds: 5, from: 4)
        #expect(abs(meter.speed! / Double(2 << 20) - 1) < 1e-6)
        #expect(abs(meter.eta! - 25) < 1e-3)  // 50 MiB left at 2 MiB/s
    }

    @Test("no total: no percentage and no ETA, still bytes and speed")
    func withoutTotal() {
        var meter = ProgressMeter(name: "(stdin)", total: nil, mode: .compress)
        run(&meter, rate: 1 << 20, ratio: 0.5, seconds: 2)
        #expect(meter.fraction == nil)
        #expect(meter.eta == nil)
        #expect(meter.speed != nil)
        let text = meter.text(width: 100)
        #expect(!text.contains("%]"))
        #expect(!text.contains("ETA"))
        #expect(!text.contains("["))
        #expect(text.contains("2.00 MiB"))
        #expect(text.contains("1.00 MiB/s"))
        #expect(text.contains("0:02"))
    }

    @Test("a wrong size hint, passed, shows no false percentage; an empty file none either")
    func passedTotal() {
        var meter = ProgressMeter(name: "-", total: 1000, mode: .compress)
        meter.update(bytesIn: 2000, bytesOut: 10, seconds: 1)
        #expect(meter.fraction == nil)
        #expect(meter.eta == nil)
        #expect(ProgressMeter(name: "empty", total: 0, mode: .compress).fraction == nil)
    }

    @Test("decompression: progress on the compressed side, ratio compressed / uncompressed; test: no output")
    func directions() {
        var meter = ProgressMeter(name: "a.zst", file: 2, files: 3, total: 1000, mode: .decompress)
        meter.update(bytesIn: 250, bytesOut: 1000, seconds: 1)
        #expect(meter.fraction == 0.25)
        #expect(meter.ratio == 0.25)
        #expect(meter.line.counter == "(2/3)")
        #expect(meter.text(width: 120).hasPrefix("(2/3) a.zst  25% ["))
        var tested = ProgressMeter(name: "a.zst", total: 1000, mode: .test)
        tested.update(bytesIn: 500, bytesOut: 0, seconds: 1)
        #expect(tested.ratio == nil)
        #expect(tested.line.bytesOut == nil)
        #expect(!tested.text(width: 120).contains("B =>"))
    }

    @Test("the meter takes an observer's totals")
    func observerTotals() {
        var meter = ProgressMeter(name: "x", total: 10, mode: .compress)
        meter.update(ProgressObserver.Totals(bytesIn: 5, bytesOut: 2, seconds: 0.5))
        #expect(meter.fraction == 0.5)
        #expect(meter.seconds == 0.5)
        #expect(meter.speed == 10)
    }

    @Test(
        "a pipe gathering a chunk: the bytes read are shown and their rate, not 0 B/s; the slower rate once both move")
    func received() {
        var meter = ProgressMeter(name: "(stdin)", total: nil, mode: .compress, showsReceived: true)
        // 100 KiB a second arrive; nothing is compressed yet.
        for tenth in 1...30 {
            meter.update(bytesIn: 0, bytesOut: 0, seconds: Double(tenth) / 10, received: tenth * 10_240)
        }
        #expect(abs((meter.speed ?? 0) - 102_400) < 1)
        #expect(meter.line.received == 307_200)
        let text = meter.text(width: 120)
        #expect(text.contains("read ") && text.contains("300.0 KiB") && !text.contains(" 0 B/s"), "\(text)")
        // The chunk is compressed at once: the work's burst is faster than the reading, which is the rate.
        meter.update(bytesIn: 307_200, bytesOut: 1000, seconds: 3.1, received: 317_440)
        #expect(abs((meter.speed ?? 0) - 102_400) < 1)
        // Caught up: nothing read is waiting, the field goes.
        meter.update(bytesIn: 317_440, bytesOut: 1100, seconds: 3.2, received: 317_440)
        #expect(meter.line.received == nil)
        // A file mapped at once: the reading does not move after, the work's rate is the speed.
        var mapped = ProgressMeter(name: "f", total: 10 << 20, mode: .compress)
        mapped.update(bytesIn: 0, bytesOut: 0, seconds: 0.1, received: 10 << 20)
        for tenth in 2...40 {
            mapped.update(bytesIn: tenth << 18, bytesOut: 0, seconds: Double(tenth) / 10, received: 10 << 20)
        }
        #expect(abs((mapped.speed ?? 0) - Double(10 << 18)) < 1)
        #expect(mapped.line.received == nil)  // a file: not shown
        // With a size hint in 80 columns, the bytes read give way to the bar.
        var hinted = ProgressMeter(name: "(stdin)", total: 12_000_000, mode: .compress, showsReceived: true)
        hinted.update(bytesIn: 0, bytesOut: 0, seconds: 0.5, received: 4_000_000)
        #expect(hinted.text(width: 80).contains("% ["), "\(hinted.text(width: 80))")
        #expect(hinted.text(width: 120).contains("read "), "\(hinted.text(width: 120))")
    }
}
