internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// `homectl remove ACCESSORY`: take an accessory that is gone out of the home.
struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove an accessory (with its services) from the home; asks first.",
        discussion: """
            For a device that is gone for good. Scenes' actions and groups' services on it go with it; \
            a bridge goes with the accessories behind it. A provider that still has the device registers \
            it again (as a new accessory): remove it there, or forget the whole provider with \
            `homectl providers forget`.

            Examples:
              homectl remove "Garage/Old Sensor"
              homectl remove 42 --yes          # in a script
            """)

    @OptionGroup var options: ConnectionOptions
    @OptionGroup var confirmation: Confirmation

    @Argument(
        help: "The accessory: a path (\"Living Room/Lamp\"), its name alone, or its id.",
        completion: .homeNames(.accessory))
    var accessory: String

    func run() async throws {
        try await options.applyConfirmedChange(confirmation) { graph throws(HomeError) in
            let id = try graph.resolveAccessory(accessory)
            let found = graph.accessories[id]!
            let room = graph.rooms[found.roomID]?.name ?? "no room"
            let provider = found.provider.isEmpty ? "" : ", from provider \"\(found.provider)\""
            let behind = graph.accessories.values.filter { $0.bridgeID == id }.count
            let bridged = behind == 0 ? "" : " and the \(behind.counted("accessory", "accessories")) behind it"
            return "Remove accessory \"\(found.name)\" in \(room) (id \(id)\(provider))\(bridged)?"
        } operation: { graph throws(HomeError) in
            .remove(id: try graph.resolveAccessory(accessory))
        }
    }
}

extension ConnectionOptions {
    /// Applies a layout change once the user confirmed it: `question` is asked from
    /// the home as it is (fetched first, so that no call waits on a person), then
    /// `operation` is resolved again on the home as it is then.
    func applyConfirmedChange(
        _ confirmation: Confirmation, question: (HomeGraph) throws(HomeError) -> String,
        operation: (HomeGraph) throws(HomeError) -> LayoutOperation
    ) async throws {
        if !confirmation.yes {
            let graph = try await fetchGraph()
            let text: String
            do throws(HomeError) {
                text = try question(graph)
            } catch {
                throw Failure(error)
            }
            try confirmation.ask(text)
        }
        try await applyChange(operation)
    }
}
