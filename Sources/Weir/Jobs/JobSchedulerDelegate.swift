import WeirPipeline
import WeirSystem

/// What ``JobScheduler`` asks of the program whose jobs it runs: the jobs,
/// made when needed, and what to do as each starts, ends and is reported.
/// One object, so a program keeps the state of its run (a progress line,
/// the failures so far) in one place. Every call comes on the thread that
/// called ``JobScheduler/run(_:width:followedLive:cancellation:sync:delegate:)``.
package protocol JobSchedulerDelegate: AnyObject {
    /// The job of input `index` as it would be made, asking nothing (nil if
    /// it cannot be made); only its names are looked at.
    func plannedJob(_ index: Int) -> FileJob?
    /// Makes the job of input `index`, in order, when it is needed (it may
    /// ask the user).
    func makeJob(_ index: Int) -> Result<FileJob, WeirError>
    /// Job `index` starts (one by one): the observer of its progress, nil
    /// for none.
    func jobStarted(_ index: Int, _ job: FileJob) -> ProgressObserver?
    /// The job started has done its work (`succeeded`: without an error;
    /// its output may still fail to be committed); its report comes once
    /// its output is committed.
    func jobEnded(succeeded: Bool)
    /// The outcome of job `index`, in input order, once its output is
    /// committed; a job ``makeJob(_:)`` failed to make comes with its error.
    func report(_ index: Int, made: Result<FileJob, WeirError>, outcome: FileJob.Outcome)
}
