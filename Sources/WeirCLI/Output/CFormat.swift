import Glibc

/// printf-style formatting of numbers (`%.2f`, `%6d`, `%08x`, `%.*f`) with
/// the C library's `vsnprintf`: what `String(format:)` did, without loading
/// all of Foundation (and ICU) at every start of weir. Only numeric
/// arguments: Swift strings are not C varargs, so callers append them.
package enum CFormat {
    /// `format` filled with `arguments`, as C's `printf` would print it.
    package static func string(_ format: String, _ arguments: CVarArg...) -> String {
        var capacity = 128
        while true {
            var buffer = [CChar](repeating: 0, count: capacity)
            let needed = withVaList(arguments) { list in Int(vsnprintf(&buffer, capacity, format, list)) }
            if needed < 0 { return "" }
            if needed < capacity {
                return String(decoding: buffer.prefix(needed).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            capacity = needed + 1
        }
    }
}
