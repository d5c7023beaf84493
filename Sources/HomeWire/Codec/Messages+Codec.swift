internal import CHomeProto
public import HomeModel
public import NIOCore

/// A request or response message of `service HomeService`, encoded with protobuf-c.
public protocol WireMessage: Sendable {
    /// Appends the message's encoding (no frame header) to `buffer`.
    func encode(into buffer: inout ByteBuffer)
    /// Decodes the message; a malformed or invalid one is `INVALID_ARGUMENT`.
    init(wire bytes: UnsafeRawBufferPointer) throws(HomeError)
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

    @inlinable
    public init(wire bytes: [UInt8]) throws(HomeError) {
        let result: Result<Self, HomeError> = bytes.withUnsafeBytes { raw in
            do throws(HomeError) { return .success(try Self(wire: raw)) } catch { return .failure(error) }
        }
        self = try result.get()
    }
}

extension HomeError {
    fileprivate static func status(_ code: Home__V1__StatusCode, _ message: UnsafeMutablePointer<CChar>?) -> HomeError?
    {
        HomeError.Code(wireValue: Int(code.rawValue)).map { HomeError($0, swiftString(message)) }
    }
}

extension GetHomeRequest: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__GetHomeRequest.self)
        home__v1__get_home_request__init(message)
        message.pointee.home_id = homeID
        message.pointee.page_size = pageSize
        message.pointee.page_token = arena.cString(pageToken)
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try withUnpacked(
            bytes, as: "home.v1.GetHomeRequest", unpack: home__v1__get_home_request__unpack,
            free: home__v1__get_home_request__free_unpacked
        ) {
            GetHomeRequest(
                homeID: $0.pointee.home_id, pageSize: $0.pointee.page_size,
                pageToken: swiftString($0.pointee.page_token))
        }
    }
}

extension GetHomeResponse: WireMessage {
    /// Encodes the given homes of a graph without copying it into a response first.
    @_spi(Wire) public static func encodeHomes(
        graph: HomeGraph, homeIDs: [ObjectID], seq: UInt64, journalID: String,
        into buffer: inout ByteBuffer
    ) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__GetHomeResponse.self)
        home__v1__get_home_response__init(message)
        let homes = homeIDs.compactMap { graph.homes[$0] }
        message.pointee.n_homes = homes.count
        message.pointee.homes = arena.array(UnsafeMutablePointer<Home__V1__Home>?.self, count: homes.count) {
            $0.home(homes[$1], in: graph)
        }
        message.pointee.seq = seq
        message.pointee.journal_id = arena.cString(journalID)
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    /// Encodes one page of a paged GetHome: the accessories at `accessories`
    /// positions (counted across the homes, in order), and with `withTables` each
    /// home's other tables (the first page); otherwise each home that has
    /// accessories on the page, with only its id.
    @_spi(Wire) public static func encodePage(
        graph: HomeGraph, homeIDs: [ObjectID], accessories positions: Range<Int>, withTables: Bool,
        seq: UInt64, journalID: String, nextPageToken: String, into buffer: inout ByteBuffer
    ) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__GetHomeResponse.self)
        home__v1__get_home_response__init(message)
        var homes: [UnsafeMutablePointer<Home__V1__Home>?] = []
        var start = 0
        for home in homeIDs.compactMap({ graph.homes[$0] }) {
            // This home's accessories are at positions start..<start+count.
            let first = max(positions.lowerBound - start, 0)
            let end = min(positions.upperBound - start, home.accessoryIDs.count)
            start += home.accessoryIDs.count
            let onPage = first < end ? home.accessoryIDs[first..<end] : []
            guard withTables || !onPage.isEmpty else { continue }
            homes.append(arena.home(home, in: graph, accessoryIDs: onPage, withTables: withTables))
        }
        message.pointee.n_homes = homes.count
        message.pointee.homes = arena.array(UnsafeMutablePointer<Home__V1__Home>?.self, count: homes.count) {
            _, index in homes[index]
        }
        message.pointee.seq = seq
        message.pointee.journal_id = arena.cString(journalID)
        message.pointee.next_page_token = arena.cString(nextPageToken)
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    public func encode(into buffer: inout ByteBuffer) {
        Self.encodeHomes(graph: graph, homeIDs: graph.homeOrder, seq: seq, journalID: journalID, into: &buffer)
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try withUnpacked(
            bytes, as: "home.v1.GetHomeResponse", unpack: home__v1__get_home_response__unpack,
            free: home__v1__get_home_response__free_unpacked
        ) { message throws(HomeError) in
            var tables = DecodedTables()
            for index in 0..<message.pointee.n_homes {
                ModelDecoding.addHome(message.pointee.homes[index]!.pointee, to: &tables)
            }
            guard swiftString(message.pointee.next_page_token).isEmpty else {
                throw HomeError(
                    .invalidArgument, "this GetHomeResponse is one page of several: assemble it with GetHomeAssembler")
            }
            return GetHomeResponse(
                graph: try tables.graph(), seq: message.pointee.seq,
                journalID: swiftString(message.pointee.journal_id))
        }
    }
}

