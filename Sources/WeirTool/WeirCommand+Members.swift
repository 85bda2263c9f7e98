import ArgumentParser
import Glibc

/// The flags of a `.tar.zst`'s members (issue 61, docs/members.md).
struct MemberFlags: ParsableArguments {
    @Flag(name: .customLong("members"), help: ArgumentHelp(HelpText.members))
    var listMembers = false

    @Option(name: .customLong("member"), help: ArgumentHelp(HelpText.member, valueName: "PATTERN"))
    var patterns: [String] = []
}

/// The checks of `--members` and `--member` (their run: RunSettings+Members.swift).
extension WeirCommand {
    /// The flags that go with `--members` and `--member`.
    func validateMembers() throws {
        let operation = operationFlags.operation
        if memberFlags.listMembers, operation != .list {
            throw ValidationError("--members lists a .tar.zst's members: it goes with -l.")
        }
        if !memberFlags.patterns.isEmpty {
            guard operation == .decompress else {
                throw ValidationError("--member=PATTERN extracts members of a .tar.zst: it goes with -d.")
            }
            if !decompressionFlags.ranges.isEmpty {
                throw ValidationError("--member and --range each choose the bytes to write: give one of them.")
            }
            if outputFlags.removeInput || operationFlags.recursive || outputFlags.outputDirFlat != nil
                || outputFlags.outputDirMirror != nil {
                throw ValidationError(
                    "--member reads one archive to one output: it cannot go with --rm, -r or an output folder.")
            }
        }
    }
}
