import Weir
import WeirCLI

/// The parsed, validated flags resolved once into ``RunSettings``, which is
/// all the run reads.
extension WeirCommand {
    /// The settings of this command line.
    var settings: RunSettings {
        let output = outputFlags
        let compression = compressionFlags
        let resources = resourceFlags
        let standardOutputRequested = output.output == "-" || (output.toStdout && output.output == nil)
        // What an absent flag leaves: the defaults RunSettings writes once.
        let defaults = RunSettings()
        return RunSettings(
            operation: operationFlags.operation,
            inputPolicy: .init(
                files: files, fileLists: operationFlags.fileLists, recursive: operationFlags.recursive,
                excludesCompressed: compression.excludeCompressed),
            outputPolicy: .init(
                toStdout: output.toStdout, path: output.output, standardOutputRequested: standardOutputRequested,
                file: standardOutputRequested ? nil : output.output, force: output.force,
                removesInput: output.removeInput, syncs: !output.noSync, resumes: !output.noResume,
                flatFolder: output.outputDirFlat, mirrorRoot: output.outputDirMirror),
            compressionSettings: .init(
                levelPolicy: levelPolicy,
                chunkSize: compression.chunkSize?.bytes, adaptiveLevels: adaptiveLevels,
                rsyncable: compression.rsyncable, seekTable: !compression.noSeekTable,
                memberIndex: !compression.noMemberIndex, indexSource: operationFlags.indexFrom,
                writesContentSize: compression.writesContentSize, streamSize: compression.streamSize?.bytes,
                sizeHint: messageFlags.sizeHint?.bytes,
                format: compression.format ?? defaults.compressionSettings.format,
                parameters: compression.parameters, showsDefaultParameters: compression.showDefaultCParams),
            decompressionSettings: .init(
                passThrough: decompressionFlags.passThrough, sparse: decompressionFlags.sparse,
                ranges: decompressionFlags.ranges),
            memberSettings: .init(listsMembers: memberFlags.listMembers, patterns: memberFlags.patterns),
            dictionarySettings: .init(
                file: dictionaryFlags.dictionaryFile, writesID: !dictionaryFlags.noDictionaryID,
                patchFrom: dictionaryFlags.patchFrom, long: dictionaryFlags.long),
            resourceSettings: .init(
                requestedThreads: resources.requestedThreads, threadsGiven: resources.threads != nil
                    || resources.singleThread,
                countedCores: resources.countedCores, verifiesChecksums: resources.verifiesChecksums,
                verify: resources.verify, mapsInput: resources.mapsInput, memory: resources.memory?.bytes),
            reporting: .init(
                quiet: messageFlags.quiet, verbose: messageFlags.verbose, progress: messageFlags.progress,
                progressJSON: facts.progressJSON, json: messageFlags.json, trace: messageFlags.trace,
                fakeStderrIsConsole: messageFlags.fakeStderrIsConsole, traceFileStat: messageFlags.traceFileStat,
                showVersion: messageFlags.showVersion),
            benchmarkSettings: .init(
                lastLevel: benchmarkFlags.lastLevel,
                seconds: benchmarkFlags.seconds ?? defaults.benchmarkSettings.seconds,
                separateFiles: benchmarkFlags.separateFiles, realTime: benchmarkFlags.priority == "rt",
                decodesOnly: facts.benchmarkDecodes),
            training: dictionaryTraining)
    }

    /// The level flags (`WEIR_CLEVEL` already read into `--level`).
    var levelPolicy: LevelPolicy {
        LevelPolicy(level: compressionFlags.level, fast: compressionFlags.fast, ultra: compressionFlags.ultra)
    }

    /// `--adapt`'s range of levels: zstd's whole range, narrowed by each
    /// `--adapt=` list in turn (checked by validateFacts()), within
    /// libzstd's levels; nil without `--adapt`.
    var adaptiveLevels: ClosedRange<Int>? {
        guard compressionFlags.adapt else { return nil }
        var range = Zstd.minLevel...Zstd.maxLevel
        for list in facts.adaptLists {
            if let read = AdaptParameterList.parse(list, over: range) { range = read }
        }
        let level = { (level: Int) in min(max(level, Zstd.minLevel), Zstd.maxLevel) }
        return level(range.lowerBound)...level(range.upperBound)
    }
}
