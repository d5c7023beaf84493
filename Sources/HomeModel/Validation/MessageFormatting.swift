// How error messages show numbers, strings and bytes: readable, and bounded in size
// whatever a client sent.

/// A number as a person writes it: "100" rather than "100.0", "0.1", "-273.1".
func formatNumber(_ number: Double) -> String {
    if number.isFinite, number == number.rounded(), abs(number) < 1e15 {
        return String(Int64(number))
    }
    return String(number)
}

/// A string quoted for a message, cut after 40 characters so a huge value cannot
/// swamp the message.
func quoted(_ text: String, limit: Int = 40) -> String {
    var escaped = ""
    for character in text.prefix(limit) {
        switch character {
        case "\"": escaped += "\\\""
        case "\\": escaped += "\\\\"
        case "\n": escaped += "\\n"
        default:
            // Control characters never reach a terminal raw from a message (an ESC
            // would recolour it): \u{1B} and the like instead.
            if character.unicodeScalars.contains(where: isControl) {
                for scalar in character.unicodeScalars {
                    escaped +=
                        isControl(scalar) ? "\\u{\(String(scalar.value, radix: 16, uppercase: true))}" : String(scalar)
                }
            } else {
                escaped.append(character)
            }
        }
    }
    return "\"" + escaped + (text.count > limit ? "…" : "") + "\""
}

/// Bytes as hex, the first 16 only.
func hexPreview(_ bytes: [UInt8], limit: Int = 16) -> String {
    let digits = Array("0123456789abcdef")
    var text = "0x"
    for byte in bytes.prefix(limit) {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0xF)])
    }
    return text + (bytes.count > limit ? "…" : "")
}

/// C0 controls (NUL to US), DEL and the C1 controls: what names may not hold.
func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
}
