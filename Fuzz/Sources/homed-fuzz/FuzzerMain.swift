internal import CFuzzerDriver

#if canImport(Glibc)
    internal import Glibc
#endif

/// The executable's entry point: libFuzzer's driver, with `fuzz` as the target.
///
/// SwiftPM links an executable with its `main` pointing at the module's entry
/// point, so libFuzzer's own `main` would never run and, with no entry point
/// in the module, the link would fail; this one does what libFuzzer's would.
@main
enum FuzzerMain {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(
            LLVMFuzzerRunDriver(&argc, &argv) { data, size in
                guard let data else { return 0 }
                return fuzz(data, size)
            })
    }
}