/// One page of a paged GetHome, kept as it arrived until `GetHomeAssembler.add`
/// takes it in (a page alone is not a consistent home).
public struct GetHomePage: WireMessage {
    /// The page's encoding: a `GetHomeResponse`.
    let encoded: ByteBuffer

    public var bytes: [UInt8] { Array(encoded.readableBytesView) }

    public init(bytes: [UInt8]) {
        self.encoded = ByteBuffer(bytes: bytes)
    }

    /// A page the daemon encoded.
    package init(encoded: ByteBuffer) {
        self.encoded = encoded
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self.encoded = ByteBuffer(bytes: bytes)
    }

    public func encode(into buffer: inout ByteBuffer) {
        buffer.writeImmutableBuffer(encoded)
    }
}

/// Puts together a home sent in pages (GetHome with a page size), page by page.
public struct GetHomeAssembler {
    private var tables = DecodedTables()
    private var snapshot: (seq: UInt64, journalID: String)?

    public init() {}

    /// Adds the next page.
    ///
    /// - Returns: the token that asks for the page after it; empty after the last.
    /// - Throws: `.invalidArgument` when the page does not decode, comes from
    ///   another snapshot than the first, or names a home the first page did not.
    public mutating func add(_ page: GetHomePage) throws(HomeError) -> String {
        let result: Result<String, HomeError> = page.encoded.withUnsafeReadableBytes { raw in
            do throws(HomeError) { return .success(try add(page: raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    private mutating func add(page bytes: UnsafeRawBufferPointer) throws(HomeError) -> String {
        try withUnpacked(
            bytes, as: "home.v1.GetHomeResponse", unpack: home__v1__get_home_response__unpack,
            free: home__v1__get_home_response__free_unpacked
        ) { message throws(HomeError) -> String in
            let seq = message.pointee.seq
            let journalID = swiftString(message.pointee.journal_id)
            if let snapshot {
                guard snapshot.seq == seq, snapshot.journalID == journalID else {
                    throw HomeError(
                        .invalidArgument,
                        "a GetHome page at seq \(seq) follows pages at seq \(snapshot.seq): "
                            + "pages must come from one snapshot")
                }
                for index in 0..<message.pointee.n_homes {
                    let home = message.pointee.homes[index]!.pointee
                    guard tables.homes[home.id] != nil else {
                        throw HomeError(
                            .invalidArgument, "a GetHome page names home \(home.id), which the first page did not")
                    }
                    ModelDecoding.addAccessories(of: home, toHome: home.id, in: &tables)
                }
            } else {
                snapshot = (seq, journalID)
                for index in 0..<message.pointee.n_homes {
                    ModelDecoding.addHome(message.pointee.homes[index]!.pointee, to: &tables)
                }
            }
            return swiftString(message.pointee.next_page_token)
        }
    }

    /// The whole home, once the last page is in.
    public func response() throws(HomeError) -> GetHomeResponse {
        guard let snapshot else { throw HomeError(.invalidArgument, "no GetHome page was added") }
        return GetHomeResponse(graph: try tables.graph(), seq: snapshot.seq, journalID: snapshot.journalID)
    }
}

extension ReadCharacteristicsRequest: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__ReadCharacteristicsRequest.self)
        home__v1__read_characteristics_request__init(message)
        message.pointee.n_characteristic_ids = characteristicIDs.count
        message.pointee.characteristic_ids = arena.ids(characteristicIDs)
        message.pointee.fresh = fresh ? 1 : 0
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try withUnpacked(
            bytes, as: "home.v1.ReadCharacteristicsRequest",
            unpack: home__v1__read_characteristics_request__unpack,
            free: home__v1__read_characteristics_request__free_unpacked
        ) { message in
            ReadCharacteristicsRequest(
                characteristicIDs: ModelDecoding.ids(
                    message.pointee.characteristic_ids, message.pointee.n_characteristic_ids),
                fresh: message.pointee.fresh != 0)
        }
    }
}

extension ReadCharacteristicsResponse: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__ReadCharacteristicsResponse.self)
        home__v1__read_characteristics_response__init(message)
        message.pointee.seq = seq
        message.pointee.n_reads = reads.count
        message.pointee.reads = arena.array(
            UnsafeMutablePointer<Home__V1__CharacteristicRead>?.self, count: reads.count
        ) { arena, index in
            let read = reads[index]
            let item = arena.allocate(Home__V1__CharacteristicRead.self)
            home__v1__characteristic_read__init(item)
            item.pointee.characteristic_id = read.characteristicID
            item.pointee.value = arena.optionalValue(read.value)
            item.pointee.last_updated_ms = read.lastUpdatedMs
            if let error = read.error {
                item.pointee.code = Home__V1__StatusCode(rawValue: UInt32(error.code.rawValue))
                item.pointee.message = arena.cString(error.message)
            }
            return item
        }
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try withUnpacked(
            bytes, as: "home.v1.ReadCharacteristicsResponse",
            unpack: home__v1__read_characteristics_response__unpack,
            free: home__v1__read_characteristics_response__free_unpacked
        ) { message throws(HomeError) in
            ReadCharacteristicsResponse(
                reads: try swiftArray(message.pointee.reads, message.pointee.n_reads) { pointer in
                    let read = pointer!.pointee
                    return CharacteristicRead(
                        characteristicID: read.characteristic_id, value: ModelDecoding.value(read.value),
                        lastUpdatedMs: read.last_updated_ms, error: .status(read.code, read.message))
                },
                seq: message.pointee.seq)
        }
    }
}

