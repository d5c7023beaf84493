/// Text made safe for a terminal: names come from the daemon's database, and a name
/// holding an escape sequence must not recolour, retitle or rewrite the user's
/// terminal. Every C0 control character, DEL and every C1 control becomes visible text:
/// ESC as `\e`, newline, carriage return and tab as `\n`, `\r`, `\t`, the rest as `\xNN`.
/// Backslashes are left as they are, so escaping escaped text changes nothing.
func terminalSafe(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: isControl) else { return text }
    var out = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
        guard isControl(scalar) else {
            out.append(scalar)
            continue
        }
        let escape: String
        switch scalar {
        case "\u{1B}": escape = "\\e"
        case "\n": escape = "\\n"
        case "\r": escape = "\\r"
        case "\t": escape = "\\t"
        default: escape = "\\x" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
        }
        out.append(contentsOf: escape.unicodeScalars)
    }
    return String(out)
}

/// C0 controls, DEL and C1 controls (U+0080 to U+009F, which terminals may act on too).
private func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
}
