import Glibc

/// The process's environment variables, as libcurl's users read them.
enum ProcessEnvironment {
    /// The value of `name`, nil when unset or empty.
    static func value(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }
}
