internal import CHomeProto

/// A unary method of `service HomeService`: its name on the wire, paired with the
/// Swift types of its request and response.
///
/// Each method is declared once, in `HomeMethods`; the daemon's router registers a
/// handler for it and clients call it through the same value, so a call cannot be
/// made with the wrong request or response type.
public struct UnaryMethod<Request: WireMessage, Response: WireMessage>: Sendable, Hashable {
    /// The full name the wire carries: "home.v1.HomeService/GetHome".
    public let name: String

    package init(_ name: String) {
        self.name = name
    }
}

/// A server-streaming method of `service HomeService`: one request, then any
/// number of `Response` messages before the closing status.
public struct ServerStreamingMethod<Request: WireMessage, Response: WireMessage>: Sendable, Hashable {
    /// The full name the wire carries: "home.v1.HomeService/Subscribe".
    public let name: String

    package init(_ name: String) {
        self.name = name
    }
}

/// The methods of `service HomeService` in Protos/home_v1.proto.
///
/// protoc-c's service descriptor has no streaming flag, so which methods stream is
/// said here, by the descriptor's type; a test checks the daemon's routes against
/// the generated service descriptor.
public enum HomeMethods {
    public static let getHome = UnaryMethod<GetHomeRequest, GetHomePage>("home.v1.HomeService/GetHome")
    public static let listAccessories =
        UnaryMethod<ListAccessoriesRequest, ListAccessoriesResponse>("home.v1.HomeService/ListAccessories")
    public static let readCharacteristics =
        UnaryMethod<ReadCharacteristicsRequest, ReadCharacteristicsResponse>("home.v1.HomeService/ReadCharacteristics")
    public static let writeCharacteristics =
        UnaryMethod<WriteCharacteristicsRequest, WriteCharacteristicsResponse>(
            "home.v1.HomeService/WriteCharacteristics")
    public static let subscribe =
        ServerStreamingMethod<SubscribeRequest, SubscribeResponse>("home.v1.HomeService/Subscribe")
    public static let getStatus = UnaryMethod<GetStatusRequest, GetStatusResponse>("home.v1.HomeService/GetStatus")
    public static let changeLayout = UnaryMethod<LayoutRequest, LayoutResponse>("home.v1.HomeService/ChangeLayout")
    public static let listTypes = UnaryMethod<ListTypesRequest, ListTypesResponse>("home.v1.HomeService/ListTypes")
    public static let modifySubscription =
        UnaryMethod<ModifySubscriptionRequest, ModifySubscriptionResponse>("home.v1.HomeService/ModifySubscription")
    public static let getStats = UnaryMethod<GetStatsRequest, GetStatsResponse>("home.v1.HomeService/GetStats")
    public static let executeActionSet =
        UnaryMethod<ExecuteActionSetRequest, ExecuteActionSetResponse>("home.v1.HomeService/ExecuteActionSet")

    /// The method names the generated service descriptor declares, in schema order.
    public static var schemaMethodNames: [String] {
        let descriptor = home__v1__home_service__descriptor
        return (0..<Int(descriptor.n_methods)).map { "home.v1.HomeService/" + swiftString(descriptor.methods[$0].name) }
    }
}
