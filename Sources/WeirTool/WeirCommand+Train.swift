import Weir
import WeirCLI

extension WeirCommand {
    /// `--train FILE… [-o DICT] [--maxdict=SIZE]`: learns a dictionary from
    /// the files and writes it, saying what zstd says; returns the exit status.
    func trainDictionary(console: Console) -> Int32 {
        let path = outputFlags.output ?? "dictionary"
        do throws(WeirError) {
            let training = DictionaryTraining(maximumSize: dictionaryFlags.dictionaryLimit)
            let samples = try TrainingSamples.load(paths: files, for: training, dictionaryPath: path)
            for warning in samples.warnings { console.warning(warning) }
            let dictionary = try DictionaryTrainer.train(samples, training, path: path).dictionary
            try dictionary.save(to: path, sync: !outputFlags.noSync)
            if messageFlags.quiet == 0 {
                console.write("Save dictionary of size \(dictionary.bytes.count) into file \(FileName.displayed(path)) "
                              + "(ID \(dictionary.id), from \(samples.sizes.count) samples)\n")
            }
            return 0
        } catch {
            console.error(CommandHint.message(for: error))
            return 1
        }
    }
}
