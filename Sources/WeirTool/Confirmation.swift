import Glibc

/// zstd's questions before it overwrites or concatenates: the prompt on
/// stderr, the answer read from standard input (a terminal or a pipe, as
/// `echo y | zstd …`), accepted when its first character is `y` or `Y`; the
/// rest of the line is read away. Never asked when standard input is one of
/// the inputs: the answer would be data.
enum Confirmation {
    /// Asks `prompt`; returns whether the answer accepts.
    static func ask(_ prompt: String, stdinIsInput: Bool) -> Bool {
        if stdinIsInput {
            StandardError.write("stdin is an input - not proceeding.\n")
            return false
        }
        StandardError.write(prompt)
        var byte: UInt8 = 0
        func next() -> UInt8? { read(STDIN_FILENO, &byte, 1) == 1 ? byte : nil }
        let first = next()
        var current = first
        while let character = current, character != UInt8(ascii: "\n") { current = next() }
        if first == nil { StandardError.write("\n") }
        return first == UInt8(ascii: "y") || first == UInt8(ascii: "Y")
    }
}
