/// When a trigger undoes what its scenes did (HomeKit's end events): after a
/// duration from its firing, or once its event ends (the value leaves what it fired
/// on: motion stops), `afterMs` later. It restores each value its scenes changed,
/// unless someone else changed it since.
public struct TriggerEnd: Hashable, Sendable {
    /// How long after the firing (or after the event ended) it undoes them.
    public var afterMs: Int64
    /// Undo once the event ends rather than after the firing (event triggers only).
    public var whenEventEnds: Bool

    /// No end: what the scenes did stays.
    public static let none = TriggerEnd(afterMs: 0, whenEventEnds: false)

    public init(afterMs: Int64, whenEventEnds: Bool) {
        self.afterMs = afterMs
        self.whenEventEnds = whenEventEnds
    }

    public var isNone: Bool { afterMs == 0 && !whenEventEnds }

    /// "undo after 30m", "undo 5m after it ends", "undo when it ends".
    package var text: String {
        if whenEventEnds {
            return afterMs > 0 ? "undo \(formatDurationMs(UInt64(afterMs))) after it ends" : "undo when it ends"
        }
        return "undo after \(formatDurationMs(UInt64(max(afterMs, 0))))"
    }
}

/// A program a trigger runs when it fires, besides its scenes: with `arguments`,
/// an environment describing the firing, stopped after `timeoutMs`.
public struct TriggerCommand: Hashable, Sendable {
    /// An absolute path.
    public var program: String
    public var arguments: [String]
    public var timeoutMs: Int64

    /// How long a command may run unless told otherwise.
    public static let defaultTimeoutMs: Int64 = 30_000
    /// The longest a command may be given.
    package static let maxTimeoutMs: Int64 = 600_000

    public init(program: String, arguments: [String] = [], timeoutMs: Int64 = TriggerCommand.defaultTimeoutMs) {
        self.program = program
        self.arguments = arguments
        self.timeoutMs = timeoutMs
    }

    /// "/usr/local/bin/notify 'back door' open": for listings and the history.
    package var text: String {
        ([program] + arguments).map { $0.isEmpty || $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ")
    }

    /// Refuses a program that is not an absolute path, text with control characters,
    /// too many or too long arguments, a timeout outside 1 ms…10 min; naming it.
    package func checked(trigger name: String) throws(HomeError) -> TriggerCommand {
        func clean(_ text: String) -> Bool {
            text.utf8.count <= 4096 && !text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
        }
        guard program.hasPrefix("/"), clean(program) else {
            throw HomeError(
                .invalidArgument,
                "trigger \(quoted(name)): a command is an absolute path such as /usr/local/bin/notify, not "
                    + quoted(program))
        }
        guard arguments.count <= 64 else {
            throw HomeError(
                .invalidArgument, "trigger \(quoted(name)): \(arguments.count) arguments are more than 64")
        }
        for (index, argument) in arguments.enumerated() where !clean(argument) {
            throw HomeError(
                .invalidArgument,
                "trigger \(quoted(name)): argument \(index + 1) has a control character or is longer than 4096 bytes")
        }
        guard (1...Self.maxTimeoutMs).contains(timeoutMs) else {
            throw HomeError(
                .invalidArgument,
                "trigger \(quoted(name)): a command's timeout of \(timeoutMs) ms is outside 1…600000 ms")
        }
        return self
    }
}
