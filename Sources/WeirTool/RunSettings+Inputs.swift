import Weir
import WeirFiles

/// Which files the run processes: the names given, those of `--filelist`,
/// and with `-r` the files under the folders among them (see InputTree).
extension RunSettings {
    /// The gathered inputs, and what gathering them has to say.
    struct Inputs {
        /// The inputs, in order; `-` is standard input.
        var names: [String]
        /// Symbolic links skipped by `-r`, folders that could not be read
        /// and file lists that could not be read.
        var warnings: [String] = []
        var errors: [WeirError] = []
        /// Names were given (or listed) but `-r` found no file: empty
        /// folders. As zstd, the run then does nothing rather than read stdin.
        var nothingLeft = false
        /// Every name given was a symbolic link, skipped: as zstd, the run
        /// does nothing and fails.
        var onlyLinks = false
        /// The inputs left out before the run, each with its warning (nil
        /// for `--exclude-compressed`'s, which go silently, as zstd's): the
        /// symbolic links skipped and the files excluded. `--progress=json`
        /// gives each its `end` object and counts it among the files.
        var skipped: [(name: String, warning: String?)] = []
    }

    /// The names of the command line and of the file lists, expanded by
    /// `-r`, less those `--exclude-compressed` skips. As zstd, symbolic links
    /// among the names given are skipped with a warning, and `-r` skips those
    /// it finds, unless `-f`.
    func gatherInputs() -> Inputs {
        var given = inputPolicy.files
        var warnings: [String] = []
        var skipped: [(name: String, warning: String?)] = []
        if !outputPolicy.force {
            given.removeAll { name in
                guard FileStatTrace.check("UTIL_isLink(\(FileName.displayed(name)))", { FileStatus.isLinkToSkip(name) })
                else { return false }
                warnings.append("\(FileName.displayed(name)) is a symbolic link, ignoring (-f follows it)")
                skipped.append((name, "is a symbolic link, ignoring (-f follows it)"))
                return true
            }
            if given.isEmpty && !inputPolicy.files.isEmpty {
                return Inputs(names: [], warnings: warnings, onlyLinks: true, skipped: skipped)
            }
        }
        var errors: [WeirError] = []
        for list in inputPolicy.fileLists {
            do throws(WeirError) {
                given += try FileList.names(in: list)
            } catch {
                errors.append(error)
            }
        }
        var inputs = Inputs(names: given, warnings: warnings, errors: errors, skipped: skipped)
        if inputPolicy.recursive {
            let expansion = InputTree.expand(given, followLinks: outputPolicy.force)
            inputs.names = expansion.files
            inputs.warnings += expansion.warnings
            inputs.errors += expansion.errors
            inputs.skipped += expansion.skippedLinks.map { ($0, "is a symbolic link, ignoring") }
        }
        if inputs.names.isEmpty {
            if given.isEmpty && errors.isEmpty { inputs.names = ["-"] } else { inputs.nothingLeft = true }
        }
        // Excluded inputs go silently, as zstd skips them one by one.
        inputs.skipped += inputs.names.filter(isExcluded).map { ($0, nil) }
        inputs.names.removeAll(where: isExcluded)
        if inputPolicy.recursive { inputs.names.removeAll(where: isOutputOfInput) }
        return inputs
    }

    /// The output file of `input` for `name`, its output name where it is:
    /// moved into `--output-dir-mirror`'s folder for it or into
    /// `--output-dir-flat` (mirror wins, as in zstd).
    func placed(_ name: String, input: String) throws(WeirError) -> String {
        if let root = outputPolicy.mirrorRoot {
            guard let folder = OutputName.mirroredFolder(for: input, root: root) else {
                throw WeirError.outsideMirror(path: input, root: root)
            }
            return OutputName.placed(name, in: folder)
        }
        if let folder = outputPolicy.flatFolder { return OutputName.placed(name, in: folder) }
        return name
    }
}
