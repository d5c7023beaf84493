public import HomeModel

/// Where the daemon keeps its layout and last known values (SQLite in `homed`;
/// nothing in tests and `--demo` without a database).
public protocol LayoutPersistence: Sendable {
    /// Makes the layout of `new` durable — everything but values — given that
    /// `old` is what is stored now. Called under the store's lock before the change
    /// is applied or acknowledged; if it throws, nothing changes.
    func saveLayout(from old: HomeGraph, to new: HomeGraph) throws(HomeError)

    /// Records the current values of these characteristics. Values are written
    /// behind (batched), not before each write is acknowledged.
    func saveValues(_ characteristics: [Characteristic]) throws(HomeError)
}
