#if canImport(Glibc)
import Glibc
#endif

/// The command line's raw bytes, before Swift decodes them as UTF-8.
enum ArgumentBytes {
    /// The first argument that is not valid UTF-8, shown with its invalid
    /// bytes escaped (`\xFF`), or nil when every argument is valid.
    static func firstInvalidUTF8() -> String? {
        for index in 1..<Int(CommandLine.argc) {
            guard let pointer = CommandLine.unsafeArgv[index] else { continue }
            let length = strlen(pointer)
            let bytes = UnsafeRawBufferPointer(start: pointer, count: length)
            if String(validating: bytes, as: UTF8.self) == nil {
                return bytes.map { $0 < 0x80 && $0 >= 0x20 ? String(UnicodeScalar($0)) : "\\x" + hex($0) }.joined()
            }
        }
        return nil
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }
}
