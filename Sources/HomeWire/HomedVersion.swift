/// The version of this build of homed and its tools: what `--version` prints and the
/// daemon's hello and status report.
package enum HomedVersion {
    package static let current = "0.1.0"
}
