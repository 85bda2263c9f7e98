import Foundation
import Testing
import Weir
import WeirCLI

/// A `--progress=json` record from a meter driven by a fake clock: every key,
/// null where not known, the level only when compressing.
@Suite("progress record")
struct ProgressRecordTests {
    func parsed(_ record: ProgressRecord) throws -> [String: Any] {
        let parsed = try JSONSerialization.jsonObject(with: Data(record.line().utf8))
        return try #require(parsed as? [String: Any])
    }

    @Test("compressing with a known total: percent, speed, ETA, level and frames")
    func known() throws {
        var meter = ProgressMeter(name: "big.tar", file: 2, files: 3, total: 100 << 20, mode: .compress)
        for tenth in 1 ... 20 { meter.update(bytesIn: tenth << 20, bytesOut: tenth << 18, seconds: Double(tenth) / 10) }
        let object = try parsed(ProgressRecord(event: .progress, meter: meter, input: "big.tar", level: 19, frames: 1))
        #expect(Set(object.keys) == Set(ProgressRecord.keys))
        #expect(object["event"] as? String == "progress" && object["operation"] as? String == "compress")
        #expect(object["input"] as? String == "big.tar")
        #expect(object["file"] as? Int == 2 && object["files"] as? Int == 3)
        #expect(object["bytes_in"] as? Int == 20 << 20 && object["bytes_out"] as? Int == 5 << 20)
        #expect(object["total_bytes"] as? Int == 100 << 20)
        #expect(abs((object["percent"] as? Double ?? 0) - 20) < 1e-9)
        #expect(abs((object["bytes_per_second"] as? Double ?? 0) - Double(10 << 20)) < 1)
        #expect(abs((object["eta_seconds"] as? Double ?? 0) - 8) < 1e-6)
        #expect(abs((object["seconds"] as? Double ?? 0) - 2) < 1e-9)
        #expect(object["level"] as? Int == 19 && object["frames"] as? Int == 1)
    }

    @Test("no total: null percent, total and ETA; decompressing: null level, frames decoded")
    func unknown() throws {
        var piped = ProgressMeter(name: "(stdin)", total: nil, mode: .compress)
        piped.update(bytesIn: 5, bytesOut: 1, seconds: 1)
        let object = try parsed(ProgressRecord(event: .end, meter: piped, input: "-", level: 3, frames: 1))
        #expect(object["event"] as? String == "end")
        for key in ["total_bytes", "percent", "eta_seconds"] { #expect(object[key] is NSNull, "\(key)") }
        #expect(object["bytes_in"] as? Int == 5)

        var decoding = ProgressMeter(name: "a.zst", total: 10, mode: .decompress)
        decoding.update(bytesIn: 10, bytesOut: 40, seconds: 1)
        let decoded = try parsed(ProgressRecord(event: .end, meter: decoding, input: "a.zst", level: 3, frames: 2))
        #expect(decoded["level"] is NSNull && decoded["frames"] as? Int == 2)
        #expect(decoded["percent"] as? Double == 100)
    }

    @Test("a hint passed: percent waits below 100, then the end gives 100 and the true size; a failure never 100")
    func outcome() throws {
        var hinted = ProgressMeter(name: "(stdin)", total: 10, mode: .compress)
        hinted.update(bytesIn: 11, bytesOut: 1, seconds: 1)
        let running = try parsed(ProgressRecord(event: .progress, meter: hinted, input: "-", level: 3, frames: 0))
        #expect(running["percent"] as? Double == ProgressRecord.unfinishedPercent)
        #expect(running["status"] is NSNull && running["eta_seconds"] is NSNull)
        let ended = try parsed(ProgressRecord(event: .end, meter: hinted, input: "-", level: 3, frames: 1))
        #expect(ended["percent"] as? Double == 100 && ended["total_bytes"] as? Int == 11)
        #expect(ended["status"] as? String == "ok")

        var whole = ProgressMeter(name: "a.zst", total: 10, mode: .decompress)
        whole.update(bytesIn: 10, bytesOut: 40, seconds: 1)
        let failed = try parsed(ProgressRecord(event: .end, meter: whole, input: "a.zst", level: nil, frames: 2,
                                               status: .error))
        #expect(failed["status"] as? String == "error")
        #expect((failed["percent"] as? Double ?? 100) < 100)
    }
}
