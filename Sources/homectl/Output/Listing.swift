internal import ArgumentParser
internal import Yams

/// `-o FORMAT`: how a command prints. `text` is for people and differs per
/// command; `json` and `yaml` hold the same objects (the fields `--json` has
/// always printed); `table` and `wide` are columns of those fields for the list
/// commands, `wide` with more of them (as kubectl's `-o wide`), and `csv` the
/// wide columns as RFC 4180 comma-separated values. Other commands refuse
/// `table`, `wide` and `csv` (see `GlobalOptions.isListCommand`).
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json, yaml, table, wide, csv

    /// JSON or YAML: the objects, not lines for people.
    var isStructured: Bool { self == .json || self == .yaml }
}

/// A column of `-o table` / `-o wide`: a header and the field it shows, or what
/// it says of the item (the words the text output uses: a trigger's condition, a
/// scene's actions).
struct Column {
    let header: String
    let field: String
    /// Only with `-o wide`.
    let wide: Bool
    let render: ((JSON) -> String)?

    init(_ header: String, _ field: String, wide: Bool = false, render: ((JSON) -> String)? = nil) {
        self.header = header
        self.field = field
        self.wide = wide
        self.render = render
    }

    func cell(of item: JSON) -> String {
        render?(item) ?? item[field]?.cell ?? ""
    }
}

extension Output {
    /// Prints a JSON value as JSON, or as YAML with `-o yaml`.
    static func structured(_ value: JSON, _ options: ConnectionOptions) {
        guard options.format == .yaml else {
            line(value.text)
            return
        }
        // Line by line: `line` escapes control characters, newlines included.
        for text in value.yaml.split(separator: "\n", omittingEmptySubsequences: false) { line(String(text)) }
    }

    /// Prints a list command's items in the format asked for and returns true;
    /// returns false for `-o text`, which the command prints its own way.
    static func list(_ items: [JSON], columns: [Column], _ options: ConnectionOptions) -> Bool {
        switch options.format {
        case .text:
            return false
        case .json, .yaml:
            structured(.array(items), options)
        case .table, .wide:
            let shown = columns.filter { !$0.wide || options.format == .wide }
            var rows = options.noHeaders ? [] : [shown.map(\.header)]
            for item in items { rows.append(shown.map { $0.cell(of: item) }) }
            for text in table(rows) { line(text) }
        case .csv:
            if !options.noHeaders { line(columns.map { csvField($0.header) }.joined(separator: ",")) }
            for item in items { line(columns.map { csvField($0.cell(of: item)) }.joined(separator: ",")) }
        }
        return true
    }

    /// A CSV field, quoted when it holds a comma, a quote or a line break.
    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.reduce(into: "") { $0 += $1 == "\"" ? "\"\"" : String($1) } + "\""
    }
}

extension JSON {
    /// The field of an object, by name.
    subscript(field: String) -> JSON? {
        guard case .object(let fields) = self else { return nil }
        return fields.first { $0.0 == field }?.1
    }

    /// A table cell: strings as they are, numbers, true/false, "-" for nothing, and
    /// lists joined with commas.
    var cell: String {
        switch self {
        case .null: return "-"
        case .bool(let value): return value ? "true" : "false"
        case .int(let value): return String(value)
        case .uint(let value): return String(value)
        case .double(let value): return value.isFinite ? String(value) : "-"
        case .string(let value): return value.isEmpty ? "-" : value
        case .array(let values): return values.isEmpty ? "-" : values.map(\.cell).joined(separator: ",")
        case .object: return text
        }
    }

    /// As YAML, the fields in their order, written by Yams. Strings are quoted, so
    /// that a name such as "on" or "42" reads back as a string.
    var yaml: String {
        let text = (try? Yams.serialize(node: yamlNode, width: -1, allowUnicode: true)) ?? ""
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }

    private var yamlNode: Yams.Node {
        switch self {
        case .null: return Yams.Node("null")
        case .bool(let value): return Yams.Node(value ? "true" : "false")
        case .int(let value): return Yams.Node(String(value))
        case .uint(let value): return Yams.Node(String(value))
        case .double(let value): return Yams.Node(value.isFinite ? String(value) : ".nan")
        case .string(let value): return Yams.Node(value, .implicit, .doubleQuoted)
        case .array(let values): return Yams.Node(values.map(\.yamlNode))
        case .object(let fields): return Yams.Node(fields.map { (Yams.Node($0.0), $0.1.yamlNode) })
        }
    }
}
