/* Where homed's socket is by default, and the names of status codes. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "homed/client.h"

const char *homed_default_socket_path(char *buffer, size_t size, const char **source) {
    const char *from;
    int written;
    const char *env = getenv("HOMED_SOCKET");
    const char *runtime = getenv("XDG_RUNTIME_DIR");
    if (env && *env) {
        from = "HOMED_SOCKET";
        written = snprintf(buffer, size, "%s", env);
    } else if (runtime && *runtime) {
        from = "XDG_RUNTIME_DIR";
        written = snprintf(buffer, size, "%s/homed/homed.sock", runtime);
    } else if (geteuid() == 0) {
        from = "the default for root";
        written = snprintf(buffer, size, "/run/homed/homed.sock");
    } else {
        from = "the default for this user";
        written = snprintf(buffer, size, "/tmp/homed-%u/homed.sock", (unsigned)getuid());
    }
    if (source) *source = from;
    if (written < 0 || (size_t)written >= size) return NULL;
    return buffer;
}

const char *homed_status_name(int code) {
    const ProtobufCEnumValue *value = protobuf_c_enum_descriptor_get_value(&home__v1__status_code__descriptor, code);
    return value ? value->name : "UNKNOWN_STATUS";
}
