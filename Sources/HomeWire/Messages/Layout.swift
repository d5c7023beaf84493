public import HomeModel

// Swift values for `rpc ChangeLayout` (LayoutRequest / LayoutResponse in
// Protos/home_v1.proto, which documents every operation).

/// The request of `ChangeLayout`: one operation.
public struct LayoutRequest: Hashable, Sendable {
    public var operation: LayoutOperation

    public init(_ operation: LayoutOperation) {
        self.operation = operation
    }
}
