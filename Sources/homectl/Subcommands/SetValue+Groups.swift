internal import HomeClient
internal import HomeModel
internal import HomeWire

/// `homectl set GROUP/Type VALUE`: a service group acts as one, as HomeKit's do
/// (all the lamps of "Downstairs Lights" on at once): the value is written to that
/// characteristic of every service in the group.
extension SetValue {
    /// The characteristics `path` names when it is GROUP/Type (a service group's
    /// name, optionally Home/Group, then a characteristic type), in the group's
    /// order; nil when it names no group.
    static func groupCharacteristics(_ path: String, in graph: HomeGraph) throws(HomeError) -> [ObjectID]? {
        guard let slash = path.lastIndex(of: "/") else { return nil }
        let groupName = String(path[..<slash])
        let typeName = String(path[path.index(after: slash)...]).lowercased()
        guard let groupID = try? graph.resolveNamed(groupName, .serviceGroup), let group = graph.serviceGroups[groupID]
        else { return nil }
        let ids = group.serviceIDs.compactMap { serviceID in
            graph.services[serviceID]?.characteristicIDs.first {
                graph.characteristics[$0]?.type.name.lowercased() == typeName
            }
        }
        if ids.isEmpty {
            throw HomeError(
                .notFound,
                "no service of group \(quote(group.name)) has a characteristic \(path[path.index(after: slash)...])")
        }
        return ids
    }

    /// The writes of the value to each of a group's characteristics (not atomic:
    /// each service is its own device).
    func groupWrites(_ ids: [ObjectID], in graph: HomeGraph) throws(HomeError) -> [CharacteristicWrite] {
        // --if holds for each member on its own: the ones holding CURRENT are written.
        try ids.map { id throws(HomeError) in
            let characteristic = graph.characteristics[id]!
            return CharacteristicWrite(
                characteristicID: id, value: try ValueParser.parse(value, for: characteristic),
                condition: try expected.map { text throws(HomeError) in
                    WriteCondition(value: try ValueParser.parse(text, for: characteristic))
                })
        }
    }

    /// A line per item; throws the first failure after all were shown.
    func show(_ response: WriteCharacteristicsResponse, in graph: HomeGraph) throws {
        var failure: HomeError?
        for result in response.results {
            let fullPath = graph.path(of: result.characteristicID) ?? String(result.characteristicID)
            if let error = result.error {
                failure = failure ?? error
                Output.error("homectl: \(fullPath): \(error.message)")
                continue
            }
            Output.line(
                result.seq == 0 ? "\(fullPath) = \(value) (unchanged)" : "\(fullPath) = \(value) (seq \(result.seq))")
        }
        if let failure { throw Failure(failure, shown: true) }
    }
}
