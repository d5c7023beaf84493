internal import HomeModel

extension HomeStore {
    /// Marks accessories unreachable with an event for each, whatever they were
    /// stored as: at the daemon's start, for the accessories of providers that have
    /// not connected yet. Their stored flag says only what they were when last
    /// saved (an accessory renamed while its provider was away was saved
    /// unreachable), so every one of them is announced alike.
    func markUnreachable(_ accessoryIDs: [ObjectID], origin: Origin) {
        guard !accessoryIDs.isEmpty else { return }
        _ = commitAlways(.markUnreachable(accessoryIDs), origin: origin)
    }
}
