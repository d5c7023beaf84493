internal import Foundation
internal import HomeModel

#if canImport(Glibc)
    internal import Glibc
#endif

/// Writing to stdout and stderr with POSIX writes, so a closed pipe is noticed
/// (EPIPE) rather than fatal, and every line is flushed as it is written.
enum Output {
    /// Writes a line to stdout at once. Returns false when the reader is gone.
    @discardableResult
    static func line(_ text: String) -> Bool {
        writeAll(1, text + "\n")
    }

    static func error(_ text: String) {
        _ = writeAll(2, text + "\n")
    }

    private static func writeAll(_ fd: Int32, _ text: String) -> Bool {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    /// Whether stdout's reader has gone (a pipe whose read end closed).
    static var readerIsGone: Bool {
        var descriptor = pollfd(fd: 1, events: 0, revents: 0)
        guard poll(&descriptor, 1, 0) > 0 else { return false }
        return descriptor.revents & Int16(POLLERR | POLLHUP) != 0
    }

    /// Left-aligned columns, two spaces apart.
    static func table(_ rows: [[String]], indent: String = "") -> [String] {
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
/// and `watch` lines have a stable, documented field order.
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
        case .double(let value):
            if value.isFinite {
                out += value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) + ".0" : String(value)
            } else {
                out += "null"
            }
        case .string(let value): JSON.escape(value, into: &out)
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
                JSON.escape(key, into: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    private static func escape(_ string: String, into out: inout String) {
        out += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
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

/// ISO 8601 UTC with milliseconds, e.g. "2026-11-21T20:05:01.123Z".
func isoTime(_ ms: Int64) -> String {
    var seconds = time_t(ms / 1000)
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    let millis = Int(ms % 1000)
    let millisText = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
    return
        "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(millisText)Z"
}

extension AccessoryCategory {
    /// A person's name for the category ("garage door opener").
    var displayName: String {
        String(describing: self).reduce(into: "") { out, character in
            if character.isUppercase { out += " " + character.lowercased() } else { out.append(character) }
        }
    }
}

extension Characteristic {
    /// The value with its unit, for people.
    var displayValue: String {
        guard let value else { return "—" }
        let unit: String
        switch metadata.unit {
        case .none: unit = ""
        case .celsius: unit = " °C"
        case .percentage: unit = "%"
        case .arcDegrees: unit = "°"
        case .lux: unit = " lx"
        case .seconds: unit = " s"
        }
        return value.description + unit
    }
}

/// "an accessory", "a room".
func article(_ noun: String) -> String {
    "aeiou".contains(noun.first ?? "x") ? "an \(noun)" : "a \(noun)"
}

/// A name in double quotes, as messages show names.
func quote(_ text: String) -> String { "\"\(text)\"" }
