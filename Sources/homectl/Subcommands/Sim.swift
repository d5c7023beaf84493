internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// `homectl sim`: drive the simulator's accessories (`homed --demo`, `homed-sim`).
struct Sim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Drive simulated accessories: press a button, take one offline.",
        discussion: """
            Works with the accessories of a simulator (homed --demo, homed-sim FILE): they carry two \
            hidden writable characteristics, SimulatorPress and SimulatorOffline, which these commands \
            write through homed like any other value.
            """,
        subcommands: [Press.self, Unreachable.self])

    struct Press: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Press a simulated accessory's button (a doorbell rings, a switch is pressed).")

        @OptionGroup var options: ConnectionOptions

        @Argument(
            help: "The accessory: an id, Room/Accessory, or its name alone when unique.",
            completion: .homeNames(.accessory))
        var accessory: String

        func run() async throws {
            try await Sim.write(.bool(true), to: "SimulatorPress", of: accessory, options: options, what: "pressed")
        }
    }

    struct Unreachable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a simulated accessory unreachable for a while (0 brings it back).")

        @OptionGroup var options: ConnectionOptions

        @Argument(
            help: "The accessory: an id, Room/Accessory, or its name alone when unique.",
            completion: .homeNames(.accessory))
        var accessory: String

        @Option(name: .customLong("for"), help: "Seconds it stays unreachable.")
        var seconds: UInt32 = 10

        func run() async throws {
            try await Sim.write(
                .uint(UInt64(seconds)), to: "SimulatorOffline", of: accessory, options: options,
                what: seconds == 0 ? "reachable again" : "unreachable for \(seconds) s")
        }
    }

    /// Writes one of the simulator's controls of an accessory.
    static func write(
        _ value: CharacteristicValue, to control: String, of accessory: String, options: ConnectionOptions,
        what: String
    ) async throws {
        let (name, seq) = try await options.withClient { client throws(HomeError) -> (String, UInt64) in
            let graph = try await client.getHome().graph
            let accessoryID = try graph.resolveAccessory(accessory)
            let name = graph.accessories[accessoryID]?.name ?? accessory
            let controlID = graph.accessories[accessoryID]?.serviceIDs.lazy
                .flatMap { graph.services[$0]?.characteristicIDs ?? [] }
                .first { graph.characteristics[$0]?.type.name == control }
            guard let controlID else {
                let provider = graph.accessories[accessoryID]?.provider ?? ""
                throw HomeError(
                    .failedPrecondition,
                    "accessory \(accessoryID) (\(quote(name))) is not simulated (its provider is "
                        + (provider.isEmpty ? "none" : quote(provider)) + "): it has no \(control)")
            }
            let result = try await client.write(value, to: controlID)
            return (name, result.seq)
        }
        if options.json {
            Output.structured(JSON.object([("accessory", .string(name)), ("seq", .uint(seq))]), options)
        } else {
            Output.line("\(name): \(what) (seq \(seq))")
        }
    }
}
