internal import ArgumentParser

/// `--home HOME`: which home a listing or a new object is about.
struct HomeOption: ParsableArguments {
    @Option(help: "The home, by name or id (default: the primary home; listings show every home).")
    var home: String?
}
