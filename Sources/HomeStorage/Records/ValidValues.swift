/// A characteristic's valid values as a JSON array of integers ("[0,1,3]"), so
/// SQLite's `json_each` can read them too.
enum ValidValues {
    static func encode(_ values: [Int64]) -> String {
        "[" + values.map(String.init).joined(separator: ",") + "]"
    }

    static func decode(_ text: String) -> [Int64]? {
        var body = Substring(text)
        guard body.first == "[", body.last == "]" else { return nil }
        body = body.dropFirst().dropLast()
        if body.allSatisfy(\.isWhitespace) { return [] }
        var values: [Int64] = []
        for part in body.split(separator: ",", omittingEmptySubsequences: false) {
            guard let value = Int64(part.trimmingSpaces) else { return nil }
            values.append(value)
        }
        return values
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var copy = self
        while copy.first?.isWhitespace == true { copy = copy.dropFirst() }
        while copy.last?.isWhitespace == true { copy = copy.dropLast() }
        return copy
    }
}
