public import HomeModel
public import NIOCore

/// A request or response message of `service HomeService`, encoded with protobuf-c.
public protocol WireMessage: Sendable {
    /// Appends the message's encoding (no frame header) to `buffer`.
    func encode(into buffer: inout ByteBuffer)
    /// Decodes the message; a malformed or invalid one is `INVALID_ARGUMENT`.
    @_spi(Wire) init(wire bytes: UnsafeRawBufferPointer) throws(HomeError)
}

// Inlinable so that callers in other modules get them specialized for their
// concrete message: unspecialized, each call looked up `Result<Self, HomeError>`'s
// generic metadata at run time (measurable on the round trip of a read).
extension WireMessage {
    @inlinable
    public func encoded() -> [UInt8] {
        var buffer = ByteBuffer()
        encode(into: &buffer)
        return Array(buffer.readableBytesView)
    }

    /// Decodes a message straight from where it arrived (a payload sliced from
    /// its frame): no copy first.
    @_spi(Wire) @inlinable
    public init(wire buffer: ByteBuffer) throws(HomeError) {
        let result: Result<Self, HomeError> = buffer.withUnsafeReadableBytes { raw in
            do throws(HomeError) { return .success(try Self(wire: raw)) } catch { return .failure(error) }
        }
        self = try result.get()
    }

    @_spi(Wire) @inlinable
    public init(wire bytes: [UInt8]) throws(HomeError) {
        let result: Result<Self, HomeError> = bytes.withUnsafeBytes { raw in
            do throws(HomeError) { return .success(try Self(wire: raw)) } catch { return .failure(error) }
        }
        self = try result.get()
    }
}

extension GetHomeResponse: WireMessage {
    /// Encodes the given homes of a graph without copying it into a response first.
    package static func encodeHomes(
        graph: HomeGraph, homeIDs: [ObjectID], seq: UInt64, journalID: String,
        into buffer: inout ByteBuffer
    ) {
        Proto.GetHomeResponse(
            homes: homeIDs.compactMap { id in graph.homes[id].map { Proto.Home($0, in: graph) } }, seq: seq,
            journalID: journalID, nextPageToken: ""
        ).serialize(into: &buffer)
    }

    /// Encodes one page of a paged GetHome: the accessories at `accessories`
    /// positions (counted across the homes, in order), and with `withTables` each
    /// home's other tables (the first page); otherwise each home that has
    /// accessories on the page, with only its id.
    package static func encodePage(
        graph: HomeGraph, homeIDs: [ObjectID], accessories positions: Range<Int>, withTables: Bool,
        seq: UInt64, journalID: String, nextPageToken: String, into buffer: inout ByteBuffer
    ) {
        var homes: [Proto.Home] = []
        var start = 0
        for home in homeIDs.compactMap({ graph.homes[$0] }) {
            // This home's accessories are at positions start..<start+count.
            let first = max(positions.lowerBound - start, 0)
            let end = min(positions.upperBound - start, home.accessoryIDs.count)
            start += home.accessoryIDs.count
            let onPage = first < end ? home.accessoryIDs[first..<end] : []
            guard withTables || !onPage.isEmpty else { continue }
            homes.append(Proto.Home(home, in: graph, accessoryIDs: onPage, withTables: withTables))
        }
        Proto.GetHomeResponse(homes: homes, seq: seq, journalID: journalID, nextPageToken: nextPageToken)
            .serialize(into: &buffer)
    }

    public func encode(into buffer: inout ByteBuffer) {
        Self.encodeHomes(graph: graph, homeIDs: graph.homeOrder, seq: seq, journalID: journalID, into: &buffer)
    }

    @_spi(Wire) public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        let wire = try Proto.GetHomeResponse(serialized: bytes)
        guard wire.nextPageToken.isEmpty else {
            throw HomeError(
                .invalidArgument, "this GetHomeResponse is one page of several: assemble it with GetHomeAssembler")
        }
        var tables = DecodedTables()
        for home in wire.homes { tables.add(home: home) }
        self.init(graph: try tables.graph(), seq: wire.seq, journalID: wire.journalID)
    }
}

