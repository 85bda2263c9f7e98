import Dispatch
import Glibc
import WeirPipeline
import WeirSystem

/// Jobs' outcomes, kept in the order they are added, whose outputs are
/// committed in groups (``CommitGroup``): durable before destructive. At
/// every moment of a power cut, each input is either still there, whole, or
/// its output is there, whole, under its name: a name never holds a partial
/// file, and `-f` replaces a file with one `rename`.
///
/// Why groups: on ext4 each `fdatasync` of a new file waits for a journal
/// commit of its own, which made one sync per small file several times
/// slower than the compression itself on a tree; a group of up to
/// ``maximumFiles`` outputs costs two. A group is due (``isDue``) when it
/// holds that many files, ``maximumBytes`` to write, or an output older than
/// ``maximumAge``: the wait between a file's end and its name (and its
/// report) stays short.
///
/// Why a thread of its own: a group's syncs wait for the disk; waited for
/// by the thread that makes or runs the jobs, they left the cores idle
/// (bench/results/2026-11-27-comment-numbers.md, "Commit groups"). ``handOff()``
/// gives a due group to a committing thread, one group at a time, in order,
/// while the next one fills; its outcomes come back through ``committed()``,
/// and `wake` tells the owner they are there. At most two groups are open,
/// so at most 2 × ``maximumFiles`` temporary files stay open.
///
/// Without `sync` (`--no-sync`), the same steps run without the syncs: as
/// fast as before, safe from every failure but a power cut.
///
/// Used by one thread, its owner (the one that reports the outcomes); the
/// committing thread touches only `shared`.
package final class CommitQueue {
    /// The most outputs in one group: each keeps its temporary file open
    /// until its sync and two groups may be open, within the process's
    /// descriptor limit (its soft `RLIMIT_NOFILE`, less 256 for the rest):
    /// 384 with the usual 1024, 4096 at most. The fewer groups, the fewer
    /// journal commits.
    static let maximumFiles: Int = {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 384 }
        let open = Int(clamping: limit.rlim_cur)  // RLIM_INFINITY is the largest value
        return max(16, min(4096, (open - 256) / 2))
    }()
    /// The most bytes waiting for one sync: beyond this, writeback has most
    /// of them on disk already and the sync costs little for its size.
    static let maximumBytes = 64 << 20
    /// The longest an output waits before its group is due.
    static let maximumAge: DispatchTimeInterval = .seconds(1)

    /// Whether outputs are synced.
    package let sync: Bool
    private let wake: @Sendable () -> Void
    private var filling = CommitGroup()
    private var files = 0
    private var bytes = 0
    private var oldest: DispatchTime?
    /// What the committing thread shares with the owner.
    private let shared = ConditionLock(Shared())

    /// - Parameters:
    ///   - sync: whether outputs are synced.
    ///   - wake: called on the committing thread when a group's outcomes are
    ///     ready (the owner may be waiting on a lock of its own).
    package init(sync: Bool, wake: @escaping @Sendable () -> Void = {}) {
        self.sync = sync
        self.wake = wake
    }

    /// Whether nothing waits, filling or committing.
    package var isEmpty: Bool {
        filling.entries.isEmpty && shared.withLock { !$0.committing && $0.committed.isEmpty }
    }

    /// Adds a job's outcome under `tag` (its index, for the caller).
    package func add(_ tag: Int, _ finished: Result<FinishedJob, WeirError>) {
        filling.entries.append((tag, finished))
        guard case .success(let job) = finished, job.output != nil else { return }
        files += 1
        bytes += job.unsyncedBytes
        if oldest == nil { oldest = .now() }
    }

    /// When the oldest output of the filling group becomes due by its age;
    /// nil when it has none.
    package var deadline: DispatchTime? { oldest.map { $0 + Self.maximumAge } }

    /// Whether the filling group should be committed now.
    package var isDue: Bool {
        files >= Self.maximumFiles || bytes >= Self.maximumBytes || deadline.map { $0 <= .now() } == true
    }

    /// Whether the filling group is full while another is committed: the
    /// owner waits for it (``waitForCommitting()``) before adding more.
    package var isFull: Bool { files >= Self.maximumFiles && isCommitting }

    /// Whether a group is being committed.
    package var isCommitting: Bool { shared.withLock { $0.committing } }

    /// Whether outcomes wait to be taken (``committed()``).
    package var hasCommitted: Bool { shared.withLock { !$0.committed.isEmpty } }

    /// Gives the filling group to a committing thread, unless one is being
    /// committed or the filling one is empty; returns whether it did.
    @discardableResult
    package func handOff() -> Bool {
        guard !filling.entries.isEmpty, shared.withLock({ state in
            if state.committing { return false }
            state.committing = true
            return true
        }) else { return false }
        let group = filling
        clearFilling()
        let sync = self.sync
        let shared = self.shared
        let wake = self.wake
        DedicatedThread.start(name: "weir.commit") {
            let outcomes = group.commit(sync: sync)
            shared.withLock(broadcast: true) { state in
                state.committed += outcomes
                state.committing = false
            }
            wake()
        }
        return true
    }

    /// Takes the outcomes committed so far, in the order added.
    package func committed() -> [(tag: Int, outcome: Result<Statistics, WeirError>)] {
        shared.withLock { state in
            defer { state.committed.removeAll() }
            return state.committed
        }
    }

    /// Waits until no group is being committed.
    package func waitForCommitting() {
        shared.withLock(when: { !$0.committing }) { _ in }
    }

    /// Commits everything that waits, on this thread after the group being
    /// committed, and returns every outcome not yet taken, in order.
    package func commitAll() -> [(tag: Int, outcome: Result<Statistics, WeirError>)] {
        waitForCommitting()
        var outcomes = committed()
        if !filling.entries.isEmpty {
            outcomes += filling.commit(sync: sync)
            clearFilling()
        }
        return outcomes
    }

    /// Removes every output of the filling group (a cancelled run): no name
    /// is given, no input removed; a group being committed ends first, and
    /// no outcome is reported.
    package func discard() {
        waitForCommitting()
        _ = committed()
        filling.discard()
        clearFilling()
    }

    private func clearFilling() {
        filling = CommitGroup()
        files = 0
        bytes = 0
        oldest = nil
    }

    deinit { discard() }

    /// Whether a group is being committed and the outcomes committed and not
    /// yet taken: a ``ConditionLock``'s state, whose broadcast wakes
    /// ``waitForCommitting()``.
    private struct Shared {
        var committing = false
        var committed: [(tag: Int, outcome: Result<Statistics, WeirError>)] = []
    }
}
