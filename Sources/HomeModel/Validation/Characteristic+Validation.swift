/// Who states a value, which decides how strictly it is checked against the
/// characteristic's metadata.
package enum ValueSource: Sendable, Hashable {
    /// A client's write, a scene's action, a trigger's value: checked strictly.
    case request
    /// A device's reading, through its provider (a report, a registration, the answer
    /// to a read): a fact, kept as far as the format can hold it. A number off the
    /// step is rounded to it; one outside the range is kept (a radiator valve's 5 °C
    /// setpoint under a catalog minimum of 10), clamped only to what the format can
    /// hold (an integer format's own range). Kinds, valid values and lengths are
    /// checked as for a request.
    case device
}

extension Characteristic {
    /// The catalog entry of this characteristic's type; nil for a custom type.
    package var typeInfo: CharacteristicTypeInfo? { HAPCatalog.characteristic(uuid: type.uuid) }

    /// Whether the value is an occurrence rather than a state (a button press), so
    /// every write matters; see `CharacteristicTypeInfo.isEventOnly`.
    package var isEventOnly: Bool { HAPCatalog.isEventOnly(uuid: type.uuid) }

    /// "characteristic 42 (CurrentTemperature)": how every message names it.
    var label: String { "characteristic \(id) (\(type.name))" }

    /// The canonical representation of a value of this characteristic's format, or
    /// nil if the value cannot stand for one. See `CharacteristicFormat.normalized(_:)`.
    package func normalized(_ value: CharacteristicValue) -> CharacteristicValue? {
        metadata.format.normalized(value)
    }

    /// Checks a value against this characteristic's properties and metadata and
    /// returns it in the one representation the daemon stores.
    ///
    /// Each violation has its own message, naming the characteristic's id and type
    /// and the offending value. All are `.invalidArgument`, a write to a read-only
    /// characteristic included (HomeKit treats it as a bad request, not a missing
    /// permission: no client may write it). A float on a step is snapped to the
    /// step's exact decimal (21.499999 → 21.5), so equal values compare equal.
    ///
    /// - Parameters:
    ///   - value: The value a client, provider or action wants to write.
    ///   - enforceWritable: False for providers and the simulator, which report
    ///     read-only state such as a current temperature.
    /// - Returns: The normalized value.
    ///   - source: who states it (`ValueSource`): a device's values are kept where
    ///     a request's would be refused for their step or range.
    package func validate(
        _ value: CharacteristicValue, enforceWritable: Bool = true, source: ValueSource = .request
    ) throws(HomeError) -> CharacteristicValue {
        try ValueCheck(characteristic: self, label: nil, source: source).validate(
            value, enforceWritable: enforceWritable)
    }

    /// `validate(_:enforceWritable:)` with messages naming the characteristic as
    /// `label` says, for one that does not exist yet (an accessory being added).
    func validate(
        _ value: CharacteristicValue, enforceWritable: Bool, label: String, source: ValueSource = .request
    ) throws(HomeError) -> CharacteristicValue {
        try ValueCheck(characteristic: self, label: label, source: source).validate(
            value, enforceWritable: enforceWritable)
    }
}

/// One validation: the characteristic's constraints and how messages name it.
///
/// Messages (the label, the value as shown) are built only when a check fails:
/// this runs for every write, a million times a second in a busy daemon.
private struct ValueCheck {
    let properties: CharacteristicProperties
    let metadata: CharacteristicMetadata
    let type: TypeIdentifier
    let id: ObjectID
    let labelOverride: String?
    let source: ValueSource

    init(characteristic: Characteristic, label: String?, source: ValueSource) {
        properties = characteristic.properties
        metadata = characteristic.metadata
        type = characteristic.type
        id = characteristic.id
        labelOverride = label
        self.source = source
    }

    var label: String { labelOverride ?? "characteristic \(id) (\(type.name))" }

    /// Looked up only for a message (the names of valid values and bits), never on
    /// the path of a value that passes.
    var typeInfo: CharacteristicTypeInfo? { HAPCatalog.characteristic(uuid: type.uuid) }

