internal import Foundation
public import HomeModel

/// A JSON value built by hand: the page's state and events are small trees whose
/// shape follows the home, which Codable structs would only restate.
public indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.serialized() == rhs.serialized() }

    /// Compact JSON text. Strings are escaped so that the text is also safe inside an
    /// HTML `<script>` (`<`, `>` and `&` as \u escapes).
    public func serialized() -> String {
        var out = ""
        write(into: &out)
        return out
    }

    private func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .uint(let value): out += String(value)
        case .double(let value):
            if value.isFinite {
                if value == value.rounded(), abs(value) < 1e15 {
                    out += String(Int64(value))
                } else {
                    out += "\(value)"
                }
            } else {
                out += "null"
            }
        case .string(let value): Self.quote(value, into: &out)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out += "," }
                Self.quote(key, into: &out)
                out += ":"
                value.write(into: &out)
            }
            out += "}"
        }
    }

    private static func quote(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "<", ">", "&", "\u{2028}", "\u{2029}":
                out += String(format: "\\u%04x", scalar.value)
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    /// A characteristic's value: a number, a bool, a string; data as hex; no value is null.
    public init(_ value: CharacteristicValue?) {
        switch value {
        case nil: self = .null
        case .bool(let value): self = .bool(value)
        case .int(let value): self = .int(value)
        case .uint(let value): self = .uint(value)
        case .float(let value): self = .double(value)
        case .string(let value): self = .string(value)
        case .data: self = .string(value!.description)
        }
    }
}

/// A value in a request: JSON true/false, a number (whole numbers as integers, which
/// homed takes for any number format), or a string. homed checks it against the
/// characteristic and says what is wrong.
struct RequestValue: Decodable, Sendable {
    var value: CharacteristicValue

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let bool = try? container.decode(Bool.self) {
            value = .bool(bool)
        } else if let int = try? container.decode(Int64.self) {
            value = .int(int)
        } else if let double = try? container.decode(Double.self) {
            value = .float(double)
        } else if let text = try? container.decode(String.self) {
            value = .string(text)
        } else {
            throw DecodingError.typeMismatch(
                CharacteristicValue.self,
                .init(codingPath: decoder.codingPath, debugDescription: "a value is true, false, a number or a string"))
        }
    }
}

extension JSONDecoder {
    /// Decodes a request body, its error said as a sentence that names the field.
    static func request<Body: Decodable>(_ type: Body.Type, from bytes: [UInt8]) throws(HomeError) -> Body {
        do {
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch let DecodingError.keyNotFound(key, _) {
            throw HomeError(.invalidArgument, "the request has no \"\(key.stringValue)\"")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            let field = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw HomeError(.invalidArgument, "\"\(field)\" is not what it should be: \(context.debugDescription)")
        } catch {
            throw HomeError(.invalidArgument, "the request body is not JSON of the expected shape")
        }
    }
}
