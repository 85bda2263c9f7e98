import Glibc
import WeirFiles
import WeirFormats
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
        let jobs = entries.map { try? $0.finished.get() }
        func fail(_ index: Int, _ error: WeirError) {
            jobs[index]?.output?.discard()
            outcomes[index].outcome = .failure(error)
        }
        func succeeded(_ index: Int) -> Bool { (try? outcomes[index].outcome.get()) != nil }
        // A device written in place is closed, never synced nor named.
        for index in jobs.indices where jobs[index]?.output?.isInPlace == true {
            do throws(WeirError) { try jobs[index]!.output!.publish() } catch { fail(index, error) }
        }
        let written = jobs.indices.filter { jobs[$0]?.output?.isInPlace == false }
        let alone = written.count == 1
        // 1. The data, on disk.
        if sync, alone {
            do throws(WeirError) { try jobs[written[0]]!.output!.syncData() } catch { fail(written[0], error) }
        } else if sync {
            var synced: [UInt64: WeirError?] = [:]
            for index in written {
                let output = jobs[index]!.output!
                if !DiskSync.fileSystemSyncReachesFiles(output.descriptor) {
                    do throws(WeirError) { try output.syncData() } catch { fail(index, error) }
                    continue
                }
                if synced[output.device] == nil {
                    do throws(WeirError) {
                        try DiskSync.fileSystem(of: output.descriptor)
                        synced[output.device] = .some(nil)
                    } catch {
                        synced[output.device] = .some(error)
                    }
                }
                if let error = synced[output.device]! {
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
        var named: [Int] = []
        for index in written where succeeded(index) {
            do throws(WeirError) {
                try jobs[index]!.output!.publish(synced: sync)
                named.append(index)
            } catch {
                fail(index, error)
            }
        }
        // 3. The names, on disk, before any input goes.
        // Each folder alone (`fsync`) for one output, and on a file system
        // whose `syncfs` does not reach its files; else each file system once.
        let removing = named.filter { jobs[$0]!.removesInput }
        var synced: [String: Int32?] = [:]
        for index in removing where sync {
            let output = jobs[index]!.output!
            // (By the folder's name: the output's descriptor is closed by now.)
            let byFolder = alone || !DiskSync.fileSystemSyncReachesFiles(inFolder: output.folder)
            let key = byFolder ? "folder " + output.folder : "device \(output.device)"
            if synced[key] == nil {
                do throws(WeirError) {
                    if byFolder {
                        try DiskSync.folder(output.folder)
                    } else {
                        try DiskSync.fileSystem(holding: output.folder)
                    }
                    synced[key] = .some(nil)
                } catch {
                    if case .system(let code) = error.kind {
                        synced[key] = .some(code)
                    } else {
                        synced[key] = .some(EIO)
                    }
                }
            }
            if let code = synced[key]! {
                // The output keeps its name, whose durability is not known; the input stays.
                outcomes[index].outcome = .failure(.folderSyncFailed(code, output: output.path, folder: output.folder))
            }
        }
        // 4. The inputs.
        for index in removing where succeeded(index) {
            // Only the file that was read goes: one that grew or shrank
            // since its end was read (a writer still at work) is kept.
            let job = jobs[index]!
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
}
