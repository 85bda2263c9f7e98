import Dispatch
import Glibc
import CSupport

/// Jobs' outcomes, kept in the order they are added, whose outputs are
/// committed together: durable before destructive.
///
/// For each group (``commit()``): the outputs' data goes to disk first
/// (one `syncfs` per file system, then `fdatasync` of each file — by then a
/// cheap check that reports that file's own write errors); only then does
/// each output take its name; then, when some input is to be removed, the
/// folders that hold those names are synced (`fsync`); only then are those
/// inputs removed. At every moment of a power cut, each input is either still
/// there, whole, or its output is there, whole, under its name: a name never
/// holds a partial file, and `-f` replaces a file with one `rename`.
///
/// Why a group: on ext4 each `fdatasync` of a new file waits for its own
/// journal commit, which made one sync per small file several times slower
/// than the compression itself on a tree; a group of up to ``maximumFiles``
/// outputs costs two commits. A group is due (``isDue``) when it holds that
/// many files, ``maximumBytes`` to write, or an output older than
/// ``maximumAge``: the wait between a file's end and its name (and its
/// report) stays short.
///
/// Without `sync` (`--no-sync`), the same steps run without the syncs: as
/// fast as before, safe from every failure but a power cut.
///
/// Used by one thread (the one that reports the outcomes); not Sendable.
package final class CommitQueue {
    /// The most outputs in one group: each keeps its temporary file open
    /// until its sync, within the descriptors a process gets by default (1024).
    static let maximumFiles = 256
    /// The most bytes waiting for one sync: beyond this, writeback has most
    /// of them on disk already and the sync costs little for its size.
    static let maximumBytes = 64 << 20
    /// The longest an output waits for its name.
    static let maximumAge: DispatchTimeInterval = .seconds(1)

    /// Whether outputs are synced.
    package let sync: Bool
    private var entries: [(tag: Int, finished: Result<FinishedJob, WeirError>)] = []
    private var files = 0
    private var bytes = 0
    private var oldest: DispatchTime?

    package init(sync: Bool) {
        self.sync = sync
    }

    /// Whether nothing waits.
    package var isEmpty: Bool { entries.isEmpty }

    /// Adds a job's outcome under `tag` (its index, for the caller).
    package func add(_ tag: Int, _ finished: Result<FinishedJob, WeirError>) {
        entries.append((tag, finished))
        guard case .success(let job) = finished, job.output != nil else { return }
        files += 1
        bytes += job.unsyncedBytes
        if oldest == nil { oldest = .now() }
    }

    /// When the oldest waiting output becomes due by its age; nil when
    /// none waits.
    package var deadline: DispatchTime? { oldest.map { $0 + Self.maximumAge } }

    /// Whether the waiting outputs should be committed now.
    package var isDue: Bool {
        files >= Self.maximumFiles || bytes >= Self.maximumBytes || deadline.map { $0 <= .now() } == true
    }

    /// Commits every waiting output as described above and removes the
    /// inputs asked for; returns each outcome, in the order added. A job whose
    /// sync, name or input removal fails gets that error: its output is
    /// removed unless it already has its name, and its input is kept.
    package func commit() -> [(tag: Int, outcome: Result<Statistics, WeirError>)] {
        var outcomes = entries.map { entry in
            (tag: entry.tag, outcome: entry.finished.map(\.statistics))
        }
        let jobs = entries.map { try? $0.finished.get() }
        entries.removeAll()
        files = 0
        bytes = 0
        oldest = nil
        func fail(_ index: Int, _ error: WeirError) {
            jobs[index]?.output?.discard()
            outcomes[index].outcome = .failure(error)
        }
        let written = jobs.indices.filter { jobs[$0]?.output != nil }
        if sync {
            // One writeback of each file system the outputs are on; then
            // each file's own sync, already done, reports its own errors.
            if written.count > 1 {
                var synced = Set<UInt64>()
                for index in written {
                    let output = jobs[index]!.output!
                    guard output.temporaryPath != nil,
                          let status = try? FileStatus.of(descriptor: output.descriptor, path: output.path),
                          synced.insert(status.device).inserted else { continue }
                    _ = weir_syncfs(output.descriptor)
                }
            }
            for index in written {
                do throws(WeirError) { try jobs[index]!.output!.syncData() } catch { fail(index, error) }
            }
        }
        var named: [Int] = []
        for index in written where outcomes[index].outcome.isSuccess {
            do throws(WeirError) {
                try jobs[index]!.output!.publish()
                named.append(index)
            } catch {
                fail(index, error)
            }
        }
        let removing = named.filter { jobs[$0]!.removesInput }
        var unsyncedFolders: [String: WeirError] = [:]
        if sync {
            var folders = Set<String>()
            for index in removing where folders.insert(jobs[index]!.output!.folder).inserted {
                let folder = jobs[index]!.output!.folder
                do throws(WeirError) { try OutputFile.syncFolder(folder) } catch { unsyncedFolders[folder] = error }
            }
        }
        for index in removing {
            let job = jobs[index]!
            if let error = unsyncedFolders[job.output!.folder] {
                outcomes[index].outcome = .failure(error)  // the output keeps its name; the input stays
                continue
            }
            if FileName.withCString(job.input, unlink) != 0 {
                outcomes[index].outcome = .failure(.system(errno, path: job.input, operation: .remove))
            }
        }
        return outcomes
    }

    /// Removes every waiting output (a cancelled run): no name is given, no
    /// input removed.
    package func discard() {
        for entry in entries { (try? entry.finished.get())?.output?.discard() }
        entries.removeAll()
        files = 0
        bytes = 0
        oldest = nil
    }

    deinit { discard() }
}

private extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
