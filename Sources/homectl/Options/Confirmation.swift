internal import ArgumentParser
internal import Foundation
internal import HomeModel

#if canImport(Glibc)
    internal import Glibc
#endif

/// Asks before a removal that cannot be undone, as `apt remove` and `rm -i` do: on a
/// terminal, a question that only "y" or "yes" answers; elsewhere (a script, a pipe)
/// `--yes` must say it, since nobody is there to answer.
struct Confirmation: ParsableArguments {
    @Flag(
        name: [.short, .customLong("yes")], help: "Do not ask: remove at once (needed when stdin is not a terminal).")
    var yes = false

    /// Returns when the user agreed (or gave --yes); throws otherwise, with nothing
    /// removed: CANCELLED (exit 1) when they answered no, a usage error (exit 64)
    /// when there is no terminal to ask on.
    func ask(_ question: String) throws {
        if yes { return }
        guard isatty(0) == 1 else {
            throw ValidationError("\(question): give --yes to confirm (stdin is not a terminal to ask on)")
        }
        FileHandle.standardError.write(Data("\(question) [y/N] ".utf8))
        let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        guard answer == "y" || answer == "yes" else {
            throw Failure(HomeError(.cancelled, "nothing removed"))
        }
    }
}

extension Int {
    /// "1 accessory", "3 accessories": a count with its noun.
    func counted(_ singular: String, _ plural: String) -> String {
        "\(self) \(self == 1 ? singular : plural)"
    }
}
