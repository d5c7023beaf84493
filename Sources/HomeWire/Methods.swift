internal import CHomeProto

/// The methods of `service HomeService` in Protos/home_v1.proto.
///
/// protoc-c's service descriptor has no streaming flag, so which methods stream is
/// declared here; a test checks this table against the generated descriptor.
public enum HomeMethod: String, Sendable, CaseIterable {
    case getHome = "home.v1.HomeService/GetHome"
    case listAccessories = "home.v1.HomeService/ListAccessories"
    case readCharacteristics = "home.v1.HomeService/ReadCharacteristics"
    case writeCharacteristics = "home.v1.HomeService/WriteCharacteristics"
    case subscribe = "home.v1.HomeService/Subscribe"
    case getStatus = "home.v1.HomeService/GetStatus"
    case changeLayout = "home.v1.HomeService/ChangeLayout"
    case listTypes = "home.v1.HomeService/ListTypes"
    case modifySubscription = "home.v1.HomeService/ModifySubscription"
    case getStats = "home.v1.HomeService/GetStats"
    case executeActionSet = "home.v1.HomeService/ExecuteActionSet"

    /// Server-streaming methods answer with any number of messages before the status.
    public var isServerStreaming: Bool {
        self == .subscribe
    }

    /// The method's short name, as declared in the schema ("GetHome").
    public var name: String {
        String(rawValue.split(separator: "/").last!)
    }
}

extension HomeMethod {
    /// The method names the generated service descriptor declares, in schema order.
    public static var schemaMethodNames: [String] {
        let descriptor = home__v1__home_service__descriptor
        return (0..<Int(descriptor.n_methods)).map { swiftString(descriptor.methods[$0].name) }
    }
}
