#define _GNU_SOURCE
#include "CWebShim.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

// The raw system calls, not glibc's setresuid: glibc applies a credential change to
// every thread of the process, which would hand the whole server (its listening
// socket, the other users' connections) to the viewer for that moment. The kernel's
// own calls change the calling thread only, and SO_PEERCRED records the credentials
// of the thread that called connect().
static int thread_set_euid(uid_t uid) { return (int)syscall(SYS_setresuid, -1, uid, -1); }
static int thread_set_egid(gid_t gid) { return (int)syscall(SYS_setresgid, -1, gid, -1); }

int web_connect_unix_as(const char *path, long uid, long gid) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof address.sun_path) return -ENAMETOOLONG;
    strcpy(address.sun_path, path);

    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;

    uid_t own_uid = geteuid();
    gid_t own_gid = getegid();
    int switched = uid >= 0 && (uid_t)uid != own_uid;
    if (switched) {
        // The group first: once the uid is no longer root's the thread may not change it.
        if (thread_set_egid((gid_t)gid) != 0) {
            int error = errno;
            close(fd);
            return -error;
        }
        if (thread_set_euid((uid_t)uid) != 0) {
            int error = errno;
            thread_set_egid(own_gid);
            close(fd);
            return -error;
        }
    }
    int result = connect(fd, (struct sockaddr *)&address, sizeof address);
    int error = errno;
    if (switched) {
        // Back to our own: the uid first, which gives the thread back its capabilities.
        if (thread_set_euid(own_uid) != 0 || thread_set_egid(own_gid) != 0) {
            // A thread that cannot become itself again must not go on serving.
            _exit(70);
        }
    }
    if (result != 0) {
        close(fd);
        return -error;
    }
    return fd;
}