extension WriteCharacteristicsRequest: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__WriteCharacteristicsRequest.self)
        home__v1__write_characteristics_request__init(message)
        message.pointee.atomic = atomic ? 1 : 0
        message.pointee.validate_only = validateOnly ? 1 : 0
        message.pointee.n_writes = writes.count
        message.pointee.writes = arena.array(
            UnsafeMutablePointer<Home__V1__CharacteristicWrite>?.self, count: writes.count
        ) { arena, index in
            let item = arena.allocate(Home__V1__CharacteristicWrite.self)
            home__v1__characteristic_write__init(item)
            item.pointee.characteristic_id = writes[index].characteristicID
            item.pointee.value = arena.value(writes[index].value)
            return item
        }
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try withUnpacked(
            bytes, as: "home.v1.WriteCharacteristicsRequest",
            unpack: home__v1__write_characteristics_request__unpack,
            free: home__v1__write_characteristics_request__free_unpacked
        ) { message throws(HomeError) in
            WriteCharacteristicsRequest(
                writes: try swiftArray(message.pointee.writes, message.pointee.n_writes) { pointer throws(HomeError) in
                    let write = pointer!.pointee
                    guard let value = ModelDecoding.value(write.value) else {
                        throw HomeError(
                            .invalidArgument, "write to characteristic \(write.characteristic_id) carries no value")
                    }
                    return CharacteristicWrite(characteristicID: write.characteristic_id, value: value)
                },
                atomic: message.pointee.atomic != 0,
                validateOnly: message.pointee.validate_only != 0)
        }
    }
}

