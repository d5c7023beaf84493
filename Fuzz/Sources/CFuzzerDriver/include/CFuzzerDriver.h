#ifndef HOMED_CFUZZERDRIVER_H
#define HOMED_CFUZZERDRIVER_H

#include <stddef.h>
#include <stdint.h>

// libFuzzer's driver (in the runtime that -sanitize=fuzzer links): parses the
// command line and runs `callback` on every input. homed-fuzz's own main calls it,
// because SwiftPM points an executable's `main` at the module's renamed entry point,
// so libFuzzer's `main` is never linked.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
