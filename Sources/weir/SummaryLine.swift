import Foundation
import Weir

/// The one-line summary after a file, as in
/// `linux.tar: 14.75% (1.27 GiB => 191.5 MiB, linux.tar.zst) in 1.46 s, 890 MiB/s, 2 threads`.
struct SummaryLine {
    let job: FileJob
    let statistics: Statistics

    var text: String {
        let seconds = String(format: "%.2f s", statistics.seconds)
        let speed = statistics.seconds > 0
            ? ByteFormat.string(Int(Double(statistics.bytesIn) / statistics.seconds)) + "/s" : "-"
        let threads = "\(statistics.threads) thread\(statistics.threads == 1 ? "" : "s")"
        switch job.operation {
        case .compress:
            let percent = String(format: "%.2f%%", statistics.ratio * 100)
            return "\(job.inputName): \(percent) (\(ByteFormat.string(statistics.bytesIn)) => \(ByteFormat.string(statistics.bytesOut)), \(job.outputName)) in \(seconds), \(speed), \(threads)"
        case .decompress:
            return "\(job.inputName): \(ByteFormat.string(statistics.bytesIn)) => \(ByteFormat.string(statistics.bytesOut)), \(job.outputName) in \(seconds), \(speed), \(statistics.frames) frames"
        case .test:
            return "\(job.inputName): OK, \(ByteFormat.string(statistics.bytesIn)) => \(ByteFormat.string(statistics.bytesOut)) in \(seconds), \(statistics.frames) frames"
        }
    }
}

/// Byte counts in binary units: `512 B`, `1.50 KiB`, `191.5 MiB`, `1.27 GiB`.
enum ByteFormat {
    static func string(_ bytes: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) B" }
        let format = value >= 100 ? "%.1f %@" : "%.2f %@"
        return String(format: format, value, units[unit])
    }
}
