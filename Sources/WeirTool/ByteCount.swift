import ArgumentParser

/// A size given on the command line: a number with an optional suffix
/// K, KB, KiB, M, MB, MiB, G, GB, GiB (all powers of 1024, as in zstd).
struct ByteCount: ExpressibleByArgument, Equatable {
    let bytes: Int

    init(bytes: Int) { self.bytes = bytes }

    init?(argument: String) {
        let digits = argument.prefix(while: \.isNumber)
        guard !digits.isEmpty, let value = Int(digits) else { return nil }
        let suffix = argument.dropFirst(digits.count).lowercased()
        let shift: Int
        switch suffix {
        case "", "b": shift = 0
        case "k", "kb", "kib": shift = 10
        case "m", "mb", "mib": shift = 20
        case "g", "gb", "gib": shift = 30
        default: return nil
        }
        let (bytes, overflow) = value.multipliedReportingOverflow(by: 1 << shift)
        guard !overflow else { return nil }
        self.bytes = bytes
    }

    static var defaultCompletionKind: CompletionKind { .default }
}
