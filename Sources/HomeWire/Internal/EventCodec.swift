internal import CHomeProto
public import HomeModel
public import NIOCore

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

// The streaming hot path, written by hand on purpose: a batch of events is built
// as one protobuf-c tree straight from the sender's queue (no mirror values in
// between, one C origin shared by the events that have the same one), and a
// client reads a batch back the same way, reusing the Swift string of a
// repeated origin; an origin and a layout change are built by their generated
// conversions. Everything else about events goes through the generated mirrors
// (Codec/Event+Codec.swift); a test checks that both give the same bytes.

extension CArena {
    mutating func event(_ event: HomeEvent) -> UnsafeMutablePointer<Home__V1__Event> {
        var unshared: (Origin, UnsafeMutablePointer<Home__V1__Origin>)?
        return self.event(event, sharedOrigin: &unshared)
    }

    /// - Parameter sharedOrigin: the C origin of the previous event, reused when this
    ///   event has the same origin (a batch usually does): one copy, not one per event.
    mutating func event(
        _ event: HomeEvent,
        sharedOrigin: inout (Origin, UnsafeMutablePointer<Home__V1__Origin>)?
    ) -> UnsafeMutablePointer<Home__V1__Event> {
        let message = allocate(Home__V1__Event.self)
        home__v1__event__init(message)
        message.pointee.seq = event.seq
        message.pointee.kind = Home__V1__EventKind(rawValue: event.kind.wireNumber)
        message.pointee.time_ms = event.timeMs
        if let (origin, pointer) = sharedOrigin, origin == event.origin {
            message.pointee.origin = pointer
        } else {
            let pointer = event.origin.build(in: &self)
            sharedOrigin = (event.origin, pointer)
            message.pointee.origin = pointer
        }
        switch event.body {
        case .value(let change):
            let body = allocate(Home__V1__ValueChange.self)
            home__v1__value_change__init(body)
            body.pointee.accessory_id = change.accessoryID
            body.pointee.service_id = change.serviceID
            body.pointee.characteristic_id = change.characteristicID
            body.pointee.value = Proto.Value(change.value).build(in: &self)
            body.pointee.merged = change.merged
            message.pointee.body_case = HOME__V1__EVENT__BODY_VALUE
            message.pointee.value = body
        case .reachability(let accessoryID, let reachable):
            let body = allocate(Home__V1__ReachabilityChange.self)
            home__v1__reachability_change__init(body)
            body.pointee.accessory_id = accessoryID
            body.pointee.reachable = reachable ? 1 : 0
            message.pointee.body_case = HOME__V1__EVENT__BODY_REACHABILITY
            message.pointee.reachability = body
        case .layout(let change):
            message.pointee.body_case = HOME__V1__EVENT__BODY_LAYOUT
            message.pointee.layout = change.build(in: &self)
        case .primaryHome(let homeID):
            message.pointee.body_case = HOME__V1__EVENT__BODY_PRIMARY_HOME_ID
            message.pointee.primary_home_id = homeID
        case .actionSetExecuted(let actionSetID):
            message.pointee.body_case = HOME__V1__EVENT__BODY_ACTION_SET_ID
            message.pointee.action_set_id = actionSetID
        case .triggerFired(let triggerID):
            message.pointee.body_case = HOME__V1__EVENT__BODY_TRIGGER_ID
            message.pointee.trigger_id = triggerID
        case .audit(let note):
            // Not on the hot path: the generated mirror builds it.
            message.pointee.body_case = HOME__V1__EVENT__BODY_AUDIT
            message.pointee.audit = Proto.AuditNote(note).build(in: &self)
        }
        return message
    }
}

enum EventDecoding {
    /// The origin last decoded in a batch, with its C name, so that the next event
    /// from the same origin (a batch usually has one) reuses its Swift string.
    struct PreviousOrigin {
        var name: UnsafePointer<CChar>?
        var origin: Origin
    }

    static func origin(_ wire: Home__V1__Origin, previous: inout PreviousOrigin?) -> Origin {
        let kind = Origin.Kind.fromWire(wire.kind.rawValue, default: .unknown)
        let uid = wire.uid_present_case == HOME__V1__ORIGIN__UID_PRESENT_UID ? wire.uid : nil
        // Read in place (`previous!`), never bound to a copy: a copy of the pair is
        // an outlined copy and destroy per event, on the subscriber's hottest path.
        if previous != nil, previous!.origin.kind == kind, previous!.origin.connectionID == wire.connection_id,
            previous!.origin.uid == uid, let lastName = previous!.name, let name = wire.name,
            strcmp(lastName, name) == 0
        {
            return previous!.origin
        }
        let origin = Origin(kind: kind, connectionID: wire.connection_id, name: swiftString(wire.name), uid: uid)
        previous = PreviousOrigin(name: UnsafePointer(wire.name), origin: origin)
        return origin
    }

