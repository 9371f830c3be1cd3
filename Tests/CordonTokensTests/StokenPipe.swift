import CordonTokens
import Foundation

/// Interprets one of stoken's `tests/*.pipe` files the way its `pipe-wrapper.sh` runs them: each line
/// is an stoken command (`$STOKEN`, `$tok0`, `$TESTDIR` and `$out` expanded), `$out` is the previous
/// line's output and the last output is compared with the `.ref` file.
///
/// `tokencode` is computed with `TokenImporter` and `SecurIDCode`. `export --v3` in the middle of a
/// pipe is written with `SecurIDEncoder`. Cordon writes no v2 or SDTID token, so a final `export`
/// is checked the other way round: the reference output, read with the new password and device id,
/// must be the same token (serial, seed, digits, interval, PIN mode, expiry) as the input.
struct StokenPipe {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("vectors/stoken/upstream")
    /// `$tok0` of pipe-wrapper.sh.
    static let tok0 = "--token=258491750817210752367175001073261277346642631755724762324173166222072472716737543"

    /// One command line: the subcommand, its options (`--name value` or `--name=value`) and flags.
    struct Line {
        var command: String
        var options: [String: String] = [:]
        var flags: Set<String> = []

        /// The token text: `--token`, or the contents of `--file`.
        func tokenData() throws -> String {
            if let token = options["token"] { return token }
            guard let file = options["file"] else { throw PipeError.unsupported("no --token or --file") }
            return try String(contentsOf: URL(fileURLWithPath: file), encoding: .utf8)
        }

        /// `--devid`; for an SDTID file without it, the file's own `DeviceSerialNumber`: stoken does
        /// not check an SDTID's device, Cordon refuses a bound token without the matching device id.
        func deviceID() throws -> String? {
            if let devid = options["devid"] { return devid }
            let data = try tokenData()
            guard data.hasPrefix("<") else { return nil }
            let device = try SDTIDFile.parse(Array(data.utf8)).lookup("DeviceSerialNumber")
            return device.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        }
    }

    /// What a replay produced: stoken's output itself, or the token the reference output holds and
    /// the one exported.
    enum Outcome {
        case output(String)
        case sameToken(expected: SecurIDToken, actual: SecurIDToken)
    }

    enum PipeError: Error { case unsupported(String) }

    static let valueOptions: Set<String> = [
        "token", "file", "use-time", "pin", "password", "devid", "template", "new-devid", "new-password",
    ]

    var name: String
    var rawLines: [String]
    var reference: String

    init(name: String) throws {
        self.name = name
        let pipe = try String(contentsOf: Self.directory.appendingPathComponent("\(name).pipe"), encoding: .utf8)
        rawLines = pipe.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        reference = try String(contentsOf: Self.directory.appendingPathComponent("\(name).ref"), encoding: .utf8)
            .trimmingCharacters(in: .newlines)
    }

    /// The lines with `$out` left empty (for the cases whose first line is all that is looked at).
    var lines: [Line] { get throws { try rawLines.map { try Self.parse($0, out: "") } } }

    /// Runs every line; returns what the last one gives.
    func run() throws -> Outcome {
        var out = ""
        for (index, text) in rawLines.enumerated() {
            let line = try Self.parse(text, out: out)
            let isLast = index == rawLines.count - 1
            let token = try token(line)
            switch line.command {
            case "tokencode":
                let time = try Self.integer(line.options["use-time"], "use-time")
                out = try SecurIDCode.code(for: token, at: time, pin: line.options["pin"]).code
            case "export" where isLast:
                let target =
                    line.flags.contains("sdtid")
                    ? "<?xml"
                    : line.flags.contains("android")
                        ? "http://127.0.0.1/securid/ctf?ctfData="
                        : line.flags.contains("iphone") ? "com.rsa.securid.iphone://ctf?ctfData=" : ""
                guard reference.hasPrefix(target) else { throw PipeError.unsupported("\(name): not \(target)") }
                let expected = try TokenImporter.read(
                    TokenImportRequest(
                        data: reference, password: line.options["new-password"], deviceID: line.options["new-devid"]),
                    now: 1_650_000_000, oathIDKey: [])
                guard case .securID(let read) = expected.tokens.first?.secret else {
                    throw PipeError.unsupported("\(name): the reference is no SecurID token")
                }
                return .sameToken(expected: Self.comparable(read), actual: Self.comparable(token))
            case "export" where line.flags.contains("v3"):
                out = try SecurIDEncoder.encodeBinary(
                    token, version: 3, password: line.options["new-password"], deviceID: line.options["new-devid"],
                    nonce: Array(0..<16))
            default: throw PipeError.unsupported("\(name): \(text)")
            }
        }
        return .output(out)
    }

    /// The token a line reads, imported as `cordon token import` does (expiry checked at its time).
    func token(_ line: Line) throws -> SecurIDToken {
        let now = try line.options["use-time"].map { try Self.integer($0, "use-time") } ?? 1_650_000_000
        let imported = try TokenImporter.read(
            TokenImportRequest(
                data: line.tokenData(), password: line.options["password"], deviceID: line.deviceID()),
            now: now, oathIDKey: [])
        guard imported.tokens.count == 1, case .securID(let token) = imported.tokens[0].secret else {
            throw PipeError.unsupported("\(name): not one SecurID token")
        }
        return token
    }

    /// The fields an export keeps (the flag word also records how the copy was sealed).
    static func comparable(_ token: SecurIDToken) -> SecurIDToken {
        var copy = token
        copy.flags = 0
        return copy
    }

    static func integer(_ text: String?, _ option: String) throws -> Int64 {
        guard let text, let value = Int64(text) else { throw PipeError.unsupported("--\(option) is no integer") }
        return value
    }

    /// Splits a line into shell words (single quotes, `$NAME` expansion) and reads its options.
    static func parse(_ text: String, out: String) throws -> Line {
        let variables = ["STOKEN": "stoken", "TESTDIR": directory.path, "tok0": tok0, "out": out]
        var words: [String] = []
        var word = ""
        var inWord = false
        var quoted = false
        var characters = text.makeIterator()
        var pending: Character? = nil
        while let character = pending ?? characters.next() {
            pending = nil
            if quoted {
                if character == "'" { quoted = false } else { word.append(character) }
            } else if character == "'" {
                quoted = true
                inWord = true
            } else if character == "$" {
                var name = ""
                while let next = characters.next() {
                    guard next.isLetter || next.isNumber || next == "_" else {
                        pending = next
                        break
                    }
                    name.append(next)
                }
                guard let value = variables[name] else { throw PipeError.unsupported("$\(name)") }
                word += value
                inWord = true
            } else if character == " " {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else {
                word.append(character)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        guard words.count >= 2, words[0] == "stoken" else { throw PipeError.unsupported(text) }
        var line = Line(command: words[1])
        var index = 2
        while index < words.count {
            guard words[index].hasPrefix("--") else { throw PipeError.unsupported(words[index]) }
            let option = words[index].dropFirst(2)
            if let equals = option.firstIndex(of: "=") {
                line.options[String(option[..<equals])] = String(option[option.index(after: equals)...])
            } else if valueOptions.contains(String(option)), index + 1 < words.count {
                line.options[String(option)] = words[index + 1]
                index += 1
            } else {
                line.flags.insert(String(option))
            }
            index += 1
        }
        return line
    }
}
