#if canImport(Glibc)
    internal import Glibc
#endif

/// A file written under a temporary name beside its final one and renamed into
/// place once complete, so that the final name never holds half a file: a failure
/// (or homectl killed) leaves at most the temporary file, removed when it can be.
/// Created mode 0600: a copy of the home is nobody else's to read.
final class PartialFile {
    struct Failure: Error, Sendable {
        let reason: String
    }

    let finalPath: String
    let temporaryPath: String
    private var descriptor: Int32

    /// Creates the temporary file in the final path's directory.
    ///
    /// - Throws: `Failure` saying why the directory does not take it.
    init(beside path: String) throws(Failure) {
        finalPath = path
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard !name.isEmpty else { throw Failure(reason: "it names a directory, not a file") }
        var isDirectory = stat()
        if stat(path, &isDirectory) == 0 && (isDirectory.st_mode & S_IFMT) == S_IFDIR {
            throw Failure(reason: "it is a directory")
        }
        var template = Array("\(directory.isEmpty ? "/" : directory)/.\(name).partial-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw Failure(reason: String(cString: strerror(errno))) }
        self.descriptor = descriptor
        temporaryPath = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        fchmod(descriptor, 0o600)
    }

    func write(_ bytes: [UInt8]) throws(Failure) {
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + done, bytes.count - done) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw Failure(reason: String(cString: strerror(errno))) }
            done += count
        }
    }

    /// Makes the file durable and gives it its final name.
    func commit() throws(Failure) {
        guard fsync(descriptor) == 0 else { throw Failure(reason: String(cString: strerror(errno))) }
        close(descriptor)
        descriptor = -1
        guard rename(temporaryPath, finalPath) == 0 else { throw Failure(reason: String(cString: strerror(errno))) }
        // The rename itself survives a power loss once the directory is synced.
        let slash = finalPath.lastIndex(of: "/")
        let directory = slash.map { String(finalPath[..<$0]) } ?? "."
        let directoryDescriptor = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }

    /// Removes the temporary file (nothing of it stays).
    func discard() {
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
        unlink(temporaryPath)
    }
}
