import Glibc
import WeirFormats
import WeirSystem

/// Saving a trained dictionary (`--train`) is writing an output file: here,
/// beside ``OutputFile``, above the codecs.
extension ZstdDictionary {
    /// Writes the dictionary to `path`, replacing the file there as zstd
    /// does, atomically: a reader never sees half a dictionary, nor (with
    /// `sync`, its data on disk before it takes the name) a power cut.
    package func save(to path: String, sync: Bool = true) throws(WeirError) {
        let file = try OutputFile(path: path, force: true)
        do throws(WeirError) {
            var written = 0
            while written < bytes.count {
                let count = bytes.withUnsafeBytes { buffer in
                    // The loop runs only while bytes are left: the buffer has an address.
                    guard let base = buffer.baseAddress else { return 0 }
                    return Glibc.write(file.descriptor.fd, base + written, buffer.count - written)
                }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw WeirError.system(errno, path: path, operation: .write)
                }
                written += count
            }
            try file.commit(copying: nil, sync: sync)
        } catch {
            file.discard()
            throw error
        }
    }
}
