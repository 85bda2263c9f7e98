import Glibc
import WeirFiles
import WeirPipeline
import WeirSystem

/// Finished jobs whose outputs are committed together, durable before
/// destructive (see ``CommitQueue``): the outputs' data goes to disk first;
/// only then does each output take its name; then, when some input is to be
/// removed, the new names go to disk; only then are those inputs removed.
///
/// How, with one output: `fdatasync` of the file, and `fsync` of its folder
/// (so too for each output on a FUSE file system, whose `syncfs` reaches no
/// file of its daemon: ``DiskSync/fileSystemSyncReachesFiles(_:)``).
/// With several: one `syncfs` per file system writes every file and commits
/// the journal once, and a `sync_file_range` wait on each file then reports
/// that file's own write error; after the renames, one more `syncfs`. Not
/// `fdatasync` and `fsync` per file and folder: on ext4 each `fsync` of a
/// folder forces a journal commit of its own and each `fdatasync` a device
/// cache flush, even with nothing left to write — hundreds per group on a
/// tree (docs/design.md, "Durability").
struct CommitGroup: Sendable {
    /// Each job's tag (its index, for the caller) and outcome, in order.
    var entries: [(tag: Int, finished: Result<FinishedJob, WeirError>)] = []

    /// Commits every output as described above and removes the inputs asked
    /// for; returns each outcome, in order. A job whose sync, name or input
    /// removal fails gets that error: its output is removed unless it already
    /// has its name, and its input is kept. Without `sync`, the same steps
    /// without the syncs.
    func commit(sync: Bool) -> [(tag: Int, outcome: Result<Statistics, WeirError>)] {
        var outcomes = entries.map { entry in (tag: entry.tag, outcome: entry.finished.map(\.statistics)) }
        var stages = entries.map { Stage($0.finished) }
        func fail(_ index: Int, _ error: WeirError) {
            stages[index].output?.discard()
            stages[index] = .settled
            outcomes[index].outcome = .failure(error)
        }
        // A device written in place is closed, never synced nor named.
        for (index, stage) in stages.enumerated() {
            guard case .inPlace(let output) = stage else { continue }
            do throws(WeirError) {
                try output.publish()
                stages[index] = .settled
            } catch {
                fail(index, error)
            }
        }
        let written = stages.enumerated().compactMap { index, stage -> (index: Int, output: OutputFile)? in
            if case .written(_, let output) = stage { (index: index, output: output) } else { nil }
        }
        let alone = written.count == 1
        // 1. The data, on disk.
        if sync, alone {
            do throws(WeirError) { try written[0].output.syncData() } catch { fail(written[0].index, error) }
        } else if sync {
            var synced: [UInt64: Result<Void, WeirError>] = [:]
            for (index, output) in written {
                if !DiskSync.fileSystemSyncReachesFiles(output.descriptor) {
                    do throws(WeirError) { try output.syncData() } catch { fail(index, error) }
                    continue
                }
                let fileSystem = synced[output.device] ?? Result { () throws(WeirError) in
                    try DiskSync.fileSystem(of: output.descriptor)
                }
                synced[output.device] = fileSystem
                if case .failure(let error) = fileSystem {
                    fail(index, error)  // that file system lost some write: no input on it goes
                } else if let error = output.checkpointSyncError {
                    fail(index, error)  // final: the bytes it could not write may be gone
                } else {
                    do throws(WeirError) { try DiskSync.waitWritten(output.descriptor) } catch {
                        fail(index, error)
                    }
                }
            }
        }
        // 2. The names.
        for (index, stage) in stages.enumerated() {
            guard case .written(let job, let output) = stage else { continue }
            do throws(WeirError) {
                try output.publish(synced: sync)
                stages[index] = .named(job, output)
            } catch {
                fail(index, error)
            }
        }
        // 3. The names, on disk, before any input goes.
        // Each folder alone (`fsync`) for one output, and on a file system
        // whose `syncfs` does not reach its files; else each file system once.
        let removing = stages.enumerated().compactMap {
            index, stage -> (index: Int, job: FinishedJob, output: OutputFile)? in
            if case .named(let job, let output) = stage, job.removesInput {
                (index: index, job: job, output: output)
            } else {
                nil
            }
        }
        var synced: [String: Result<Void, WeirError>] = [:]
        for (index, _, output) in removing where sync {
            // (By the folder's name: the output's descriptor is closed by now.)
            let byFolder = alone || !DiskSync.fileSystemSyncReachesFiles(inFolder: output.folder)
            let key = byFolder ? "folder " + output.folder : "device \(output.device)"
            let folders = synced[key] ?? Result { () throws(WeirError) in
                if byFolder {
                    try DiskSync.folder(output.folder)
                } else {
                    try DiskSync.fileSystem(holding: output.folder)
                }
            }
            synced[key] = folders
            if case .failure(let error) = folders {
                // The output keeps its name, whose durability is not known; the input stays.
                let code = error.kind.errno ?? EIO
                stages[index] = .settled
                outcomes[index].outcome = .failure(.folderSyncFailed(code, output: output.path, folder: output.folder))
            }
        }
        // 4. The inputs.
        for (index, job, _) in removing {
            guard case .named = stages[index] else { continue }
            // Only the file that was read goes: one that grew or shrank
            // since its end was read (a writer still at work) is kept.
            if let now = FileStatus.of(path: job.input), now.isRegularFile, now.size != job.statistics.bytesIn,
               !InputKind.sizeIsUntrusted(path: job.input) {
                outcomes[index].outcome = .failure(.changedBeforeRemoval(path: job.input))
                continue
            }
            if FileName.withCString(job.input, unlink) != 0 {
                outcomes[index].outcome = .failure(.system(errno, path: job.input, operation: .remove))
            }
        }
        return outcomes
    }

    /// Removes every output: no name is given, no input removed.
    func discard() {
        for entry in entries { (try? entry.finished.get())?.output?.discard() }
    }

    /// Where one entry stands in ``commit(sync:)``: each step takes the
    /// entries in the stage it works on, whose value holds what it needs
    /// (written ⇒ its output exists), and moves them on.
    private enum Stage {
        /// Nothing left to do: failed (its outcome says why), committed, or
        /// with no output to commit (standard output, `-t`).
        case settled
        /// A device or FIFO written in place: closed, never synced nor named.
        case inPlace(OutputFile)
        /// Complete under its temporary name: to be synced, then named.
        case written(FinishedJob, OutputFile)
        /// Under its name: its folder to be synced and its input removed, if asked.
        case named(FinishedJob, OutputFile)

        init(_ finished: Result<FinishedJob, WeirError>) {
            guard case .success(let job) = finished, let output = job.output else {
                self = .settled
                return
            }
            self = output.isInPlace ? .inPlace(output) : .written(job, output)
        }

        /// The output not yet committed or kept, which a failure removes.
        var output: OutputFile? {
            switch self {
            case .settled: nil
            case .inPlace(let output), .written(_, let output), .named(_, let output): output
            }
        }
    }
}
