import Foundation
import Glibc
import Testing
import WeirSystem

/// Every kind of input weir may be given, each way it may work on it, into
/// each kind of output (issue 37): the output decodes to the input exactly,
/// or weir exits non-zero with a message naming the file. Never a wrong
/// success. Device nodes and FIFOs are made in the test's own folder.
@Suite("weir over every kind of input and output")
struct InputMatrixCommandTests {
    enum InputKind: String, CaseIterable, CustomTestStringConvertible {
        case regular, procfs, sysfs, fifo, socket, device
        var testDescription: String { rawValue }
    }

    enum Direction: String, CaseIterable {
        case compress, decompress, range
    }

    enum Output: String, CaseIterable {
        case stdout, file, fifo
    }

    /// What the run must end with.
    enum Expected {
        /// Status 0, and the output (decoded, for compression) is these bytes.
        case bytes(Data)
        /// A non-zero status and a message naming `name`.
        case failure(naming: String)
    }

    /// A range inside the regular data that crosses its first frame's end.
    static let range = (start: 1_400_000, count: 300_000)

    /// The data of the regular, FIFO and socket inputs: several frames.
    static func prepare(_ scratch: Scratch) throws -> Data {
        let data = scratch.text("data", size: 3_000_000, seed: 11)
        let made = try WeirProcess.run(["-q", "-T2", "data", "-o", "data.zst"], in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
        #expect(mkfifo(scratch.path("out.fifo"), 0o600) == 0)
        #expect(mknod(scratch.path("zero"), S_IFCHR | 0o600, dev_t((1 << 8) | 5)) == 0, "mknod needs root")
        #expect(mknod(scratch.path("null"), S_IFCHR | 0o600, dev_t((1 << 8) | 3)) == 0)
        return data
    }

    /// The shell words that give weir its input, where `source` is the
    /// file whose bytes a FIFO or socket carries; and the input's name.
    static func input(_ kind: InputKind, source: String, direction: Direction,
                      output: Output) -> (prefix: String, arguments: String, name: String) {
        switch kind {
        case .regular: return ("", source, source)
        case .procfs: return ("", "/proc/filesystems", "/proc/filesystems")
        case .sysfs: return ("", "/sys/devices/system/cpu/online", "/sys/devices/system/cpu/online")
        case .fifo: return ("rm -f in.fifo; mkfifo in.fifo; cat \(source) > in.fifo & ", "in.fifo", "in.fifo")
        case .socket:
            // Standard input is one end of a Unix socket pair; the test writes the other.
            let feeder = """
                python3 -c 'import socket,subprocess,sys
                a,b=socket.socketpair(); p=subprocess.Popen(sys.argv[2:],stdin=a); a.close()
                b.sendall(open(sys.argv[1],"rb").read()); b.shutdown(socket.SHUT_WR); sys.exit(p.wait())' \(source) 
                """
            return (feeder, "", "(stdin)")
        case .device:
            // /dev/zero has no end: compressed, it is cut by `head`; the
            // files of an empty device are made from /dev/null's twin.
            let node = direction == .compress && output != .stdout ? "null" : "zero"
            return ("", "-f \(node)", node)
        }
    }

    static func expected(_ kind: InputKind, _ direction: Direction, output: Output, data: Data) throws -> Expected {
        let content: Data
        switch kind {
        case .regular, .fifo, .socket: content = data
        case .procfs: content = try #require(FileManager.default.contents(atPath: "/proc/filesystems"))
        case .sysfs: content = try #require(FileManager.default.contents(atPath: "/sys/devices/system/cpu/online"))
        case .device:
            if direction != .compress { return .failure(naming: "zero") }
            return output == .stdout ? .failure(naming: "(stdout)") : .bytes(Data())
        }
        switch direction {
        case .compress: return .bytes(content)
        case .decompress where kind == .procfs || kind == .sysfs, .range where kind == .procfs || kind == .sysfs:
            return .failure(naming: kind == .procfs ? "/proc/filesystems" : "/sys/devices/system/cpu/online")
        case .decompress: return .bytes(content)
        case .range: return .bytes(content.subdata(in: range.start..<(range.start + range.count)))
        }
    }

    /// Runs one case and checks it.
    static func check(_ kind: InputKind, _ direction: Direction, _ output: Output, in scratch: Scratch,
                      data: Data) throws {
        let label = "\(kind) \(direction) → \(output)"
        let source = direction == .compress ? "data" : "data.zst"
        let given = input(kind, source: source, direction: direction, output: output)
        let mode: String
        switch direction {
        case .compress: mode = "-c"
        case .decompress: mode = "-dc"
        case .range: mode = "-dc --range=\(range.start):+\(range.count)"
        }
        let weir = "$WEIR \(mode) \(given.arguments)"
        let command: String
        switch output {
        case .stdout where kind == .device && direction == .compress:
            command = "\(given.prefix)\(weir) | head -c 200000 > got; status=${PIPESTATUS[0]}"
        case .stdout:
            command = "\(given.prefix)\(weir) > got; status=$?"
        case .file:
            command = "\(given.prefix)\(weir) -o got; status=$?"
        case .fifo:
            // The reader gets an end of file even when weir never opens the FIFO.
            command = """
                cat out.fifo > got & reader=$!
                \(given.prefix)\(weir) -o out.fifo; status=$?
                exec 5<>out.fifo; exec 5>&-
                """
        }
        try? FileManager.default.removeItem(atPath: scratch.path("got"))
        let result = try WeirProcess.shell(command + "\nwait; exit $status", in: scratch.url)
        let got = scratch.data("got") ?? Data()
        switch try expected(kind, direction, output: output, data: data) {
        case .bytes(let bytes):
            #expect(result.status == 0, "\(label): \(result.stderr)")
            if direction == .compress {
                try got.write(to: URL(fileURLWithPath: scratch.path("got.zst")))
                let decoded = try scratch.zstd(["-dc", "got.zst"])
                #expect(
                    decoded.status == 0 && decoded.stdout == bytes, "\(label): decoded \(decoded.stdout.count) bytes")
            } else {
                #expect(got == bytes, "\(label): \(got.count) bytes, not \(bytes.count)")
            }
        case .failure(let name):
            #expect(result.status != 0, "\(label): exited 0")
            #expect(result.stderr.contains(name), "\(label): \(result.stderr)")
            if kind == .device && direction == .compress {
                // What went out before the pipe closed is /dev/zero's zeros.
                try got.write(to: URL(fileURLWithPath: scratch.path("got.zst")))
                let decoded = try WeirProcess.shell(
                    "zstd -dc got.zst 2>/dev/null | head -c 50000000 | tr -d '\\0' | wc -c",
                    in: scratch.url)
                #expect(
                    String(decoding: decoded.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                        == "0",
                    "\(label): not zeros")
            }
        }
    }

    @Test("each input kind, each direction, each output kind", arguments: InputKind.allCases)
    func matrix(kind: InputKind) throws {
        let scratch = Scratch()
        let data = try Self.prepare(scratch)
        for direction in Direction.allCases {
            for output in Output.allCases {
                try Self.check(kind, direction, output, in: scratch, data: data)
            }
        }
    }
}
