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

// `HomeMethods`, the table of every method, is generated from the schema
// (Generated/home_v1.wire.swift), streaming flag included.

extension HomeMethods {
    /// The method names protoc-c's service descriptor declares, in schema order:
    /// a test checks the daemon routes every one.
    public static var schemaMethodNames: [String] {
        let descriptor = home__v1__home_service__descriptor
        return (0..<Int(descriptor.n_methods)).map { "home.v1.HomeService/" + swiftString(descriptor.methods[$0].name) }
    }
}
