import Weir
import WeirCLI
import WeirPrograms

/// `--train`, `--train-cover`, `--train-fastcover`, `--train-legacy`:
/// learning a dictionary from files as zstd 1.5.4 does, with its flags
/// (WeirCommand+Train.swift reads them into ``RunSettings/training``).
struct TrainMode {
    /// The exit status of a training with too few samples: zstd's.
    static let tooFewSamplesStatus: Int32 = 14

    /// The run's resolved flags: what it reads are the training, the files
    /// and lists named, -o, `--no-sync` and -q.
    let settings: RunSettings
    /// The sample files, the folders and lists already walked.
    let inputs: [String]
    let console: Console

    /// Learns a dictionary from the files `inputs` and writes it to -o DICT
    /// (default `dictionary`), saying what zstd says; returns the exit status.
    func run() -> Int32 {
        let path = settings.outputPolicy.path ?? "dictionary"
        do throws(WeirError) {
            // No sample file named: too few samples, as zstd says (it does
            // not read standard input for samples).
            if settings.inputPolicy.files.isEmpty && settings.inputPolicy.fileLists.isEmpty {
                throw WeirError.tooFewSamples(path: path, count: 0, minimum: TrainingSamples.minimumCount)
            }
            let samples = try TrainingSamples.load(paths: inputs, for: settings.training, dictionaryPath: path)
            for warning in samples.warnings { console.warning(warning) }
            let (dictionary, builder) = try DictionaryTrainer.train(
                samples.buffer, sizes: samples.sizes, settings.training, path: path)
            if settings.reporting.quiet == 0, settings.training.builder.optimizes {
                console.write(TrainingParameterList.chosen(builder))
            }
            try dictionary.save(to: path, sync: settings.outputPolicy.syncs)
            if settings.reporting.quiet == 0 {
                console.write("Save dictionary of size \(dictionary.bytes.count) into file \(FileName.displayed(path)) "
                              + "(ID \(dictionary.id), from \(samples.sizes.count) samples)\n")
            }
            return 0
        } catch {
            console.error(CommandHint.message(for: error))
            // zstd exits with its error 14 ("nb of samples too low"), which
            // scripts that try a training may test for.
            return error.hint == .moreSamples ? Self.tooFewSamplesStatus : 1
        }
    }
}
