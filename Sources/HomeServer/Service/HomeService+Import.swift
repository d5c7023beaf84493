internal import HomeConfig
internal import HomeModel
internal import HomeWire

extension HomeService {
    /// Applies a layout file, all or nothing, in one layout commit (or plans it, for
    /// a dry run): the file is parsed and its trigger programs checked before the
    /// store's lock, the plan made and installed under it.
    func importLayout(_ request: ImportLayoutRequest, context: CallContext) throws(HomeError) -> ImportLayoutResponse {
        let name = request.fileName.isEmpty ? "the file" : request.fileName
        let file = try LayoutFile.parse(request.document, source: name)
        // The file system is no part of the model: the programs of the triggers it
        // would add are checked on a plan of the home as it is now.
        let preview = try ImportPlan(file: file, graph: store.snapshot().graph)
        for (program, step) in preview.programs.sorted(by: { $0.key < $1.key }) {
            do throws(HomeError) {
                try CommandRunner.checkExecutable(program)
            } catch {
                throw HomeError(error.code, "\(name): cannot \(step): \(error.message)")
            }
        }
        if request.dryRun {
            return ImportLayoutResponse(steps: preview.steps.map(\.text), differences: preview.differences, seq: 0)
        }
        let (plan, seq) = try store.importLayout(
            file, checkedPrograms: Set(preview.programs.keys), origin: context.origin)
        return ImportLayoutResponse(
            steps: plan.steps.map(\.text), differences: plan.differences, seq: plan.steps.isEmpty ? 0 : seq)
    }
}