extension WriteCharacteristicsResponse: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__WriteCharacteristicsResponse.self)
        home__v1__write_characteristics_response__init(message)
        message.pointee.seq = seq
        message.pointee.n_results = results.count
        message.pointee.results = arena.writeResults(results)
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try withUnpacked(
            bytes, as: "home.v1.WriteCharacteristicsResponse",
            unpack: home__v1__write_characteristics_response__unpack,
            free: home__v1__write_characteristics_response__free_unpacked
        ) { message throws(HomeError) in
            WriteCharacteristicsResponse(
                results: try ModelDecoding.writeResults(message.pointee.results, message.pointee.n_results),
                seq: message.pointee.seq)
        }
    }
}

extension SubscribeRequest: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__SubscribeRequest.self)
        home__v1__subscribe_request__init(message)
        // An empty filter is left out, as every protobuf runtime leaves out an empty message.
        message.pointee.filter = filter == SubscriptionFilter() ? nil : arena.filter(filter)
        message.pointee.snapshot = snapshot ? 1 : 0
        if let sinceSeq {
            message.pointee.since_present_case = HOME__V1__SUBSCRIBE_REQUEST__SINCE_PRESENT_SINCE_SEQ
            message.pointee.since_seq = sinceSeq
        }
        message.pointee.journal_id = arena.cString(journalID)
        message.pointee.exclude_own = excludeOwn ? 1 : 0
        message.pointee.policy = Home__V1__SlowConsumerPolicy(rawValue: policy.wireNumber())
        message.pointee.queue_limit = queueLimit
        message.pointee.heartbeat_ms = heartbeatMs
        message.pointee.min_interval_ms = minIntervalMs
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try withUnpacked(
            bytes, as: "home.v1.SubscribeRequest", unpack: home__v1__subscribe_request__unpack,
            free: home__v1__subscribe_request__free_unpacked
        ) { message throws(HomeError) in
            let filter = try ModelDecoding.filter(message.pointee.filter)
            let since =
                message.pointee.since_present_case == HOME__V1__SUBSCRIBE_REQUEST__SINCE_PRESENT_SINCE_SEQ
                ? message.pointee.since_seq : nil
            return SubscribeRequest(
                filter: filter, snapshot: message.pointee.snapshot != 0, sinceSeq: since,
                journalID: swiftString(message.pointee.journal_id), excludeOwn: message.pointee.exclude_own != 0,
                policy: try .fromWire(message.pointee.policy.rawValue, field: "SubscribeRequest.policy"),
                queueLimit: message.pointee.queue_limit, heartbeatMs: message.pointee.heartbeat_ms,
                minIntervalMs: message.pointee.min_interval_ms)
        }
    }
}

public struct GetStatusRequest: Hashable, Sendable, WireMessage {
    public init() {}

    public func encode(into buffer: inout ByteBuffer) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__GetStatusRequest.self)
        home__v1__get_status_request__init(message)
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        try withUnpacked(
            bytes, as: "home.v1.GetStatusRequest", unpack: home__v1__get_status_request__unpack,
            free: home__v1__get_status_request__free_unpacked
        ) { _ in }
    }
}

extension GetStatusResponse: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__GetStatusResponse.self)
        home__v1__get_status_response__init(message)
        message.pointee.server_version = arena.cString(serverVersion)
        message.pointee.protocol_version = protocolVersion
        message.pointee.connection_id = connectionID
        message.pointee.journal_id = arena.cString(journalID)
        message.pointee.seq = seq
        message.pointee.uptime_ms = uptimeMs
        message.pointee.connections = connections
        message.pointee.subscriptions = subscriptions
        message.pointee.homes = homes
        message.pointee.accessories = accessories
        message.pointee.characteristics = characteristics
        message.pointee.socket_path = arena.cString(socketPath)
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try withUnpacked(
            bytes, as: "home.v1.GetStatusResponse", unpack: home__v1__get_status_response__unpack,
            free: home__v1__get_status_response__free_unpacked
        ) { message in
            let wire = message.pointee
            var status = GetStatusResponse()
            status.serverVersion = swiftString(wire.server_version)
            status.protocolVersion = wire.protocol_version
            status.connectionID = wire.connection_id
            status.journalID = swiftString(wire.journal_id)
            status.seq = wire.seq
            status.uptimeMs = wire.uptime_ms
            status.connections = wire.connections
            status.subscriptions = wire.subscriptions
            status.homes = wire.homes
            status.accessories = wire.accessories
            status.characteristics = wire.characteristics
            status.socketPath = swiftString(wire.socket_path)
            return status
        }
    }
}

