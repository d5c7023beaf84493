/// An error with a gRPC canonical code and a message that says what was wrong and
/// with which id or value. The one error type the model, server and client share.
public struct HomeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// gRPC's canonical status codes (same numbers). There is no `.ok`: success is not an error.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: Int
        private init(_ rawValue: Int) { self.rawValue = rawValue }

        public static let cancelled = Code(1)
        public static let unknown = Code(2)
        public static let invalidArgument = Code(3)
        public static let deadlineExceeded = Code(4)
        public static let notFound = Code(5)
        public static let alreadyExists = Code(6)
        public static let permissionDenied = Code(7)
        public static let resourceExhausted = Code(8)
        public static let failedPrecondition = Code(9)
        public static let aborted = Code(10)
        public static let outOfRange = Code(11)
        public static let unimplemented = Code(12)
        public static let `internal` = Code(13)
        public static let unavailable = Code(14)
        public static let dataLoss = Code(15)
        public static let unauthenticated = Code(16)

        /// The code for a wire status number; nil for 0 (OK). Unknown numbers map to `.unknown`.
        package init?(wireValue: Int) {
            guard wireValue != 0 else { return nil }
            self.init((1...16).contains(wireValue) ? wireValue : 2)
        }

        public var name: String {
            switch rawValue {
            case 1: return "CANCELLED"
            case 2: return "UNKNOWN"
            case 3: return "INVALID_ARGUMENT"
            case 4: return "DEADLINE_EXCEEDED"
            case 5: return "NOT_FOUND"
            case 6: return "ALREADY_EXISTS"
            case 7: return "PERMISSION_DENIED"
            case 8: return "RESOURCE_EXHAUSTED"
            case 9: return "FAILED_PRECONDITION"
            case 10: return "ABORTED"
            case 11: return "OUT_OF_RANGE"
            case 12: return "UNIMPLEMENTED"
            case 13: return "INTERNAL"
            case 14: return "UNAVAILABLE"
            case 15: return "DATA_LOSS"
            case 16: return "UNAUTHENTICATED"
            default: return "UNKNOWN"
            }
        }

        public var description: String { name }
    }

    public var code: Code
    public var message: String
    /// The lower-level error behind this one (a decoder's, an I/O error), when there
    /// is one: for logs and debugging. It never goes on the wire, and two errors
    /// with the same code and message are equal whatever their causes.
    public var cause: (any Error & Sendable)?

    public init(_ code: Code, _ message: String, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public static func == (lhs: HomeError, rhs: HomeError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
    }

    public var description: String { "\(code.name): \(message)" }
}
