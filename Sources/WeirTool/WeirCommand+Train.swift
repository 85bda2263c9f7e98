import ArgumentParser
import Weir
import WeirCLI
import WeirPrograms

/// `--train`, `--train-cover`, `--train-fastcover`, `--train-legacy`: the
/// training their flags ask for, as zstd 1.5.4 reads them, and their checks
/// (``TrainMode`` runs it).
extension WeirCommand {
    /// The builder the operation chose, with the last parameters given for
    /// it (every list was checked by ``validateTrainingLists()``); plain
    /// `--train` is zstd's default, fastCover searching k.
    var dictionaryBuilder: DictionaryBuilder {
        let flags = operationFlags
        switch flags.operation {
        case .trainCover: return .cover(facts.coverLists.last.flatMap(TrainingParameterList.cover) ?? .init())
        case .trainFastCover:
            return .fastCover(facts.fastCoverLists.last.flatMap(TrainingParameterList.fastCover) ?? .init())
        case .trainLegacy:
            return .legacy(selectivity: facts.legacyLists.last.flatMap(TrainingParameterList.legacy) ?? 9)
        case .train, .compress, .decompress, .test, .list, .index, .benchmark: return .zstdDefault
        }
    }

    /// The training the flags ask for. As zstd: the level tunes the
    /// dictionary (`-19 --train`), not clamped; -T is the search's threads,
    /// 1 unless given (a search on several threads may keep another of two
    /// equal candidates); -M (or --memory) bounds the samples loaded, 0
    /// meaning none; -B 0 takes one sample per file.
    var dictionaryTraining: DictionaryTraining {
        let threads = resourceFlags.threads == nil && !resourceFlags.singleThread ? 1 : resourceFlags.resolvedThreads
        return DictionaryTraining(
            builder: dictionaryBuilder,
            maximumSize: dictionaryFlags.maxDictionary?.bytes ?? DictionaryTraining.defaultMaximumSize,
            dictionaryID: UInt32(clamping: dictionaryFlags.dictionaryID?.bytes ?? 0),
            compressionLevel: levelPolicy.requested,
            threads: threads == 0 ? CoreCount.logical : threads,
            sampleSize: compressionFlags.chunkSize.flatMap { $0.bytes == 0 ? nil : $0.bytes },
            memoryLimit: resourceFlags.memory.flatMap { $0.bytes == 0 ? nil : $0.bytes })
    }

    /// The checks of the training lists, with or without a training (zstd
    /// reads every parameter list as it meets it); the lists are facts,
    /// given after parsing (``validateFacts()``).
    func validateTrainingLists() throws {
        for list in facts.coverLists where TrainingParameterList.cover(list) == nil {
            throw ValidationError("--train-cover=\(list): not a list of cover parameters "
                                  + "(k=N,d=N,steps=N,split=N,shrink[=N]).")
        }
        for list in facts.fastCoverLists where TrainingParameterList.fastCover(list) == nil {
            throw ValidationError("--train-fastcover=\(list): not a list of fastCover parameters "
                                  + "(k=N,d=N,f=N,steps=N,split=N,accel=N,shrink[=N]).")
        }
        for list in facts.legacyLists where TrainingParameterList.legacy(list) == nil {
            throw ValidationError("--train-legacy=\(list): not a selectivity (s=N or selectivity=N).")
        }
    }

    /// The checks of the training flags the parser reads: the sizes that
    /// zstd reads as 32-bit numbers, and the sample size, at most 128 KiB
    /// (zstd stops on an assertion beyond).
    func validateTraining() throws {
        let flags = operationFlags
        for (name, size) in [("--maxdict", dictionaryFlags.maxDictionary), ("--dictID", dictionaryFlags.dictionaryID)] {
            if let size, size.bytes > Int(UInt32.max) {
                throw ValidationError("\(name)=\(size.bytes): the numeric value overflows a 32-bit unsigned int.")
            }
        }
        if flags.operation.isTraining, let sampleSize = compressionFlags.chunkSize?.bytes,
           sampleSize > TrainingSamples.maximumSampleSize {
            throw ValidationError(
                "-B \(sampleSize): training samples are at most \(TrainingSamples.maximumSampleSize) bytes (128K).")
        }
    }
}
