internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// `homectl assign ACCESSORY ROOM`: move an accessory to a room of its home.
struct Assign: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Move an accessory to a room of its home.",
        discussion: """
            ACCESSORY is an id, Room/Accessory, or its name alone when no other accessory shares it; \
            ROOM is an id or a room name in the accessory's home.
            """)

    @OptionGroup var options: ConnectionOptions

    @Argument(help: "The accessory.", completion: .homeNames(.accessory))
    var accessory: String

    @Argument(help: "The room to move it to.", completion: .homeNames(.room))
    var room: String

    func run() async throws {
        try await options.applyChange { graph throws(HomeError) in
            let accessoryID = try graph.resolveAccessory(accessory)
            let roomID = try graph.resolveRoom(room, in: graph.accessories[accessoryID]?.homeID)
            return .assignAccessory(accessoryID: accessoryID, roomID: roomID)
        }
    }
}
