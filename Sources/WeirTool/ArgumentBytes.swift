import Weir
import Glibc

/// The command line as the C `argv` has it, before Swift repairs it.
///
/// `CommandLine.arguments` replaces bytes that are not valid UTF-8 with
/// U+FFFD, and weir would then act on another file. Names are any bytes but
/// NUL, as zstd, tar and every POSIX tool take them: each argument is decoded
/// with ``FileName/string(fromBytes:)``, which escapes such bytes losslessly.
enum ArgumentBytes {
    /// Every argument, the program name first.
    static func arguments() -> [String] {
        (0 ..< Int(CommandLine.argc)).map { index in
            guard let pointer = CommandLine.unsafeArgv[index] else { return "" }
            return FileName.string(fromBytes: UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)))
        }
    }
}
