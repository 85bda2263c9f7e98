import Glibc
import WeirSystem

/// How many cores the machine has, counted as zstd's `--auto-threads`
/// counts them.
package enum CoreCount {
    /// The cores this process may run on (hyper-threads included).
    package static var logical: Int { CompressionOptions.availableCores }

    /// The physical cores: ``logical`` divided by the hyper-threads per core
    /// that `/proc/cpuinfo` declares; ``logical`` when it cannot be read.
    package static var physical: Int {
        physical(cpuinfo: (try? String(contentsOfProcFile: "/proc/cpuinfo")) ?? "", logical: logical)
    }

    /// `logical` divided by `siblings / cpu cores` of the first processor
    /// `cpuinfo` describes, as zstd's `UTIL_countPhysicalCores` reads them:
    /// unchanged when either is missing, or when they say one thread per core.
    package static func physical(cpuinfo: String, logical: Int) -> Int {
        func value(_ key: String) -> Int? {
            for line in cpuinfo.split(separator: "\n") where line.hasPrefix(key) {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[..<colon].trimmingCharacters(in: " \t")
                guard name == key else { continue }
                return Int(line[line.index(after: colon)...].trimmingCharacters(in: " \t"))
            }
            return nil
        }
        guard let siblings = value("siblings"), let cores = value("cpu cores"), cores > 0, siblings > cores else {
            return logical
        }
        let ratio = siblings / cores
        return logical > ratio ? logical / ratio : logical
    }
}

private extension StringProtocol {
    func trimmingCharacters(in set: String) -> String {
        let characters = Set(set)
        var text = Substring(self)
        while let first = text.first, characters.contains(first) { text.removeFirst() }
        while let last = text.last, characters.contains(last) { text.removeLast() }
        return String(text)
    }
}

private extension String {
    /// The text of a /proc file, whose size `stat` reports as 0: read until
    /// the end.
    init(contentsOfProcFile path: String) throws(WeirError) {
        let file = try Descriptor.openForReading(path)
        defer { file.close() }
        self = String(decoding: try file.readToEnd(), as: UTF8.self)
    }
}
