extension CharacteristicMetadata {
    /// The value a new characteristic starts with when nobody gave one; it always
    /// passes validation.
    ///
    /// The lowest valid value of an enumeration; otherwise false, 0 or 0.0 moved into
    /// [min, max] and onto the step (so a target temperature starts at its minimum
    /// 10, a current temperature at 0); an empty string; no bytes.
    package var defaultValue: CharacteristicValue {
        switch format {
        case .bool:
            return .bool(false)
        case .uint8, .uint16, .uint32, .uint64, .int:
            let number: Int64
            if let lowest = validValues.min() {
                number = lowest
            } else {
                number = Int64(exactly: defaultNumber().rounded(.down)) ?? 0
            }
            return format.isUnsigned ? .uint(UInt64(clamping: number)) : .int(number)
        case .float:
            return .float(defaultNumber())
        case .string:
            return .string("")
        case .tlv8, .data:
            return .data([])
        }
    }

    /// Zero, clamped into [min, max], then down onto the step counted from min.
    private func defaultNumber() -> Double {
        var number = 0.0
        if let maximum = maxValue { number = Swift.min(number, maximum) }
        if let minimum = minValue { number = Swift.max(number, minimum) }
        if let step = minStep, step > 0 {
            let base = minValue ?? 0
            // The epsilon keeps 2730.9999999 steps (float noise for 2731) from losing a step.
            let onStep = base + ((number - base) / step + 1e-9).rounded(.down) * step
            number = Characteristic.snap(onStep, step: step, base: base) ?? onStep
        }
        return number
    }
}
