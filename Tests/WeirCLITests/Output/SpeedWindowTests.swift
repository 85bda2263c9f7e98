import Testing
import WeirCLI

/// The current speed is measured over the last few seconds, not since the start.
@Suite("speed window")
struct SpeedWindowTests {
    @Test("no speed before time passes; a steady rate reads as itself")
    func steady() {
        var window = SpeedWindow(span: 3)
        #expect(window.bytesPerSecond == nil)
        for tick in 1...50 {
            window.record(time: Double(tick) / 10, bytes: tick * 10_000)  // 100 kB/s
        }
        #expect(abs(window.bytesPerSecond! - 100_000) < 1e-6)
    }

    @Test("after a change of rate, the window shows the new rate, not the average")
    func followsChanges() {
        var window = SpeedWindow(span: 3)
        var bytes = 0
        var tick = 0
        var time: Double { Double(tick) / 10 }
        for _ in 0..<100 {  // 10 s at 1 MB/s
            tick += 1; bytes += 100_000
            window.record(time: time, bytes: bytes)
        }
        #expect(abs(window.bytesPerSecond! - 1_000_000) < 1)
        for _ in 0..<40 {  // then a stall of 4 s: nothing read
            tick += 1
            window.record(time: time, bytes: bytes)
        }
        #expect(window.bytesPerSecond! == 0)  // the average since the start would be ~714 kB/s
        for _ in 0..<10 {  // 1 s at 3 MB/s: part of the window only
            tick += 1; bytes += 300_000
            window.record(time: time, bytes: bytes)
        }
        #expect(abs(window.bytesPerSecond! - 1_000_000) < 1)  // 3 MB over the last 3 s
    }

    @Test("repeated times do not divide by zero and keep the largest count")
    func sameTime() {
        var window = SpeedWindow(span: 3, start: 5)
        window.record(time: 5, bytes: 10)
        #expect(window.bytesPerSecond == nil)
        window.record(time: 6, bytes: 100)
        window.record(time: 6, bytes: 50)
        #expect(window.bytesPerSecond == 90)
    }
}
