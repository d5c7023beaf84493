internal import ArgumentParser

/// `homed-bench`: homed's figures next to the floors they are compared with, each
/// measured in the same run (this machine's absolute timings drift).
@main
struct HomedBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "homed-bench",
        abstract: "Measure homed against a C floor and bare SwiftNIO on the same machine, in the same run.",
        subcommands: [
            Wire.self, FanoutCommand.self, ScaleCommand.self, IdleMemoryCommand.self, JournalStallCommand.self,
            ProfileCommand.self, ProviderCommand.self, DurabilityCommand.self, BackupStallCommand.self,
            HistoryCommand.self,
        ],
        defaultSubcommand: Wire.self)
}

/// Round trips and the event rate to one subscriber (Bench.swift).
struct Wire: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Round trips (HomeClient, BlockingHomeClient, C client, bare NIO echo) and events to one subscriber.")

    @Option(help: "Sequential round trips per measurement.")
    var roundTrips = 20_000
    @Option(help: "Events written per event-rate measurement.")
    var events = 2_000_000
    @Option(help: "Runs of everything; the median run is reported.")
    var runs = 3

    func validate() throws {
        guard roundTrips >= 100 else { throw ValidationError("--round-trips must be at least 100") }
        guard events >= 1000 else { throw ValidationError("--events must be at least 1000") }
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1") }
    }

    func run() async throws {
        try await Bench.run(Bench.Arguments(roundTrips: roundTrips, events: events, runs: runs))
    }
}

struct FanoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "Change-to-delivery latency with 1, 100 and 1 000 subscribers, next to a C floor and bare SwiftNIO.")

    @Option(help: "How long each point runs, in milliseconds.")
    var durationMs = 3000

    func validate() throws {
        guard durationMs >= 100 else { throw ValidationError("--duration-ms must be at least 100") }
    }

    func run() async throws { try await Fanout.run(durationMs: durationMs) }
}

struct ScaleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scale", abstract: "A generated home saved, loaded back and served: times and memory.")

    @Option(help: "Accessories in the generated home (10 characteristics each).")
    var accessories = 10_000

    func validate() throws {
        guard accessories >= 1 else { throw ValidationError("--accessories must be at least 1") }
    }

    func run() async throws { try await Scale.run(accessories: accessories) }
}

struct IdleMemoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle-memory",
        abstract: "The daemon's resident memory per idle subscriber connection, measured in a homed process of its own."
    )

    @Option(help: "The homed binary to measure (any build).")
    var homed = ".build/release/homed"
    @Option(help: "Connections to open, each with one subscription, then a second.")
    var connections = 500

    func validate() throws {
        guard connections >= 2 else { throw ValidationError("--connections must be at least 2") }
    }

    func run() async throws { try await IdleMemory.run(homed: homed, connections: connections) }
}

struct JournalStallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "journal-stall", abstract: "Single writes to a fresh store: the slowest near each power of two.")

    @Argument(help: "How many writes.")
    var count = 200_000

    func run() async throws { JournalStall.run(count: count) }
}

struct BackupStallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup-stall",
        abstract: "A backup of a large database while a writer writes: the writer's slowest write, and alone.")

    @Option(help: "Accessories of the generated home (10 characteristics each).")
    var accessories = 20_000

    func validate() throws {
        guard accessories >= 1 else { throw ValidationError("--accessories must be at least 1") }
    }

    func run() throws { try BackupStall.run(accessories: accessories) }
}

struct ProfileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile", abstract: "One part of the benchmark alone, to run under perf record.")

    @Argument(help: ArgumentHelp("The part: \(Profile.parts.joined(separator: ", ")).", valueName: "part"))
    var part: String
    @Argument(help: "How many iterations (each part has its own default).")
    var count: Int?

    func validate() throws {
        guard Profile.parts.contains(part) else {
            throw ValidationError("unknown part '\(part)'; one of \(Profile.parts.joined(separator: ", "))")
        }
    }

    func run() async throws { try await Profile.run(part: part, count: count) }
}

/// Through a provider: writes and fresh reads next to cached reads; reported events (ProviderBench.swift).
struct ProviderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "provider",
        abstract: "A write and a fresh read through a provider next to a cached read; events a provider reports.")

    @Option(help: "Sequential round trips of each kind per run.")
    var roundTrips = 10_000
    @Option(help: "Values reported per event-rate measurement.")
    var events = 1_000_000
    @Option(help: "Values per report call.")
    var batch = 1_000
    @Option(help: "Runs; the median is reported.")
    var runs = 3
    @Option(help: "The daemon's event loops (default: one per core, as homed has).")
    var daemonThreads: Int?

    func validate() throws {
        if let daemonThreads, daemonThreads < 1 {
            throw ValidationError("--daemon-threads must be at least 1, not \(daemonThreads)")
        }
    }

    func run() async throws {
        try await ProviderBench.run(
            roundTrips: roundTrips, events: events, batch: batch, runs: runs, daemonThreads: daemonThreads)
    }
}

struct DurabilityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "durability",
        abstract:
            "Event rate and write round trip with the home in memory and in SQLite (values logged before replies).")

    @Option(help: "Events written per event-rate measurement.")
    var events = 1_000_000
    @Option(help: "Sequential single writes per round-trip measurement.")
    var roundTrips = 10_000
    @Option(help: "Runs of everything, memory and database alternately; the median run is reported.")
    var runs = 3

    func validate() throws {
        guard events >= 1000 && events % 1000 == 0 else {
            throw ValidationError("--events must be a positive multiple of 1000")
        }
        guard roundTrips >= 100 else { throw ValidationError("--round-trips must be at least 100") }
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1") }
    }

    func run() async throws { try await Durability.run(events: events, roundTrips: roundTrips, runs: runs) }
}

struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract:
            "What the stored history costs (event rate, write round trip: off and on) and what asking the past takes "
            + "(a simulated year of a 100-accessory home).")

    @Option(help: "Events written per event-rate measurement (0: skip the cost).")
    var events = 200_000
    @Option(help: "Sequential single writes per round-trip measurement.")
    var roundTrips = 2_000
    @Option(help: "Runs of the cost, off and on alternately; the median run is reported.")
    var runs = 3
    @Option(help: "Days of simulated history (0: skip the queries).")
    var days = 365
    @Option(help: "Events a day in the simulated home.")
    var eventsPerDay = 20_000

    func validate() throws {
        guard events == 0 || (events >= 1000 && events % 1000 == 0) else {
            throw ValidationError("--events must be 0 or a positive multiple of 1000")
        }
        guard runs >= 1, roundTrips >= 100, days >= 0, eventsPerDay >= 10 else {
            throw ValidationError("--runs ≥ 1, --round-trips ≥ 100, --days ≥ 0, --events-per-day ≥ 10")
        }
    }

    func run() async throws {
        try await HistoryBench.run(
            events: events, roundTrips: roundTrips, runs: runs, days: days, eventsPerDay: eventsPerDay)
    }
}
