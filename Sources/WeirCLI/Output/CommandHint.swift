import Weir

/// What a ``WeirError`` says could be changed, in the command line's flags:
/// zstd's hints (`use -f to overwrite it`). The library states the fact
/// (``WeirError/hint``); only the executable knows its flags.
package enum CommandHint {
    /// How the command line prints `error` after `weir: `: its description,
    /// then its hint.
    package static func message(for error: WeirError, limits: ProcessLimits = .current) -> String {
        error.description + (error.hint.map { text($0, limits: limits) } ?? "")
    }

    /// The words of `hint`, put after the reason. A window the process's
    /// memory limit (a cgroup's) cannot hold gets no `-M` advice: the run
    /// it advised would be killed by the kernel, not refused.
    package static func text(_ hint: WeirError.Hint, limits: ProcessLimits = .current) -> String {
        if let log = hint.windowLog, let bytes = hint.windowBytes {
            if let memory = limits.memoryLimit, bytes + UInt64(WorkerPlan.processBytes) > UInt64(memory) {
                return " (that is more than this process's memory limit of \(ByteFormat.string(memory)) allows: "
                    + "decode it where more memory is free)"
            }
            return " (use --long=\(log) or -M\(sizeArgument(bytes)))"
        }
        if hint.isKind(of: .compressionMemory(longWindowLog: nil)) {
            return hint.fittingLongWindowLog.map { " (--long=\($0) fits; or compress it where more memory is free)" }
                ?? " (compress it where more memory is free)"
        }
        return switch hint {
        case .forceOverwrite: "; use -f to overwrite it"
        case .forceRead: " (use -f to read it anyway)"
        case .forceTerminalOutput: " (use -c or -f to force)"
        case .nameOutput: "; use -o to name the output or -c to write to stdout"
        case .dictionary: "; give it with -D"
        case .raiseWindowLimit: " (use --long=N or -M to raise it)"
        case .moreSamples: "; give one file per sample, or cut files into samples of a fixed size with -B SIZE"
        case .resume: ": the same command goes on from there (remove it to start over)"
        case .addMemberIndex: "; weir --index FILE adds one in place"
        case .recompress: "; make one that can: weir -d -c FILE | weir > new.tar.zst"
        // A hint this build does not word (none: CommandHintTests checks `Hint.every`).
        default: ""
        }
    }

    /// The smallest `-M` argument, in whole KiB below 1 MiB and in whole MiB
    /// above, that is at least `bytes`.
    static func sizeArgument(_ bytes: UInt64) -> String {
        let kibibyte: UInt64 = 1 << 10
        let mebibyte: UInt64 = 1 << 20
        if bytes <= mebibyte { return "\((bytes + kibibyte - 1) / kibibyte)K" }
        return "\((bytes + mebibyte - 1) / mebibyte)M"
    }
}
