internal import HomeModel
internal import HomeServer
internal import HomeStorage

/// The store's persistence, in the database: HomeStorage does not know the server,
/// so this is where the two meet.
struct DatabasePersistence: LayoutPersistence {
    let database: HomeDatabase

    func saveLayout(from old: HomeGraph, to new: HomeGraph) throws(HomeError) {
        try database.saveLayout(from: old, to: new)
    }

    func saveValues(_ characteristics: [Characteristic]) throws(HomeError) {
        try database.saveValues(characteristics)
    }
}
