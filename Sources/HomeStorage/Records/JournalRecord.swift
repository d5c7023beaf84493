internal import HomeModel

/// The bytes of one journal row: the events of one commit. They share the commit's
/// time and origin, and their sequence numbers follow one another from the row's
/// first, so each is stored once, in the row's columns or the record's head.
///
/// Layout: a version byte (1); the origin (its kind's name, the connection id, the
/// name, and a 0 byte, or a 1 byte and the uid); then per event a tag byte and its fields:
/// 1 value: accessory, service and characteristic ids, the value, merged count;
/// 2 reachability: accessory id, a 0/1 byte;
/// 3 layout: action and object kind by name, object, home and parent ids, the name;
/// 4 primary home, 5 action set executed, 6 trigger fired: an id; 7 audit: the
/// action and the detail; 8 audit with values: the action, the detail, a count
/// and that many characteristic ids and values (a note without values is still
/// written as 7, so that the common case stays readable by builds before 8).
/// Names rather than numbers for the model's enums: a record outlives any
/// ordering of their cases.
enum JournalRecord {
    static let version: UInt8 = 1

    private enum Tag: UInt8 {
        case value = 1
        case reachability = 2
        case layout = 3
        case primaryHome = 4
        case actionSet = 5
        case trigger = 6
        case audit = 7
        case auditWithValues = 8
    }

    /// - Precondition: `events` is not empty and shares one origin.
    static func encode(_ events: [HomeEvent]) -> [UInt8] {
        var writer = RecordWriter(version: version, capacity: 16 + events.count * 16)
        let origin = events[0].origin
        writer.string(origin.kind.rawValue)
        writer.varint(origin.connectionID)
        writer.string(origin.name)
        if let uid = origin.uid {
            writer.byte(1)
            writer.varint(UInt64(uid))
        } else {
            writer.byte(0)
        }
        for event in events {
            switch event.body {
            case .value(let change):
                writer.byte(Tag.value.rawValue)
                writer.varint(change.accessoryID)
                writer.varint(change.serviceID)
                writer.varint(change.characteristicID)
                writer.value(change.value)
                writer.varint(UInt64(change.merged))
            case .reachability(let accessoryID, let reachable):
                writer.byte(Tag.reachability.rawValue)
                writer.varint(accessoryID)
                writer.byte(reachable ? 1 : 0)
            case .layout(let change):
                writer.byte(Tag.layout.rawValue)
                writer.string(change.action.rawValue)
                writer.string(change.object.rawValue)
                writer.varint(change.objectID)
                writer.varint(change.homeID)
                writer.varint(change.parentID)
                writer.string(change.name)
            case .primaryHome(let id):
                writer.byte(Tag.primaryHome.rawValue)
                writer.varint(id)
            case .actionSetExecuted(let id):
                writer.byte(Tag.actionSet.rawValue)
                writer.varint(id)
            case .triggerFired(let id):
                writer.byte(Tag.trigger.rawValue)
                writer.varint(id)
            case .audit(let note):
                writer.byte(note.values.isEmpty ? Tag.audit.rawValue : Tag.auditWithValues.rawValue)
                writer.string(note.action)
                writer.string(note.detail)
                guard !note.values.isEmpty else { continue }
                writer.varint(UInt64(note.values.count))
                for (id, value) in note.values.sorted(by: { $0.key < $1.key }) {
                    writer.varint(id)
                    writer.value(value)
                }
            }
        }
        return writer.bytes
    }

    /// - Throws: `.dataLoss` naming the row and the byte at fault when the bytes
    ///   are not a record this build wrote.
    static func decode(_ bytes: [UInt8], firstSeq: UInt64, timeMs: Int64) throws(HomeError) -> [HomeEvent] {
        var reader = RecordReader(bytes: bytes, what: "journal row \(firstSeq)")
        try reader.expectVersion(version)
        let kindName = try reader.string()
        var origin = Origin(
            kind: Origin.Kind(rawValue: kindName) ?? .unknown, connectionID: try reader.varint(),
            name: try reader.string())
        if try reader.byte() == 1 { origin.uid = UInt32(truncatingIfNeeded: try reader.varint()) }
        var events: [HomeEvent] = []
        var seq = firstSeq
        while !reader.atEnd {
            let tagByte = try reader.byte()
            let body: HomeEvent.Body
            switch Tag(rawValue: tagByte) {
            case .value:
                let accessoryID = try reader.varint()
                let serviceID = try reader.varint()
                let characteristicID = try reader.varint()
                guard let value = try reader.value() else {
                    throw HomeError(.dataLoss, "journal row \(firstSeq): value event \(seq) has no value")
                }
                body = .value(
                    ValueChange(
                        accessoryID: accessoryID, serviceID: serviceID, characteristicID: characteristicID,
                        value: value, merged: UInt32(clamping: try reader.varint())))
            case .reachability:
                body = .reachability(accessoryID: try reader.varint(), reachable: try reader.byte() != 0)
            case .layout:
                let action = try reader.string()
                let object = try reader.string()
                guard let action = LayoutChange.Action(rawValue: action),
                    let object = ObjectKind(rawValue: object)
                else {
                    throw HomeError(
                        .dataLoss,
                        "journal row \(firstSeq): layout event \(seq) is '\(action) \(object)', "
                            + "which this build does not know")
                }
                let objectID = try reader.varint()
                let homeID = try reader.varint()
                let parentID = try reader.varint()
                body = .layout(
                    LayoutChange(
                        action: action, object: object, objectID: objectID, homeID: homeID,
                        name: try reader.string(), parentID: parentID))
            case .primaryHome: body = .primaryHome(try reader.varint())
            case .actionSet: body = .actionSetExecuted(try reader.varint())
            case .trigger: body = .triggerFired(try reader.varint())
            case .audit: body = .audit(AuditNote(action: try reader.string(), detail: try reader.string()))
            case .auditWithValues:
                var note = AuditNote(action: try reader.string(), detail: try reader.string())
                for _ in 0..<(try reader.varint()) {
                    let id = try reader.varint()
                    guard let value = try reader.value() else {
                        throw HomeError(
                            .dataLoss,
                            "journal row \(firstSeq): audit event \(seq) notes characteristic \(id) without a value")
                    }
                    note.values[id] = value
                }
                body = .audit(note)
            case nil:
                throw HomeError(
                    .dataLoss, "journal row \(firstSeq): unknown event tag \(tagByte) at byte \(reader.offset - 1)")
            }
            events.append(HomeEvent(seq: seq, timeMs: timeMs, origin: origin, body: body))
            seq += 1
        }
        return events
    }
}
