internal import CHomeProto
public import HomeModel
public import NIOCore

extension ExecuteActionSetRequest: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        var message = Home__V1__ExecuteActionSetRequest()
        home__v1__execute_action_set_request__init(&message)
        message.action_set_id = actionSetID
        withUnsafeMutablePointer(to: &message) { packMessage($0, into: &buffer, withFrameHeader: false) }
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try withUnpacked(
            bytes, as: "home.v1.ExecuteActionSetRequest", unpack: home__v1__execute_action_set_request__unpack,
            free: home__v1__execute_action_set_request__free_unpacked
        ) {
            ExecuteActionSetRequest(actionSetID: $0.pointee.action_set_id)
        }
    }
}

extension ExecuteActionSetResponse: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__ExecuteActionSetResponse.self)
        home__v1__execute_action_set_response__init(message)
        message.pointee.seq = seq
        message.pointee.n_results = results.count
        message.pointee.results = arena.writeResults(results)
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try withUnpacked(
            bytes, as: "home.v1.ExecuteActionSetResponse", unpack: home__v1__execute_action_set_response__unpack,
            free: home__v1__execute_action_set_response__free_unpacked
        ) { message throws(HomeError) in
            ExecuteActionSetResponse(
                results: try ModelDecoding.writeResults(message.pointee.results, message.pointee.n_results),
                seq: message.pointee.seq)
        }
    }
}
