import Weir

/// What `-v` says about the workers of a run, and which limit chose their
/// number, as in `2 workers (CPU quota 1.5 cores)` or
/// `1 worker, 4.00 MiB frames (memory limit 128.0 MiB, about 81.2 MiB)`;
/// and the warning for a `-T` that the memory limit cannot hold.
package enum WorkerLine {
    /// The line, without `weir: ` and without a newline.
    package static func text(_ plan: WorkerPlan) -> String {
        var subject = "\(plan.workers) worker\(plan.workers == 1 ? "" : "s")"
        if let chunk = plan.chunkSize { subject += ", \(ByteFormat.string(chunk)) frames" }
        let reason = switch plan.reason {
        case .requested: "-T\(plan.workers)"
        case .onlineCores(let cores): "\(cores) core\(cores == 1 ? "" : "s") online"
        case .affinity(let cores, let online): "affinity: \(cores) of \(online) cores"
        case .cpuQuota(let cores): "CPU quota " + CFormat.string("%g", cores) + " core\(cores == 1 ? "" : "s")"
        case .memoryLimit(let bytes): "memory limit \(ByteFormat.string(bytes))"
        }
        var details = [reason]
        if let limit = plan.memoryLimit {
            if case .memoryLimit = plan.reason {} else { details.append("memory limit \(ByteFormat.string(limit))") }
            details.append("about \(ByteFormat.string(plan.estimatedPeak))")
        }
        if let memory = plan.decompressionMemory { details.append("-M \(ByteFormat.string(memory))") }
        return "\(subject) (\(details.joined(separator: ", ")))"
    }

    /// Whether `-v` shows the line: when a limit narrowed the count (an
    /// affinity mask, a CPU quota, a memory limit) or a memory limit is set;
    /// one worker per online core, or `-T` without a memory limit, shows at
    /// `-vv` only, so that `-v` adds nothing on an unlimited machine.
    package static func isNotable(_ plan: WorkerPlan) -> Bool {
        if plan.memoryLimit != nil { return true }
        switch plan.reason {
        case .requested, .onlineCores: return false
        case .affinity, .cpuQuota, .memoryLimit: return true
        }
    }

    /// The warning for workers asked for that are estimated to take more
    /// than their share of the memory limit; nil when they fit.
    package static func warning(_ plan: WorkerPlan) -> String? {
        guard plan.reason == .requested, plan.exceedsMemory, let limit = plan.memoryLimit else { return nil }
        let (workers, them) = plan.workers == 1 ? ("1 worker needs", "it") : ("\(plan.workers) workers need", "them")
        return "-T\(plan.workers): \(workers) about \(ByteFormat.string(plan.estimatedPeak)), more than half "
            + "the memory limit of \(ByteFormat.string(limit)); running \(them) anyway"
    }
}