    func validate(_ value: CharacteristicValue, enforceWritable: Bool) throws(HomeError) -> CharacteristicValue {
        if enforceWritable && !properties.writable {
            throw HomeError(.invalidArgument, "\(label) is read-only; cannot write \(value.shortDescription)")
        }
        let format = metadata.format
        guard let normalized = format.normalized(value) ?? deviceClamped(value) else {
            throw typeError(value)
        }
        switch normalized {
        case .bool:
            return normalized
        case .int(let number):
            let number = source == .device ? onStep(number) : number
            try checkInteger(number, shown: CharacteristicValue.int(number).shortDescription)
            return .int(number)
        case .uint(let number):
            let number = source == .device ? onStep(number) : number
            if let small = Int64(exactly: number) {
                try checkInteger(small, shown: CharacteristicValue.uint(number).shortDescription)
            } else {
                try checkInteger(Int128(number), shown: CharacteristicValue.uint(number).shortDescription)
            }
            return .uint(number)
        case .float(let number):
            return .float(try checkFloat(number))
        case .string(let text):
            let length = text.utf8.count
            let limit = metadata.maxLength ?? CharacteristicTypeInfo.defaultStringMaxLength
            if length > limit {
                throw HomeError(
                    .invalidArgument,
                    "\(label): the string \(quoted(text)) is \(length) bytes long; "
                        + "the maximum length is \(limit) bytes")
            }
            return normalized
        case .data(let bytes):
            let limit = metadata.maxLength ?? CharacteristicTypeInfo.defaultDataMaxLength
            if bytes.count > limit {
                throw HomeError(
                    .invalidArgument,
                    "\(label): the data \(hexPreview(bytes)) is \(bytes.count) bytes long; "
                        + "the maximum length is \(limit) bytes")
            }
            if format == .tlv8, let problem = TLV8.malformation(bytes) {
                throw HomeError(
                    .invalidArgument,
                    "\(label): the data \(hexPreview(bytes)) is not well-formed TLV8: \(problem)")
            }
            return normalized
        }
    }

    /// A device's integer outside its integer format's own range, clamped into it;
    /// nil for anything else (and for a request).
    private func deviceClamped(_ value: CharacteristicValue) -> CharacteristicValue? {
        guard source == .device, let range = metadata.format.integerRange else { return nil }
        let number: Int128
        switch value {
        case .int(let int): number = Int128(int)
        case .uint(let uint): number = Int128(uint)
        default: return nil
        }
        return metadata.format.normalized(.int(Int64(clamping: min(max(number, range.lowerBound), range.upperBound))))
            ?? metadata.format.normalized(.uint(UInt64(clamping: min(max(number, range.lowerBound), range.upperBound))))
    }

    /// A device's integer rounded to the nearest step (half away from the base);
    /// itself when there is no step or it is on one.
    private func onStep<Number: FixedWidthInteger>(_ number: Number) -> Number {
        guard let step = metadata.minStep, step > 0 else { return number }
        let base = metadata.minValue ?? 0
        let rounded = Characteristic.nearestStep(Double(number), step: step, base: base)
        return Number(exactly: rounded.rounded()) ?? number
    }

    /// The error for a value the format cannot take at all: the wrong kind, an
    /// integer other than 0 or 1 for a bool, a non-finite float, or an integer
    /// outside the format's own range.
    private func typeError(_ value: CharacteristicValue) -> HomeError {
        let format = metadata.format
        switch (format, value) {
        case (.bool, .int), (.bool, .uint):
            return HomeError(
                .invalidArgument,
                "\(label) takes a bool; \(value.phrase) is neither 0 nor 1")
        case (.float, .float(let number)) where !number.isFinite:
            return HomeError(.invalidArgument, "\(label) takes a finite number, not \(number)")
        case (_, .int), (_, .uint):
            if format.isInteger, let range = format.integerRange {
                return HomeError(
                    .invalidArgument,
                    "\(label): \(value.shortDescription) is outside the \(format.rawValue) range "
                        + "\(range.lowerBound)…\(range.upperBound)")
            }
        default:
            break
        }
        return HomeError(.invalidArgument, "\(label) takes \(format.expectation), not \(value.phrase)")
    }

    /// The common case (every integer that fits in Int64) without Int128 arithmetic,
    /// whose generic conversions cost more than the rest of a write together.
    private func checkInteger(_ number: Int64, shown: @autoclosure () -> String) throws(HomeError) {
        try checkRange(Double(number), shown: shown())
        if let step = metadata.minStep, step > 0 {
            let base = metadata.minValue ?? 0
            if let exactStep = Int64(exactly: step), let exactBase = Int64(exactly: base) {
                let (offset, overflow) = number.subtractingReportingOverflow(exactBase)
                if overflow || offset % exactStep != 0 { throw stepError(shown()) }
            } else if Characteristic.snap(Double(number), step: step, base: base) == nil {
                throw stepError(shown())
            }
        }
        if !metadata.validValues.isEmpty, !metadata.validValues.contains(number) {
            try checkInteger(Int128(number), shown: shown())
        }
        if metadata.validBits != 0, UInt64(bitPattern: number) & ~metadata.validBits != 0 {
            try checkInteger(Int128(number), shown: shown())
        }
    }