extension ListAccessoriesRequest: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__ListAccessoriesRequest.self)
        home__v1__list_accessories_request__init(message)
        message.pointee.home_id = homeID
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try withUnpacked(
            bytes, as: "home.v1.ListAccessoriesRequest", unpack: home__v1__list_accessories_request__unpack,
            free: home__v1__list_accessories_request__free_unpacked
        ) { ListAccessoriesRequest(homeID: $0.pointee.home_id) }
    }
}

extension ListAccessoriesResponse: WireMessage {
    /// The accessories and rooms of these homes, with their services and characteristics.
    package init(graph: HomeGraph, homeIDs: [ObjectID]) {
        let homes = homeIDs.compactMap { graph.homes[$0] }
        let accessories = homes.flatMap { $0.accessoryIDs.compactMap { graph.accessories[$0] } }
        var services: [ObjectID: AccessoryService] = [:]
        var characteristics: [ObjectID: Characteristic] = [:]
        for accessory in accessories {
            for serviceID in accessory.serviceIDs {
                guard let service = graph.services[serviceID] else { continue }
                services[serviceID] = service
                for id in service.characteristicIDs { characteristics[id] = graph.characteristics[id] }
            }
        }
        self.init(
            accessories: accessories, rooms: homes.flatMap { $0.roomIDs.compactMap { graph.rooms[$0] } },
            services: services, characteristics: characteristics)
    }

    public func encode(into buffer: inout ByteBuffer) {
        Self.encode(rooms: rooms, accessories: accessories, tables: self, into: &buffer)
    }

    private static func encode(
        rooms: [Room], accessories: [Accessory], tables graph: some ServiceTables,
        into buffer: inout ByteBuffer
    ) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__ListAccessoriesResponse.self)
        home__v1__list_accessories_response__init(message)
        message.pointee.n_rooms = rooms.count
        message.pointee.rooms = arena.array(UnsafeMutablePointer<Home__V1__Room>?.self, count: rooms.count) {
            $0.room(rooms[$1])
        }
        message.pointee.n_accessories = accessories.count
        message.pointee.accessories = arena.array(
            UnsafeMutablePointer<Home__V1__Accessory>?.self, count: accessories.count
        ) {
            $0.accessory(accessories[$1], in: graph)
        }
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try withUnpacked(
            bytes, as: "home.v1.ListAccessoriesResponse", unpack: home__v1__list_accessories_response__unpack,
            free: home__v1__list_accessories_response__free_unpacked
        ) { message in
            // Decoded through a synthetic home so the tables fill exactly as GetHome's do.
            var home = Home__V1__Home()
            home__v1__home__init(&home)
            home.n_rooms = message.pointee.n_rooms
            home.rooms = message.pointee.rooms
            home.n_accessories = message.pointee.n_accessories
            home.accessories = message.pointee.accessories
            var tables = DecodedTables()
            ModelDecoding.addHome(home, to: &tables)
            return ListAccessoriesResponse(
                accessories: home.n_accessories == 0
                    ? [] : (0..<home.n_accessories).compactMap { tables.accessories[home.accessories[$0]!.pointee.id] },
                rooms: home.n_rooms == 0
                    ? [] : (0..<home.n_rooms).compactMap { tables.rooms[home.rooms[$0]!.pointee.id] },
                services: tables.services, characteristics: tables.characteristics)
        }
    }
}
