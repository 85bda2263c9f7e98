import Glibc
import Weir
import WeirCLI
import WeirFiles

/// Several inputs into one `-o FILE`, as zstd writes them: one after the
/// other into a single output, opened before the first and committed after
/// the last.
extension RunSettings {
    /// The one output of several inputs (`-o FILE`), as zstd makes it: a
    /// warning that names and folders are lost (and `--rm` ignored) unless
    /// `-q`; without `-f`, the question `Proceed? (y/n)` (refused with `-q`),
    /// then zstd's question before an existing file is replaced. Nil when
    /// refused or when the file cannot be created (said on the console).
    func openConcatenation(_ path: String, inputs: [String], console: Console) -> OutputFile? {
        let stdinIsInput = inputs.contains("-")
        if reporting.quiet == 0 {
            console.warning("all input files will be processed and concatenated into a single output file: "
                            + FileName.displayed(path))
            console.write("The concatenated output CANNOT regenerate original file names nor directory structure.\n")
            if outputPolicy.removesInput {
                console.write("Since it's a destructive operation, input files will not be removed.\n")
            }
        }
        var force = outputPolicy.force
        if !force {
            if reporting.quiet > 0 {
                console.error("\(FileName.displayed(path)): concatenating several inputs into one output loses their "
                              + "names; aborting (-f proceeds)")
                return nil
            }
            guard Confirmation.ask("Proceed? (y/n): ", stdinIsInput: stdinIsInput) else {
                console.error("Aborting...")
                return nil
            }
            if FileStatus.of(path: path)?.isRegularFile == true {
                guard Confirmation.ask("weir: \(FileName.displayed(path)): already exists; overwrite (y/n) ? ",
                                       stdinIsInput: stdinIsInput) else {
                    console.error("\(FileName.displayed(path)): not overwritten")
                    return nil
                }
                force = true
            }
        }
        do throws(WeirError) {
            return try OutputFile(path: path, force: force)
        } catch {
            console.error(CommandHint.message(for: error))
            return nil
        }
    }

    /// Gives the one output of several inputs its name (synced unless
    /// `--no-sync`), with the default mode (it is no one input's); discarded
    /// when the run was cancelled. Returns whether it succeeded.
    func commitConcatenation(_ shared: OutputFile, path: String, cancelled: Bool, console: Console) -> Bool {
        guard !cancelled else {
            shared.discard()
            return false
        }
        shared.stamp(copying: nil)
        let commits = CommitQueue(sync: outputPolicy.syncs)
        commits.add(
            0, .success(FinishedJob(statistics: Statistics(), output: shared, input: path, removesInput: false)))
        if case .failure(let error) = commits.commitAll()[0].outcome {
            console.error(CommandHint.message(for: error))
            return false
        }
        return true
    }
}
