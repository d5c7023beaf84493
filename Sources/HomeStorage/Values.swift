internal import HomeModel

/// How a `CharacteristicValue` is stored: a `value_type` column naming its case and a
/// `value` column (`ANY`) holding it as SQLite's closest type. Unsigned integers keep
/// their bits in a signed integer.
extension Statement {
    /// Binds a value (or no value: two NULLs) to the `value_type` and `value` parameters.
    func bind(_ typeIndex: Int32, _ valueIndex: Int32, _ value: CharacteristicValue?) {
        switch value {
        case nil:
            bindNull(typeIndex)
            bindNull(valueIndex)
        case .bool(let bool):
            bind(typeIndex, "bool")
            bind(valueIndex, bool)
        case .int(let int):
            bind(typeIndex, "int")
            bind(valueIndex, int)
        case .uint(let uint):
            bind(typeIndex, "uint")
            bind(valueIndex, uint)
        case .float(let double):
            bind(typeIndex, "float")
            bind(valueIndex, double)
        case .string(let string):
            bind(typeIndex, "string")
            bind(valueIndex, string)
        case .data(let bytes):
            bind(typeIndex, "data")
            bind(valueIndex, bytes)
        }
    }

    /// Reads a value stored by `bind(_:_:_:)`: nil if `value_type` is NULL.
    ///
    /// - Throws: `.dataLoss` for a type this build does not know, naming `owner`.
    func value(_ typeColumn: Int32, _ valueColumn: Int32, owner: @autoclosure () -> String) throws(HomeError)
        -> CharacteristicValue?
    {
        if isNull(typeColumn) { return nil }
        if text(typeColumn, equals: "bool") { return .bool(bool(valueColumn)) }
        if text(typeColumn, equals: "int") { return .int(int64(valueColumn)) }
        if text(typeColumn, equals: "uint") { return .uint(UInt64(bitPattern: int64(valueColumn))) }
        if text(typeColumn, equals: "float") { return .float(double(valueColumn)) }
        if text(typeColumn, equals: "string") { return .string(string(valueColumn)) }
        if text(typeColumn, equals: "data") { return .data(bytes(valueColumn)) }
        throw HomeError(.dataLoss, "\(owner()) has a value of unknown type \(string(typeColumn))")
    }
}