    static func event(_ message: Home__V1__Event, previousOrigin: inout PreviousOrigin?) throws(HomeError) -> HomeEvent
    {
        let origin = message.origin.map { Self.origin($0.pointee, previous: &previousOrigin) } ?? Origin(kind: .unknown)
        let body: HomeEvent.Body
        switch message.body_case {
        case HOME__V1__EVENT__BODY_VALUE:
            let change = message.value!.pointee
            guard let value = change.value.flatMap({ CharacteristicValue(Proto.Value(c: $0.pointee)) }) else {
                throw HomeError(.invalidArgument, "value event \(message.seq) carries no value")
            }
            body = .value(
                ValueChange(
                    accessoryID: change.accessory_id, serviceID: change.service_id,
                    characteristicID: change.characteristic_id, value: value, merged: change.merged))
        case HOME__V1__EVENT__BODY_REACHABILITY:
            let change = message.reachability!.pointee
            body = .reachability(accessoryID: change.accessory_id, reachable: change.reachable != 0)
        case HOME__V1__EVENT__BODY_LAYOUT:
            body = .layout(LayoutChange(c: message.layout!.pointee))
        case HOME__V1__EVENT__BODY_PRIMARY_HOME_ID:
            body = .primaryHome(message.primary_home_id)
        case HOME__V1__EVENT__BODY_ACTION_SET_ID:
            body = .actionSetExecuted(message.action_set_id)
        case HOME__V1__EVENT__BODY_TRIGGER_ID:
            body = .triggerFired(message.trigger_id)
        case HOME__V1__EVENT__BODY_AUDIT:
            body = .audit(try AuditNote(wire: Proto.AuditNote(c: message.audit!.pointee), seq: message.seq))
        default:
            throw HomeError(.invalidArgument, "event \(message.seq) has no body")
        }
        return HomeEvent(seq: message.seq, timeMs: message.time_ms, origin: origin, body: body)
    }
}

extension SubscribeResponse: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        Self.encode(
            journalID: journalID, events: events[...], snapshot: snapshot[...], marker: marker,
            resumeAfter: resumeAfter, into: &buffer)
    }

    /// Encodes a batch straight from slices of the sender's queues, without building
    /// a `SubscribeResponse` first (the streaming hot path).
    @_spi(Wire) public static func encode(
        journalID: String, events: ArraySlice<HomeEvent>, snapshot: ArraySlice<Characteristic> = [],
        marker: StreamMarker?, resumeAfter: UInt64? = nil, into buffer: inout ByteBuffer
    ) {
        let base = events.startIndex
        encode(
            journalID: journalID, eventCount: events.count, event: { events[base + $0] }, snapshot: snapshot,
            marker: marker, resumeAfter: resumeAfter, into: &buffer)
    }

    /// Encodes a batch whose events `eventAt(0..<eventCount)` reads from wherever the
    /// sender keeps them, so that no array of them is built first.
    package static func encode(
        journalID: String, eventCount: Int, event eventAt: (Int) -> HomeEvent,
        snapshot: ArraySlice<Characteristic> = [], marker: StreamMarker?, resumeAfter: UInt64? = nil,
        into buffer: inout ByteBuffer
    ) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__SubscribeResponse.self)
        home__v1__subscribe_response__init(message)
        message.pointee.journal_id = arena.cString(journalID)
        message.pointee.n_events = eventCount
        var sharedOrigin: (Origin, UnsafeMutablePointer<Home__V1__Origin>)?
        if eventCount > 0 {
            let pointers = arena.allocate(UnsafeMutablePointer<Home__V1__Event>?.self, count: eventCount)
            for offset in 0..<eventCount {
                (pointers + offset).initialize(to: arena.event(eventAt(offset), sharedOrigin: &sharedOrigin))
            }
            message.pointee.events = pointers
        }
        message.pointee.n_snapshot = snapshot.count
        let snapshotBase = snapshot.startIndex
        message.pointee.snapshot = arena.array(
            UnsafeMutablePointer<Home__V1__Characteristic>?.self, count: snapshot.count
        ) {
            snapshot[snapshotBase + $1].wire.build(in: &$0)
        }
        if let marker {
            message.pointee.marker = marker.build(in: &arena)
        }
        if let resumeAfter {
            message.pointee.resume_present_case = HOME__V1__SUBSCRIBE_RESPONSE__RESUME_PRESENT_RESUME_AFTER
            message.pointee.resume_after = resumeAfter
        }
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    @_spi(Wire) public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try Self.decode(bytes, checkStrings: true)
    }

    /// Decodes a stream message as a client receives it from the daemon, without
    /// re-checking strings the daemon checked when they entered it (on the hot path
    /// of every event a subscriber reads).
    package init(fromDaemon bytes: ByteBuffer) throws(HomeError) {
        let result: Result<SubscribeResponse, HomeError> = bytes.withUnsafeReadableBytes { raw in
            do throws(HomeError) { return .success(try Self.decode(raw, checkStrings: false)) } catch {
                return .failure(error)
            }
        }
        self = try result.get()
    }

    private static func decode(_ bytes: UnsafeRawBufferPointer, checkStrings: Bool) throws(HomeError)
        -> SubscribeResponse
    {
        try withUnpacked(
            bytes, as: "home.v1.SubscribeResponse", unpack: home__v1__subscribe_response__unpack,
            checkStrings: checkStrings
        ) { message throws(HomeError) in
            let wire = message.pointee
            let marker = wire.marker.map { StreamMarker(c: $0.pointee) }
            var previousOrigin: EventDecoding.PreviousOrigin?
            var events: [HomeEvent] = []
            events.reserveCapacity(wire.n_events)
            for index in 0..<wire.n_events {
                events.append(try EventDecoding.event(wire.events[index]!.pointee, previousOrigin: &previousOrigin))
            }
            return SubscribeResponse(
                journalID: swiftString(wire.journal_id),
                events: events,
                snapshot: mappedArray(wire.snapshot, wire.n_snapshot) {
                    Characteristic(wire: Proto.Characteristic(c: $0!.pointee))
                },
                marker: marker,
                resumeAfter: wire.resume_present_case == HOME__V1__SUBSCRIBE_RESPONSE__RESUME_PRESENT_RESUME_AFTER
                    ? wire.resume_after : nil)
        }
    }
}
