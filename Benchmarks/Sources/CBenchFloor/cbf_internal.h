// Helpers shared by CBenchFloor.c and CBenchPeers.c (not part of the module's API).
#ifndef CBF_INTERNAL_H
#define CBF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

// send() with MSG_NOSIGNAL until all n bytes are written: a vanished peer is an
// error (-errno), not a SIGPIPE. Returns 0 or -errno.
int cbf_write_full(int fd, const uint8_t *p, size_t n);

#endif
