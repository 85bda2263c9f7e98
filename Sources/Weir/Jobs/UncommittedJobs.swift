import WeirSystem

/// The jobs a run made, by input index, until their commits are reported.
///
/// Invariant: a run stores an index's job here before it adds that index's
/// outcome to its ``CommitQueue``, and takes it once, when the queue hands
/// the index back committed; so ``take(_:)`` always finds it. A miss is a
/// broken run loop, not bad input: it stops the process with the index
/// named, rather than report a file that was never made.
struct UncommittedJobs {
    private var jobs: [Int: Result<FileJob, WeirError>] = [:]

    /// Stores the job made for `index`.
    subscript(index: Int) -> Result<FileJob, WeirError>? {
        get { jobs[index] }
        set { jobs[index] = newValue }
    }

    /// The job made for `index`, which the commit queue just handed back.
    mutating func take(_ index: Int) -> Result<FileJob, WeirError> {
        guard let job = jobs.removeValue(forKey: index) else {
            preconditionFailure("input \(index) was committed but its job was never stored")
        }
        return job
    }
}
