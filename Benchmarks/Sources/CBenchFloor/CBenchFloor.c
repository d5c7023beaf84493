// The benchmark floor: minimal C peers on a Unix stream socket. See CBenchFloor.h.
#define _GNU_SOURCE
#include "CBenchFloor.h"
#include "cbf_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum { WARMUP = 1000, READ_BUFFER = 64 * 1024, HEADER = 4 };

static atomic_uint name_counter;

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int64_t now_ns_i(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

// A fresh socket path in dir, bound and listening. Returns the fd or -errno.
static int listen_in(const char *dir, struct sockaddr_un *addr, int backlog) {
    if (dir == NULL) return -EINVAL;
    memset(addr, 0, sizeof *addr);
    addr->sun_family = AF_UNIX;
    int n = snprintf(addr->sun_path, sizeof addr->sun_path, "%s/cbf-%ld-%u.sock", dir, (long)getpid(),
                     atomic_fetch_add(&name_counter, 1));
    if (n < 0 || (size_t)n >= sizeof addr->sun_path) return -ENAMETOOLONG;
    unlink(addr->sun_path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    if (bind(fd, (struct sockaddr *)addr, sizeof *addr) < 0 || listen(fd, backlog) < 0) {
        int e = -errno;
        close(fd);
        unlink(addr->sun_path);
        return e;
    }
    return fd;
}

static int connect_to(const struct sockaddr_un *addr) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    if (connect(fd, (const struct sockaddr *)addr, sizeof *addr) < 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    return fd;
}

static int accept_one(int listen_fd) {
    for (;;) {
        int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0) return fd;
        if (errno != EINTR) return -errno;
    }
}

int cbf_write_full(int fd, const uint8_t *p, size_t n) {
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

// Reads one whole frame into buf (capacity cap, >= HEADER), parsing its length
// prefix; any bytes past the frame stay in buf and are accounted in *have.
// Returns the payload length, -ECONNRESET at EOF (0 bytes held: -EPIPE, a clean
// end), -EPROTO for a length above cap - HEADER, or -errno.
static long read_frame(int fd, uint8_t *buf, size_t cap, size_t *have) {
    for (;;) {
        if (*have >= HEADER) {
            uint32_t len = get_be32(buf);
            if ((size_t)len > cap - HEADER) return -EPROTO;
            if (*have >= HEADER + (size_t)len) return (long)len;
        }
        ssize_t r = read(fd, buf + *have, cap - *have);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (r == 0) return *have == 0 ? -EPIPE : -ECONNRESET;
        *have += (size_t)r;
    }
}

// Drops the first `used` bytes of buf.
static void consume(uint8_t *buf, size_t *have, size_t used) {
    memmove(buf, buf + used, *have - used);
    *have -= used;
}

// ---------------------------------------------------------------------------
// Ping-pong

struct echo_server {
    int listen_fd;
    size_t cap;
    int result;
};

static void *echo_main(void *arg) {
    struct echo_server *s = arg;
    int fd = accept_one(s->listen_fd);
    if (fd < 0) { s->result = fd; return NULL; }
    uint8_t *buf = malloc(s->cap);
    if (buf == NULL) { s->result = -ENOMEM; close(fd); return NULL; }
    size_t have = 0;
    int result = 0;
    for (;;) {
        long len = read_frame(fd, buf, s->cap, &have);
        if (len == -EPIPE) break;  // the client is done
        if (len < 0) { result = (int)len; break; }
        size_t used = HEADER + (size_t)len;
        if ((result = cbf_write_full(fd, buf, used)) != 0) break;
        consume(buf, &have, used);
    }
    free(buf);
    close(fd);
    s->result = result;
    return NULL;
}

int cbf_pingpong(const char *socket_dir, int iterations, int message_size, double *out_latencies_ns) {
    if (iterations < 0 || message_size < 0 || (iterations > 0 && out_latencies_ns == NULL)) return -EINVAL;
    struct sockaddr_un addr;
    int lfd = listen_in(socket_dir, &addr, 1);
    if (lfd < 0) return lfd;
    size_t cap = HEADER + (size_t)message_size;
    struct echo_server server = {.listen_fd = lfd, .cap = cap, .result = 0};
    pthread_t thread;
    int rc = pthread_create(&thread, NULL, echo_main, &server);
    if (rc != 0) { close(lfd); unlink(addr.sun_path); return -rc; }

    int result = 0;
    uint8_t *out = calloc(1, cap), *in = malloc(cap);
    int fd = (out && in) ? connect_to(&addr) : -ENOMEM;
    if (fd < 0) {
        result = fd;
        shutdown(lfd, SHUT_RDWR);  // wakes the server's accept()
    } else {
        put_be32(out, (uint32_t)message_size);
        memset(out + HEADER, 0x5a, (size_t)message_size);
        size_t have = 0;
        for (int i = -WARMUP; i < iterations; i++) {
            double t0 = now_ns();
            if ((result = cbf_write_full(fd, out, cap)) != 0) break;
            long len = read_frame(fd, in, cap, &have);
            if (len < 0) { result = (int)len; break; }
            if (len != message_size) { result = -EPROTO; break; }
            double t1 = now_ns();
            consume(in, &have, cap);
            if (i >= 0) out_latencies_ns[i] = t1 - t0;
        }
        close(fd);
    }
    pthread_join(thread, NULL);
    close(lfd);
    unlink(addr.sun_path);
    free(out);
    free(in);
    if (server.result != 0 && fd >= 0) result = server.result;  // the server's reason comes first
    return result;
}

// ---------------------------------------------------------------------------
// Stream reader

struct stream_writer {
    int listen_fd;
    long frames;
    int frame_size;
    int batch;
    int result;
};

static void *stream_writer_main(void *arg) {
    struct stream_writer *w = arg;
    int fd = accept_one(w->listen_fd);
    if (fd < 0) { w->result = fd; return NULL; }
    size_t one = HEADER + (size_t)w->frame_size;
    uint8_t *buf = calloc((size_t)w->batch, one);
    if (buf == NULL) { w->result = -ENOMEM; close(fd); return NULL; }
    for (int i = 0; i < w->batch; i++) {
        put_be32(buf + (size_t)i * one, (uint32_t)w->frame_size);
        memset(buf + (size_t)i * one + HEADER, 0xa5, (size_t)w->frame_size);
    }
    int result = 0;
    for (long sent = 0; sent < w->frames && result == 0;) {
        long n = w->frames - sent < w->batch ? w->frames - sent : w->batch;
        result = cbf_write_full(fd, buf, (size_t)n * one);
        sent += n;
    }
    free(buf);
    close(fd);
    w->result = result;
    return NULL;
}

int cbf_stream_reader(const char *socket_dir, long frames, int frame_size, int batch,
                      double *out_frames_per_sec) {
    if (frames < 0 || frame_size < 0 || batch < 1 || out_frames_per_sec == NULL) return -EINVAL;
    struct sockaddr_un addr;
    int lfd = listen_in(socket_dir, &addr, 1);
    if (lfd < 0) return lfd;
    struct stream_writer writer = {.listen_fd = lfd, .frames = frames, .frame_size = frame_size,
                                   .batch = batch, .result = 0};
    pthread_t thread;
    int rc = pthread_create(&thread, NULL, stream_writer_main, &writer);
    if (rc != 0) { close(lfd); unlink(addr.sun_path); return -rc; }

    int result = 0;
    uint8_t *buf = malloc(READ_BUFFER);
    int fd = buf ? connect_to(&addr) : -ENOMEM;
    long got = 0;
    double t0 = now_ns(), t1 = t0;
    if (fd < 0) {
        result = fd;
        shutdown(lfd, SHUT_RDWR);
    } else {
        // A streaming parser over a fixed 64 KiB buffer: frames (and their
        // headers) may straddle reads.
        uint8_t header[HEADER];
        int header_have = 0;
        size_t body_left = 0;
        int in_body = 0;
        for (;;) {
            ssize_t r = read(fd, buf, READ_BUFFER);
            if (r < 0) {
                if (errno == EINTR) continue;
                result = -errno;
                break;
            }
            if (r == 0) {
                if (header_have != 0 || in_body) result = -ECONNRESET;
                break;
            }
            size_t pos = 0, n = (size_t)r;
            while (pos < n) {
                if (in_body) {
                    size_t take = n - pos < body_left ? n - pos : body_left;
                    pos += take;
                    body_left -= take;
                    if (body_left == 0) { in_body = 0; got++; }
                    continue;
                }
                header[header_have++] = buf[pos++];
                if (header_have == HEADER) {
                    header_have = 0;
                    uint32_t len = get_be32(header);
                    if (len != (uint32_t)frame_size) { result = -EPROTO; goto done; }
                    if (len == 0) got++;
                    else { body_left = len; in_body = 1; }
                }
            }
        }
    done:
        t1 = now_ns();
        close(fd);
    }
    pthread_join(thread, NULL);
    close(lfd);
    unlink(addr.sun_path);
    free(buf);
    if (result == 0 && writer.result != 0) result = writer.result;
    if (result == 0 && got != frames) result = -EPROTO;
    if (result == 0) *out_frames_per_sec = t1 > t0 ? (double)frames / ((t1 - t0) / 1e9) : 0;
    return result;
}

// ---------------------------------------------------------------------------
// Fan-out

static long fanout_changes(int changes_per_sec, int duration_ms) {
    long n = (long)changes_per_sec * duration_ms / 1000;
    return n < 1 ? 1 : n;
}

long cbf_fanout_capacity(int subscribers, int changes_per_sec, int duration_ms) {
    if (subscribers < 1 || changes_per_sec < 1 || duration_ms < 0) return 0;
    return (long)subscribers * fanout_changes(changes_per_sec, duration_ms);
}

struct subscriber {
    pthread_t thread;
    int fd;       // the reading end
    int server;   // the daemon's end
    size_t frame_size;
    double *latencies;
    long capacity;
    long count;
    int result;
};

static void *subscriber_main(void *arg) {
    struct subscriber *s = arg;
    size_t cap = READ_BUFFER > HEADER + s->frame_size ? READ_BUFFER : HEADER + s->frame_size;
    uint8_t *buf = malloc(cap);
    if (buf == NULL) { s->result = -ENOMEM; return NULL; }
    size_t have = 0;
    for (;;) {
        long len = read_frame(s->fd, buf, cap, &have);
        if (len == -EPIPE) break;
        if (len < 0) { s->result = (int)len; break; }
        double now = now_ns();
        if ((size_t)len != s->frame_size) { s->result = -EPROTO; break; }
        int64_t sent;
        memcpy(&sent, buf + HEADER, sizeof sent);
        if (s->count < s->capacity) s->latencies[s->count++] = now - (double)sent;
        consume(buf, &have, HEADER + (size_t)len);
    }
    if (s->result != 0) shutdown(s->fd, SHUT_RDWR);  // so the publisher fails instead of blocking
    free(buf);
    return NULL;
}

int cbf_fanout(const char *socket_dir, int subscribers, int changes_per_sec, int duration_ms,
               int frame_size, double *out_latencies_ns, long *out_count) {
    if (subscribers < 1 || changes_per_sec < 1 || duration_ms < 0 || frame_size < 16 ||
        out_latencies_ns == NULL || out_count == NULL)
        return -EINVAL;
    *out_count = 0;
    long changes = fanout_changes(changes_per_sec, duration_ms);
    struct sockaddr_un addr;
    int lfd = listen_in(socket_dir, &addr, subscribers < 128 ? subscribers : 128);
    if (lfd < 0) return lfd;
    struct subscriber *subs = calloc((size_t)subscribers, sizeof *subs);
    size_t one = HEADER + (size_t)frame_size;
    uint8_t *frame = calloc(1, one);
    if (subs == NULL || frame == NULL) {
        free(subs); free(frame); close(lfd); unlink(addr.sun_path);
        return -ENOMEM;
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 128 * 1024);

    int result = 0, started = 0;
    for (int i = 0; i < subscribers; i++) subs[i].fd = subs[i].server = -1;
    for (int i = 0; i < subscribers && result == 0; i++) {
        struct subscriber *s = &subs[i];
        s->frame_size = (size_t)frame_size;
        s->latencies = out_latencies_ns + (long)i * changes;
        s->capacity = changes;
        if ((s->fd = connect_to(&addr)) < 0) { result = s->fd; break; }
        if ((s->server = accept_one(lfd)) < 0) { result = s->server; break; }
        int rc = pthread_create(&s->thread, &attr, subscriber_main, s);
        if (rc != 0) { result = -rc; break; }
        started++;
    }
    pthread_attr_destroy(&attr);
    close(lfd);
    unlink(addr.sun_path);

    // The publisher: one change per tick on an absolute schedule; a late tick is
    // sent at once (no catching up by bursting beyond what was missed).
    put_be32(frame, (uint32_t)frame_size);
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    long interval = 1000000000L / changes_per_sec;
    for (long seq = 0; seq < changes && result == 0; seq++) {
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        int64_t stamp = now_ns_i();
        int64_t s64 = (int64_t)seq;
        memcpy(frame + HEADER, &stamp, sizeof stamp);
        memcpy(frame + HEADER + 8, &s64, sizeof s64);
        for (int i = 0; i < subscribers && result == 0; i++) result = cbf_write_full(subs[i].server, frame, one);
        next.tv_nsec += interval;
        while (next.tv_nsec >= 1000000000L) { next.tv_nsec -= 1000000000L; next.tv_sec++; }
    }
    // Closing the daemon's ends lets every reader drain and see EOF.
    for (int i = 0; i < subscribers; i++)
        if (subs[i].server >= 0) close(subs[i].server);
    long total = 0;
    int subscriber_result = 0;
    for (int i = 0; i < started; i++) {
        pthread_join(subs[i].thread, NULL);
        if (subscriber_result == 0) subscriber_result = subs[i].result;
    }
    if (subscriber_result != 0) result = subscriber_result;  // the reader's reason, not the writer's EPIPE
    // Compact: subscriber i's latencies start at i * changes; close the holes left
    // by any subscriber that recorded fewer.
    for (int i = 0; i < started; i++) {
        if (out_latencies_ns + total != subs[i].latencies)
            memmove(out_latencies_ns + total, subs[i].latencies, (size_t)subs[i].count * sizeof(double));
        total += subs[i].count;
    }
    for (int i = 0; i < subscribers; i++)
        if (subs[i].fd >= 0) close(subs[i].fd);
    *out_count = total;
    free(subs);
    free(frame);
    return result;
}
