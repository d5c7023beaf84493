#ifndef CWEBSHIM_H
#define CWEBSHIM_H

/// Connects a Unix stream socket to `path` with the calling thread's effective uid
/// and gid set to `uid` and `gid` for the connect alone (when `uid` is not -1), so
/// that homed, which takes a connection's role from its peer credentials, sees that
/// user. Needs CAP_SETUID and CAP_SETGID (root has them) unless `uid` is the
/// process's own. Only this thread's credentials change, and they are restored
/// before it returns. Returns the connected descriptor, or -errno.
int web_connect_unix_as(const char *path, long uid, long gid);

#endif
