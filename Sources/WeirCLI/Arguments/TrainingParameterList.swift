import Weir

/// The parameters of zstd's `--train-cover=`, `--train-fastcover=` and
/// `--train-legacy=`, read as zstd 1.5.4's command line reads them
/// (zstdcli.c's `parseCoverParameters`, `parseFastCoverParameters`,
/// `parseLegacyParameters`), and the lines zstd prints of the parameters a
/// search chose.
///
/// A list is `key=value` pairs joined by commas, in any order, a later pair
/// overriding an earlier one; keys not named are 0 (libzstd's default or a
/// search). `shrink` takes an optional value (the regression allowed, 1 by
/// default). A value is a number with an optional `K` or `M` suffix (× 1024,
/// × 1024²), which may be followed by `i` and `B`: `k=1K`, `split=80`.
package enum TrainingParameterList {
    /// COVER's parameters from `text`: `k=N,d=N,steps=N,split=N,shrink[=N]`;
    /// nil when it is not such a list (an unknown key, a trailing comma, an
    /// empty list, a value past 32 bits).
    package static func cover(_ text: String) -> DictionaryBuilder.Parameters? {
        parse(text, keys: ["k=", "d=", "steps=", "split=", "shrink"])
    }

    /// fastCover's parameters from `text`:
    /// `k=N,d=N,f=N,steps=N,split=N,accel=N,shrink[=N]`; nil when it is not
    /// such a list.
    package static func fastCover(_ text: String) -> DictionaryBuilder.Parameters? {
        parse(text, keys: ["k=", "d=", "f=", "steps=", "accel=", "split=", "shrink"])
    }

    /// The legacy builder's selectivity from `text`: `s=N` or
    /// `selectivity=N`; nil otherwise.
    package static func legacy(_ text: String) -> UInt32? {
        var rest = Substring(text)
        guard take("s=", from: &rest) || take("selectivity=", from: &rest), let value = number(&rest),
              rest.isEmpty else { return nil }
        return value
    }

    /// What zstd prints after a search, one `key=value` a line: k, d, (f,)
    /// steps, split (and accel) of what it chose.
    package static func chosen(_ builder: DictionaryBuilder) -> String {
        switch builder {
        case .cover(let chosen):
            "k=\(chosen.k)\nd=\(chosen.d)\nsteps=\(chosen.steps)\nsplit=\(chosen.split)\n"
        case .fastCover(let chosen):
            "k=\(chosen.k)\nd=\(chosen.d)\nf=\(chosen.f)\nsteps=\(chosen.steps)\nsplit=\(chosen.split)\n"
                + "accel=\(chosen.accel)\n"
        case .legacy: ""
        }
    }

    /// zstd's loop: each pair starts with one of `keys`, its value up to a
    /// comma, which must be followed by another pair; nothing may follow
    /// the last value.
    static func parse(_ text: String, keys: [String]) -> DictionaryBuilder.Parameters? {
        var parameters = DictionaryBuilder.Parameters()
        var rest = Substring(text)
        while true {
            guard let key = keys.first(where: { take($0, from: &rest) }) else { return nil }
            if key == "shrink" {
                var regression: UInt32 = 1
                if take("=", from: &rest) {
                    guard let value = number(&rest) else { return nil }
                    regression = value
                }
                parameters.shrink = regression
            } else {
                guard let value = number(&rest) else { return nil }
                switch key {
                case "k=": parameters.k = value
                case "d=": parameters.d = value
                case "f=": parameters.f = value
                case "steps=": parameters.steps = value
                case "accel=": parameters.accel = value
                default: parameters.split = value
                }
            }
            if !take(",", from: &rest) { break }
        }
        return rest.isEmpty ? parameters : nil
    }

    /// Removes `prefix` from the start of `text`; whether it was there.
    static func take(_ prefix: String, from text: inout Substring) -> Bool {
        guard text.hasPrefix(prefix) else { return false }
        text = text.dropFirst(prefix.count)
        return true
    }

    /// zstd's `readU32FromChar`: the digits at the start of `text` (none is
    /// 0), times 1024 after `K` or 1024² after `M`, which may be followed by
    /// `i` then `B`; all of it removed from `text`. Nil past 32 bits, where
    /// zstd stops with an error.
    static func number(_ text: inout Substring) -> UInt32? {
        var value: UInt32 = 0
        while let digit = text.first?.asciiValue, (48...57).contains(digit) {
            let (tens, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = tens.addingReportingOverflow(UInt32(digit - 48))
            guard !overflow, !carry else { return nil }
            value = sum
            text.removeFirst()
        }
        if let unit = text.first, unit == "K" || unit == "M" {
            let shift: UInt32 = unit == "K" ? 10 : 20
            guard value <= UInt32.max >> shift else { return nil }
            value <<= shift
            text.removeFirst()
            if text.first == "i" { text.removeFirst() }
            if text.first == "B" { text.removeFirst() }
        }
        return value
    }
}