    private func checkInteger(_ number: Int128, shown: @autoclosure () -> String) throws(HomeError) {
        try checkRange(Double(number), shown: shown())
        if let step = metadata.minStep, step > 0 {
            let base = metadata.minValue ?? 0
            let onStep: Bool
            if let exactStep = Int128(exactly: step), let exactBase = Int128(exactly: base) {
                onStep = (number - exactBase) % exactStep == 0
            } else {
                onStep = Characteristic.snap(Double(number), step: step, base: base) != nil
            }
            if !onStep { throw stepError(shown()) }
        }
        if !metadata.validValues.isEmpty, !metadata.validValues.contains(where: { Int128($0) == number }) {
            let names = typeInfo
            let allowed = metadata.validValues.map { value in
                names?.name(ofValidValue: value).map { "\(value) (\($0))" } ?? String(value)
            }
            throw HomeError(
                .invalidArgument,
                "\(label): \(shown()) is not a valid value; valid values are "
                    + allowed.joined(separator: ", "))
        }
        if metadata.validBits != 0 {
            let bits = UInt64(truncatingIfNeeded: number)
            let outside = bits & ~metadata.validBits
            if outside != 0 {
                let names = typeInfo?.validBits.map { "bit \($0.bit): \($0.name)" } ?? []
                throw HomeError(
                    .invalidArgument,
                    "\(label): \(shown()) sets bits 0x\(String(outside, radix: 16)) outside the valid bits "
                        + "0x\(String(metadata.validBits, radix: 16))"
                        + (names.isEmpty ? "" : " (\(names.joined(separator: ", ")))"))
            }
        }
    }

    private func checkFloat(_ number: Double) throws(HomeError) -> Double {
        let shown = { formatNumber(number) }
        try checkRange(number, shown: shown())
        guard let step = metadata.minStep, step > 0 else { return number }
        if source == .device { return Characteristic.nearestStep(number, step: step, base: metadata.minValue ?? 0) }
        guard let snapped = Characteristic.snap(number, step: step, base: metadata.minValue ?? 0) else {
            throw stepError(shown())
        }
        return snapped
    }

    private func checkRange(_ number: Double, shown: @autoclosure () -> String) throws(HomeError) {
        // A device's reading is a fact: its range is what the device has.
        guard source == .request else { return }
        if let minimum = metadata.minValue, number < minimum {
            throw HomeError(.invalidArgument, "\(label): \(shown()) is below the minimum \(formatNumber(minimum))")
        }
        if let maximum = metadata.maxValue, number > maximum {
            throw HomeError(.invalidArgument, "\(label): \(shown()) is above the maximum \(formatNumber(maximum))")
        }
    }

    private func stepError(_ shown: String) -> HomeError {
        let step = formatNumber(metadata.minStep ?? 0)
        let base = formatNumber(metadata.minValue ?? 0)
        return HomeError(
            .invalidArgument,
            "\(label): \(shown) is not a multiple of the step \(step) from the minimum \(base)")
    }
}

extension Characteristic {
    /// The step value nearest `number`, rounded to the step's and base's decimals,
    /// or nil if `number` is not close enough to it to be on the step.
    ///
    /// The tolerance is a thousandth of a step plus float32 precision, because many
    /// clients hold values as `Float`: 21.3 arrives as 21.299999237060547.
    static func snap(_ number: Double, step: Double, base: Double) -> Double? {
        let steps = ((number - base) / step).rounded()
        var snapped = base + steps * step
        let tolerance = step * 1e-3 + abs(number) * 1.2e-7
        guard abs(number - snapped) <= tolerance else { return nil }
        let decimals = max(decimalPlaces(step), decimalPlaces(base))
        if decimals > 0 {
            var scale = 1.0
            for _ in 0..<decimals { scale *= 10 }
            snapped = (snapped * scale).rounded() / scale
        }
        return snapped
    }

    /// The step value nearest `number`, however far it is: what a device's reading
    /// off the step becomes (humidity 51.92 with a step of 1 → 52).
    static func nearestStep(_ number: Double, step: Double, base: Double) -> Double {
        let steps = ((number - base) / step).rounded()
        return snap(base + steps * step, step: step, base: base) ?? base + steps * step
    }

    /// How many decimals a catalog number has (0.1 → 1, 0.0001 → 4, 5 → 0), up to 9.
    private static func decimalPlaces(_ number: Double) -> Int {
        var scaled = number
        for places in 0..<10 {
            if abs(scaled - scaled.rounded()) < 1e-9 * max(1, abs(scaled)) { return places }
            scaled *= 10
        }
        return 9
    }
}
