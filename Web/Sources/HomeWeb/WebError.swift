internal import Foundation
public import HTTPTypes
public import HomeModel
public import Hummingbird

/// An error as the page and scripts receive it: an HTTP status, and as JSON the
/// status code's name and a sentence (homed's own message when homed refused).
public struct WebError: HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    public var code: String
    public var message: String
    public var headers: HTTPFields = [:]

    public init(_ status: HTTPResponse.Status, code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// homed's refusal, with the HTTP status that says the same thing.
    public init(_ error: HomeError) {
        self.init(Self.status(for: error.code), code: error.code.name, error.message)
    }

    static func status(for code: HomeError.Code) -> HTTPResponse.Status {
        switch code {
        case .invalidArgument, .outOfRange: .badRequest
        case .notFound: .notFound
        case .alreadyExists, .aborted, .failedPrecondition: .conflict
        case .permissionDenied: .forbidden
        case .unauthenticated: .unauthorized
        case .resourceExhausted: .tooManyRequests
        case .unimplemented: .notImplemented
        case .unavailable: .serviceUnavailable
        case .deadlineExceeded: .gatewayTimeout
        default: .internalServerError
        }
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = JSONValue.object([("code", .string(code)), ("message", .string(message))]).serialized() + "\n"
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        fields[.cacheControl] = "no-store"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    static func notFound(_ path: String) -> WebError {
        WebError(.notFound, code: "NOT_FOUND", "no such page or API: \(path)")
    }

    static let loginNeeded = WebError(.unauthorized, code: "UNAUTHENTICATED", "log in first (POST /login)")
}
