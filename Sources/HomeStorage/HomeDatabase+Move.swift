public import HomeModel

#if canImport(Glibc)
    internal import Glibc
#endif

extension HomeDatabase {
    /// Moves a database to `destination` (which must not exist), write-ahead log
    /// included: the file is opened and checked as `open` does (a file homed
    /// refuses is left where it is), copied whole with `VACUUM INTO` (which works
    /// across file systems, such as from a runtime tmpfs to a state directory),
    /// and only then removed from where it was.
    ///
    /// - Throws: `open`'s refusals; `.alreadyExists` when `destination` exists;
    ///   `.failedPrecondition` naming the file when copying or removing fails.
    public static func move(from source: String, to destination: String) throws(HomeError) {
        var info = stat()
        guard lstat(destination, &info) != 0 else {
            throw HomeError(.alreadyExists, "cannot move \(source) to \(destination): there is a file there already")
        }
        let database = try open(path: source)
        do throws(HomeError) {
            // VACUUM INTO fills an empty file as it is; one it made itself would follow the umask.
            try createPrivateFile(destination)
        } catch {
            database.close()
            throw error
        }
        do throws(HomeError) {
            try database.withConnection { connection throws(HomeError) in
                let copy = try connection.prepare("VACUUM INTO ?")
                copy.bind(1, destination)
                try copy.run(doing: "copying the database to \(destination)")
            }
        } catch {
            database.close()
            unlink(destination)
            throw error
        }
        database.close()
        for suffix in ["", "-wal", "-shm"] {
            guard unlink(source + suffix) == 0 || errno == ENOENT else {
                throw HomeError(
                    .failedPrecondition,
                    "copied \(source) to \(destination) but cannot remove \(source + suffix): "
                        + String(cString: strerror(errno)))
            }
        }
    }
}
