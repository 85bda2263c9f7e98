/// Stops the process with `message` when `condition` is false: libFuzzer
/// takes the trap as a crash and keeps the input. Used for every property a
/// target checks, in every build (unlike `assert`, which -O removes).
public func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                    file: StaticString = #fileID, line: UInt = #line) {
    if !condition() {
        fatalError("weir-fuzz: \(message())", file: file, line: line)
    }
}
