internal import Foundation
internal import HomeModel
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#endif

/// Writing to stdout and stderr with POSIX writes, so a closed pipe is noticed
/// (EPIPE) rather than fatal, and every line is flushed as it is written. Every line
/// goes through `terminalSafe`: whatever a name holds, no control character reaches
/// the terminal raw (JSON lines hold none: JSON escapes them).
enum Output {
    /// Writes a line to stdout at once. Returns false when it could not: the reader
    /// is gone, or another error, which `stdoutError` keeps for homectl's exit.
    @discardableResult
    static func line(_ text: String) -> Bool {
        let error = writeAll(1, terminalSafe(text) + "\n")
        if let error, error != EPIPE { firstStdoutError.withLock { $0 = $0 ?? error } }
        return error == nil
    }

    static func error(_ text: String) {
        _ = writeAll(2, terminalSafe(text) + "\n")
    }

    /// The first error writing stdout other than EPIPE (a reader gone is an
    /// ordinary end), as an errno.
    static var stdoutError: Int32? { firstStdoutError.withLock { $0 } }
    private static let firstStdoutError = Mutex<Int32?>(nil)

    /// Writes all of `text`; nil, or the errno of the write that failed.
    private static func writeAll(_ fd: Int32, _ text: String) -> Int32? {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return nil
    }

    /// Whether stdout's reader has gone (a pipe whose read end closed).
    static var readerIsGone: Bool {
        var descriptor = pollfd(fd: 1, events: 0, revents: 0)
        guard poll(&descriptor, 1, 0) > 0 else { return false }
        return descriptor.revents & Int16(POLLERR | POLLHUP) != 0
    }

    /// Left-aligned columns, two spaces apart; cells are escaped first, so columns
    /// line up as they are shown.
    static func table(_ rows: [[String]], indent: String = "") -> [String] {
        let rows = rows.map { $0.map(terminalSafe) }
        guard let width = rows.map(\.count).max() else { return [] }
        var widths = Array(repeating: 0, count: width)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        return rows.map { row in
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
            }
            return indent + cells.joined(separator: "  ")
        }
    }
}

/// A JSON value with keys kept in the order they were written, so `--json` output
/// and `watch` lines have a stable, documented field order (Foundation's encoders
/// sort keys or leave them unordered). Strings and numbers are written by
/// Foundation's `JSONSerialization`, escaping included; only the order is ours.
indirect enum JSON {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .uint(let value): out += String(value)
        // JSON has no NaN or infinity: those are null.
        case .double(let value): out += value.isFinite ? Self.fragment(value) : "null"
        case .string(let value): out += Self.fragment(value)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(to: &out)
            }
            out += "]"
        case .object(let fields):
            out += "{"
            for (index, (key, value)) in fields.enumerated() {
                if index > 0 { out += "," }
                out += Self.fragment(key)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    /// A string or a finite number as JSON text.
    private static func fragment(_ value: Any) -> String {
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: value, options: [.fragmentsAllowed, .withoutEscapingSlashes])
        else { return "null" }
        return escapingDeleteAndC1(String(decoding: data, as: UTF8.self))
    }

    /// JSON escapes C0 controls but may leave DEL and C1 controls raw; a terminal may act
    /// on those, so they are written as \u escapes too (the same JSON value).
    private static func escapingDeleteAndC1(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { (0x7F...0x9F).contains($0.value) }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if (0x7F...0x9F).contains(scalar.value) {
                out.append(contentsOf: "\\u00\(String(scalar.value, radix: 16))".unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }
}

extension CharacteristicValue {
    var json: JSON {
        switch self {
        case .bool(let value): return .bool(value)
        case .int(let value): return .int(value)
        case .uint(let value): return .uint(value)
        case .float(let value): return .double(value)
        case .string(let value): return .string(value)
        case .data(let bytes): return .string(base64(bytes))
        }
    }
}

/// RFC 4648 base64, for data and tlv8 values in JSON.
func base64(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString()
}

/// ISO 8601 UTC with milliseconds, e.g. "2026-11-21T20:05:01.123Z". The whole
/// seconds go through Foundation's formatter and the milliseconds are added as
/// digits, so no floating-point rounding can change them.
func isoTime(_ ms: Int64) -> String {
    let seconds = ms.quotientAndRemainder(dividingBy: 1000)
    let whole = seconds.remainder < 0 ? seconds.quotient - 1 : seconds.quotient
    let millis = Int(ms - whole * 1000)
    let formatted = isoFormatter.string(from: Date(timeIntervalSince1970: TimeInterval(whole)))
    let digits = String(millis)
    return formatted.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
}

private nonisolated(unsafe) let isoFormatter: ISO8601DateFormatter = {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    return formatter
}()

extension AccessoryCategory {
    /// A person's name for the category ("garage door opener").
    var displayName: String {
        String(describing: self).reduce(into: "") { out, character in
            if character.isUppercase { out += " " + character.lowercased() } else { out.append(character) }
        }
    }
}

/// "an accessory", "a room".
func article(_ noun: String) -> String {
    "aeiou".contains(noun.first ?? "x") ? "an \(noun)" : "a \(noun)"
}

/// A name in double quotes, as messages show names.
func quote(_ text: String) -> String { "\"\(text)\"" }

/// A failed item in `--json` output: {"code": "NOT_FOUND", "status": 5, "message": …},
/// the status being the daemon's code (and homectl's exit code for it).
func errorJSON(_ error: HomeError) -> JSON {
    .object([
        ("code", .string(error.code.name)),
        ("status", .int(Int64(error.code.rawValue))),
        ("message", .string(error.message)),
    ])
}