/// One page of a paged GetHome, kept as it arrived until `GetHomeAssembler.add`
/// takes it in (a page alone is not a consistent home).
public struct GetHomePage: WireMessage {
    /// The page's encoding: a `GetHomeResponse`.
    let encoded: ByteBuffer

    package var bytes: [UInt8] { Array(encoded.readableBytesView) }

    package init(bytes: [UInt8]) {
        self.encoded = ByteBuffer(bytes: bytes)
    }

    /// A page the daemon encoded.
    package init(encoded: ByteBuffer) {
        self.encoded = encoded
    }

    @_spi(Wire) public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self.encoded = ByteBuffer(bytes: bytes)
    }

    public func encode(into buffer: inout ByteBuffer) {
        buffer.writeImmutableBuffer(encoded)
    }
}

/// Puts together a home sent in pages (GetHome with a page size), page by page.
package struct GetHomeAssembler {
    private var tables = DecodedTables()
    private var snapshot: (seq: UInt64, journalID: String)?

    package init() {}

    /// Adds the next page.
    ///
    /// - Returns: the token that asks for the page after it; empty after the last.
    /// - Throws: `.invalidArgument` when the page does not decode, comes from
    ///   another snapshot than the first, or names a home the first page did not.
    package mutating func add(_ page: GetHomePage) throws(HomeError) -> String {
        let result: Result<String, HomeError> = page.encoded.withUnsafeReadableBytes { raw in
            do throws(HomeError) { return .success(try add(page: raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    private mutating func add(page bytes: UnsafeRawBufferPointer) throws(HomeError) -> String {
        let wire = try Proto.GetHomeResponse(serialized: bytes)
        if let snapshot {
            guard snapshot.seq == wire.seq, snapshot.journalID == wire.journalID else {
                throw HomeError(
                    .invalidArgument,
                    "a GetHome page at seq \(wire.seq) follows pages at seq \(snapshot.seq): "
                        + "pages must come from one snapshot")
            }
            for home in wire.homes {
                guard tables.homes[home.id] != nil else {
                    throw HomeError(
                        .invalidArgument, "a GetHome page names home \(home.id), which the first page did not")
                }
                tables.add(accessories: home.accessories, toHome: home.id)
            }
        } else {
            snapshot = (wire.seq, wire.journalID)
            for home in wire.homes { tables.add(home: home) }
        }
        return wire.nextPageToken
    }

    /// The whole home, once the last page is in.
    package func response() throws(HomeError) -> GetHomeResponse {
        guard let snapshot else { throw HomeError(.invalidArgument, "no GetHome page was added") }
        return GetHomeResponse(graph: try tables.graph(), seq: snapshot.seq, journalID: snapshot.journalID)
    }
}

// One read's and one write's items, as reads, writes and provider commands carry them.

extension CharacteristicWrite: WireConvertible {
    var wire: Proto.CharacteristicWrite {
        Proto.CharacteristicWrite(
            characteristicID: characteristicID, value: Proto.Value(value),
            condition: condition.map {
                Proto.WriteCondition(value: $0.value.map(Proto.Value.init), seq: $0.seq, journalID: $0.journalID)
            })
    }

    /// A provider's write command or report: the condition is ignored.
    init(wire: Proto.CharacteristicWrite) throws(HomeError) {
        try self.init(wire: wire, conditional: false)
    }

    /// - Parameter conditional: take the write's condition (a client's write);
    ///   false for a provider's command answers and reports, which ignore it.
    init(wire: Proto.CharacteristicWrite, conditional: Bool) throws(HomeError) {
        guard let value = CharacteristicValue(wire.value) else {
            throw HomeError(.invalidArgument, "write to characteristic \(wire.characteristicID) carries no value")
        }
        var condition: WriteCondition?
        if conditional, let wanted = wire.condition {
            let expected = CharacteristicValue(wanted.value)
            if wanted.value != nil && expected == nil {
                throw HomeError(
                    .invalidArgument,
                    "the condition of the write to characteristic \(wire.characteristicID) has a value of no kind")
            }
            if expected == nil && wanted.seq == nil {
                throw HomeError(
                    .invalidArgument,
                    "the condition of the write to characteristic \(wire.characteristicID) expects nothing: "
                        + "give a value, a seq or both")
            }
            condition = WriteCondition(value: expected, seq: wanted.seq, journalID: wanted.journalID)
        }
        self.init(characteristicID: wire.characteristicID, value: value, condition: condition)
    }
}

extension CharacteristicRead: WireConvertible {
    var wire: Proto.CharacteristicRead {
        Proto.CharacteristicRead(
            characteristicID: characteristicID, value: value.map(Proto.Value.init), lastUpdatedMs: lastUpdatedMs,
            code: error?.code.wireNumber ?? 0, message: error?.message ?? "", changeSeq: changeSeq)
    }

    init(wire: Proto.CharacteristicRead) {
        self.init(
            characteristicID: wire.characteristicID, value: CharacteristicValue(wire.value),
            lastUpdatedMs: wire.lastUpdatedMs, error: .fromWire(code: wire.code, message: wire.message),
            changeSeq: wire.changeSeq)
    }
}

extension WriteResult: WireConvertible {
    var wire: Proto.WriteResult {
        Proto.WriteResult(
            characteristicID: characteristicID, code: error?.code.wireNumber ?? 0, message: error?.message ?? "",
            seq: seq, accessoryID: accessoryID)
    }

    init(wire: Proto.WriteResult) {
        self.init(
            characteristicID: wire.characteristicID, error: .fromWire(code: wire.code, message: wire.message),
            seq: wire.seq, accessoryID: wire.accessoryID)
    }
}

extension HomeError.Code {
    /// The `home.v1.StatusCode` number: gRPC's.
    var wireNumber: UInt32 { UInt32(rawValue) }
}

extension ListAccessoriesResponse: WireMessage {
    /// The accessories and rooms of these homes, with their services and characteristics.
    package init(graph: HomeGraph, homeIDs: [ObjectID]) {
        let homes = homeIDs.compactMap { graph.homes[$0] }
        self.init(
            graph: graph, accessoryIDs: homes.flatMap(\.accessoryIDs),
            rooms: homes.flatMap { $0.roomIDs.compactMap { graph.rooms[$0] } })
    }

    /// These accessories (and rooms), with their services and characteristics.
    package init(graph: HomeGraph, accessoryIDs: [ObjectID], rooms: [Room] = []) {
        let accessories = accessoryIDs.compactMap { graph.accessories[$0] }
        var services: [ObjectID: AccessoryService] = [:]
        var characteristics: [ObjectID: Characteristic] = [:]
        for accessory in accessories {
            for serviceID in accessory.serviceIDs {
                guard let service = graph.services[serviceID] else { continue }
                services[serviceID] = service
                for id in service.characteristicIDs { characteristics[id] = graph.characteristics[id] }
            }
        }
        self.init(accessories: accessories, rooms: rooms, services: services, characteristics: characteristics)
    }

    public func encode(into buffer: inout ByteBuffer) {
        Proto.ListAccessoriesResponse(
            accessories: accessories.map { Proto.Accessory($0, in: self) }, rooms: rooms
        ).serialize(into: &buffer)
    }

    @_spi(Wire) public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        let wire = try Proto.ListAccessoriesResponse(serialized: bytes)
        // Decoded through a synthetic home so the tables fill exactly as GetHome's do.
        var tables = DecodedTables()
        tables.add(
            home: Proto.Home(
                id: 0, name: "", primary: false, defaultRoomID: 0, rooms: wire.rooms, zones: [],
                accessories: wire.accessories, serviceGroups: [], actionSets: [], triggers: [], location: nil))
        self.init(
            accessories: wire.accessories.compactMap { tables.accessories[$0.id] },
            rooms: wire.rooms.compactMap { tables.rooms[$0.id] }, services: tables.services,
            characteristics: tables.characteristics)
    }
}
