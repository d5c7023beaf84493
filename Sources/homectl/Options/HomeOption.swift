internal import ArgumentParser

/// `--home HOME`: which home a listing or a new object is about.
struct HomeOption: ParsableArguments {
    @Option(
        help:
            "The home, by name or id: where a new object goes (default: the primary home), where a name is looked up and what a listing shows (default: every home)."
    )
    var home: String?
}
