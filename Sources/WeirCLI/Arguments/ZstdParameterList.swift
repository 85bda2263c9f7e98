import Weir

/// zstd's `--zstd=` list, `key=value` pairs joined by commas, in long or
/// short names: `wlog=23,clog=23,hlog=22,slog=6,mml=3,tlen=48,strat=6`.
/// `overlapLog`/`ovlog` is read and has no effect: weir's frames are
/// independent, there is no overlap between them to size.
package enum ZstdParameterList {
    /// The names of each parameter, long then short.
    static var names: [(long: String, short: String, keyPath: WritableKeyPath<CompressionParameters, Int?>?)] { [
        ("windowLog", "wlog", \.windowLog), ("chainLog", "clog", \.chainLog), ("hashLog", "hlog", \.hashLog),
        ("searchLog", "slog", \.searchLog), ("minMatch", "mml", \.minMatch), ("targetLength", "tlen", \.targetLength),
        ("strategy", "strat", \.strategy), ("overlapLog", "ovlog", nil), ("ldmHashLog", "lhlog", \.ldmHashLog),
        ("ldmMinMatch", "lmml", \.ldmMinMatch), ("ldmBucketSizeLog", "lblog", \.ldmBucketSizeLog),
        ("ldmHashRateLog", "lhrlog", \.ldmHashRateLog),
    ] }

    /// Sets the parameters of `text` in `parameters`, over what was there
    /// (several `--zstd=` add up, as in zstd); a value of 0 leaves the
    /// parameter to the level, as in zstd.
    ///
    /// - Returns: false, with `parameters` unchanged, when `text` is not a
    ///   valid list: an unknown name, a missing or non-numeric value, an
    ///   empty pair (`wlog=21,`).
    package static func parse(_ text: String, into parameters: inout CompressionParameters) -> Bool {
        var updated = parameters
        for pair in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let entry = names.first(where: { $0.long == parts[0] || $0.short == parts[0] }),
                  !parts[1].isEmpty, parts[1].allSatisfy(\.isASCIIDigit), let value = Int(parts[1]),
                  value <= Int(UInt32.max) else { return false }
            if let keyPath = entry.keyPath { updated[keyPath: keyPath] = value == 0 ? nil : value }
        }
        parameters = updated
        return true
    }

    /// zstd's line of the parameters a compression uses (`-vv`):
    /// `--zstd=wlog=N,clog=N,hlog=N,slog=N,mml=N,tlen=N,strat=N`.
    package static func line(_ resolved: (windowLog: Int, chainLog: Int, hashLog: Int, searchLog: Int, minMatch: Int,
                                          targetLength: Int, strategy: Int)) -> String {
        "--zstd=wlog=\(resolved.windowLog),clog=\(resolved.chainLog),hlog=\(resolved.hashLog),"
            + "slog=\(resolved.searchLog),mml=\(resolved.minMatch),tlen=\(resolved.targetLength),"
            + "strat=\(resolved.strategy)"
    }

    /// zstd's block of `--show-default-cparams` for a file of `size` bytes
    /// (nil: unknown).
    package static func defaultsBlock(name: String, size: Int?,
                                      _ resolved: (windowLog: Int, chainLog: Int, hashLog: Int, searchLog: Int,
                                                   minMatch: Int, targetLength: Int, strategy: Int)) -> String {
        (size.map { "\(name) (\($0) bytes)\n" } ?? "\(name) (src size unknown)\n")
            + " - windowLog     : \(resolved.windowLog)\n"
            + " - chainLog      : \(resolved.chainLog)\n"
            + " - hashLog       : \(resolved.hashLog)\n"
            + " - searchLog     : \(resolved.searchLog)\n"
            + " - minMatch      : \(resolved.minMatch)\n"
            + " - targetLength  : \(resolved.targetLength)\n"
            + " - strategy      : \(CompressionParameters.strategyName(resolved.strategy)) (\(resolved.strategy))\n"
    }
}

private extension Character {
    var isASCIIDigit: Bool { ("0" ... "9").contains(self) }
}
