// Minimal C clients of a running homed. See CBenchPeers.h.
#define _GNU_SOURCE
#include "CBenchPeers.h"
#include "cbf_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "home_v1.pb-c.h"

enum { WARMUP = 1000, HEADER = 4, READ_CAP = 4 * 1024 * 1024 + HEADER };

int64_t cbf_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int connect_path(const char *path) {
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof addr.sun_path) return -ENAMETOOLONG;
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    return fd;
}

// A growable read buffer holding whole frames and the start of the next.
struct reader {
    int fd;
    uint8_t *buf;
    size_t have;  // bytes held
    size_t used;  // bytes of frames already returned
};

// The next frame's payload (length in *len), valid until the next call.
// Returns 0, -EPIPE at a clean end, -ECONNRESET mid-frame, -EPROTO, or -errno.
static int next_frame(struct reader *r, const uint8_t **payload, size_t *len) {
    if (r->used > 0) {
        memmove(r->buf, r->buf + r->used, r->have - r->used);
        r->have -= r->used;
        r->used = 0;
    }
    for (;;) {
        if (r->have >= HEADER) {
            uint32_t n = (uint32_t)r->buf[0] << 24 | (uint32_t)r->buf[1] << 16 | (uint32_t)r->buf[2] << 8 | r->buf[3];
            if (n > READ_CAP - HEADER) return -EPROTO;
            if (r->have >= HEADER + (size_t)n) {
                *payload = r->buf + HEADER;
                *len = n;
                r->used = HEADER + (size_t)n;
                return 0;
            }
        }
        ssize_t got = read(r->fd, r->buf + r->have, READ_CAP - r->have);
        if (got < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (got == 0) return r->have == 0 ? -EPIPE : -ECONNRESET;
        r->have += (size_t)got;
    }
}

// ---------------------------------------------------------------------------
// Round trips

// Connects `r` and exchanges the setup (a hello): writes `setup`, reads
// `setup_replies` frames. On failure `r` still needs close_client.
static int open_client(struct reader *r, const char *socket_path, const uint8_t *setup, size_t setup_len,
                       int setup_replies) {
    *r = (struct reader){.fd = connect_path(socket_path), .buf = malloc(READ_CAP)};
    int result = r->fd < 0 ? r->fd : (r->buf == NULL ? -ENOMEM : 0);
    const uint8_t *payload;
    size_t len;
    if (result == 0 && setup_len > 0) result = cbf_write_full(r->fd, setup, setup_len);
    for (int i = 0; i < setup_replies && result == 0; i++) result = next_frame(r, &payload, &len);
    return result;
}

static void close_client(struct reader *r) {
    if (r->fd >= 0) close(r->fd);
    free(r->buf);
}

int cbf_client_round_trips(const char *socket_path, const uint8_t *setup, size_t setup_len, int setup_replies,
                           const uint8_t *request, size_t request_len, int replies_per_request, int iterations,
                           double *out_latencies_ns) {
    if (socket_path == NULL || request == NULL || iterations < 0 || replies_per_request < 1 ||
        (iterations > 0 && out_latencies_ns == NULL))
        return -EINVAL;
    struct reader r;
    int result = open_client(&r, socket_path, setup, setup_len, setup_replies);
    const uint8_t *payload;
    size_t len;
    for (int i = -WARMUP; i < iterations && result == 0; i++) {
        int64_t t0 = cbf_now_ns();
        result = cbf_write_full(r.fd, request, request_len);
        for (int k = 0; k < replies_per_request && result == 0; k++) result = next_frame(&r, &payload, &len);
        if (result == 0 && i >= 0) out_latencies_ns[i] = (double)(cbf_now_ns() - t0);
    }
    close_client(&r);
    return result;
}

// A load generator: unary calls kept `in_flight` deep, their replies read as
// frames and not decoded, so that what is measured downstream (a subscriber's
// event rate) is not the writer's own encoding and decoding.
int cbf_pipelined_calls(const char *socket_path, const uint8_t *setup, size_t setup_len, int setup_replies,
                        const uint8_t *const *requests, const size_t *request_lens, int request_kinds, long calls,
                        int replies_per_call, int in_flight) {
    if (socket_path == NULL || requests == NULL || request_lens == NULL || request_kinds < 1 || calls < 0 ||
        replies_per_call < 1 || in_flight < 1)
        return -EINVAL;
    struct reader r;
    int result = open_client(&r, socket_path, setup, setup_len, setup_replies);
    const uint8_t *payload;
    size_t len;
    long sent = 0, done = 0;
    while (done < calls && result == 0) {
        while (sent < calls && sent - done < in_flight && result == 0) {
            int kind = (int)(sent % request_kinds);
            result = cbf_write_full(r.fd, requests[kind], request_lens[kind]);
            sent++;
        }
        for (int i = 0; i < replies_per_call && result == 0; i++) result = next_frame(&r, &payload, &len);
        done++;
    }
    close_client(&r);
    return result;
}

// ---------------------------------------------------------------------------
// Subscribers

// A bump allocator for protobuf-c's unpack, reset after each frame: what an
// efficient C client does instead of a malloc per field. Requests it cannot hold
// fall back to malloc.
struct bump {
    uint8_t *base;
    size_t cap;
    size_t used;
};

static void *bump_alloc(void *data, size_t size) {
    struct bump *b = data;
    size = (size + 15) & ~(size_t)15;
    if (b->used + size <= b->cap) {
        void *p = b->base + b->used;
        b->used += size;
        return p;
    }
    return malloc(size);
}

static void bump_free(void *data, void *pointer) {
    struct bump *b = data;
    uint8_t *p = pointer;
    if (p != NULL && (p < b->base || p >= b->base + b->cap)) free(p);
}

struct subscriber {
    pthread_t thread;
    int fd;
    long expected;
    uint64_t *seqs;
    int64_t *times;
    long count;
    long merged;
    long markers;
    atomic_int ready;
    atomic_int done;
    int result;
};

struct cbf_subscribers {
    int count;
    int started;
    struct subscriber *subs;
};

// Reads stream messages of call 1 until `expected` events are accounted for.
static void *subscriber_main(void *arg) {
    struct subscriber *s = arg;
    pthread_setname_np(pthread_self(), "cbf-subscriber");  // tells them apart in profiles
    struct reader r = {.fd = s->fd, .buf = malloc(READ_CAP)};
    struct bump arena = {.base = malloc(1 << 20), .cap = 1 << 20};
    ProtobufCAllocator allocator = {.alloc = bump_alloc, .free = bump_free, .allocator_data = &arena};
    if (r.buf == NULL || arena.base == NULL) {
        free(r.buf);
        free(arena.base);
        s->result = -ENOMEM;
        atomic_store(&s->done, 1);
        return NULL;
    }
    int result = 0;
    while (s->count + s->merged < s->expected) {
        const uint8_t *payload;
        size_t len;
        if ((result = next_frame(&r, &payload, &len)) != 0) break;
        int64_t now = cbf_now_ns();
        arena.used = 0;
        Home__V1__Frame *frame = home__v1__frame__unpack(&allocator, len, payload);
        if (frame == NULL) { result = -EPROTO; break; }
        if (frame->kind_case == HOME__V1__FRAME__KIND_STATUS) {
            // The stream (or the connection, on call 0) ended before we were done.
            result = -ECONNRESET;
        } else if (frame->kind_case == HOME__V1__FRAME__KIND_MESSAGE && frame->call_id == 1) {
            ProtobufCBinaryData *bytes = &frame->message->payload;
            Home__V1__SubscribeResponse *message = home__v1__subscribe_response__unpack(&allocator, bytes->len, bytes->data);
            if (message == NULL) {
                result = -EPROTO;
            } else {
                if (message->marker != NULL) {
                    Home__V1__MarkerKind kind = message->marker->kind;
                    if (kind == HOME__V1__MARKER_KIND__MARKER_SUBSCRIBED) atomic_store(&s->ready, 1);
                    if (kind == HOME__V1__MARKER_KIND__MARKER_GAP || kind == HOME__V1__MARKER_KIND__MARKER_RESYNC)
                        s->markers++;
                }
                for (size_t i = 0; i < message->n_events; i++) {
                    Home__V1__Event *event = message->events[i];
                    if (event->body_case != HOME__V1__EVENT__BODY_VALUE) continue;
                    if (s->count < s->expected) {
                        s->seqs[s->count] = event->seq;
                        s->times[s->count] = now;
                        s->count++;
                    }
                    s->merged += event->value->merged;
                }
                home__v1__subscribe_response__free_unpacked(message, &allocator);
            }
        }
        home__v1__frame__free_unpacked(frame, &allocator);
        if (result != 0) break;
    }
    free(r.buf);
    free(arena.base);
    s->result = result == -EPIPE ? -ECONNRESET : result;
    atomic_store(&s->done, 1);
    return NULL;
}

cbf_subscribers *cbf_subscribers_start(const char *socket_path, int count, const uint8_t *setup, size_t setup_len,
                                       long expected, int *error) {
    int dummy;
    if (error == NULL) error = &dummy;
    *error = 0;
    if (socket_path == NULL || count < 1 || setup == NULL || expected < 1) { *error = -EINVAL; return NULL; }
    cbf_subscribers *all = calloc(1, sizeof *all);
    if (all == NULL || (all->subs = calloc((size_t)count, sizeof *all->subs)) == NULL) {
        free(all);
        *error = -ENOMEM;
        return NULL;
    }
    all->count = count;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 128 * 1024);
    for (int i = 0; i < count; i++) all->subs[i].fd = -1;
    for (int i = 0; i < count && *error == 0; i++) {
        struct subscriber *s = &all->subs[i];
        s->expected = expected;
        s->seqs = malloc((size_t)expected * sizeof *s->seqs);
        s->times = malloc((size_t)expected * sizeof *s->times);
        if (s->seqs == NULL || s->times == NULL) { *error = -ENOMEM; break; }
        if ((s->fd = connect_path(socket_path)) < 0) { *error = s->fd; break; }
        if ((*error = cbf_write_full(s->fd, setup, setup_len)) != 0) break;
        int rc = pthread_create(&s->thread, &attr, subscriber_main, s);
        if (rc != 0) { *error = -rc; break; }
        all->started++;
    }
    pthread_attr_destroy(&attr);
    if (*error != 0) {
        cbf_subscribers_join(all, 0);
        cbf_subscribers_free(all);
        return NULL;
    }
    return all;
}

int cbf_subscribers_ready(const cbf_subscribers *all) {
    int ready = 0;
    for (int i = 0; i < all->started; i++) ready += atomic_load(&all->subs[i].ready);
    return ready;
}

int cbf_subscribers_join(cbf_subscribers *all, int timeout_ms) {
    int64_t deadline = cbf_now_ns() + (int64_t)timeout_ms * 1000000;
    int result = 0;
    for (int i = 0; i < all->started; i++) {
        struct subscriber *s = &all->subs[i];
        while (!atomic_load(&s->done) && cbf_now_ns() < deadline) {
            struct timespec pause = {0, 1000000};
            nanosleep(&pause, NULL);
        }
        if (!atomic_load(&s->done)) {
            shutdown(s->fd, SHUT_RDWR);
            if (result == 0) result = -ETIMEDOUT;
        }
    }
    for (int i = 0; i < all->started; i++) {
        pthread_join(all->subs[i].thread, NULL);
        if (result == 0) result = all->subs[i].result;
    }
    all->started = 0;
    return result;
}

long cbf_subscribers_records(const cbf_subscribers *all, int index, const uint64_t **seqs, const int64_t **times_ns) {
    if (index < 0 || index >= all->count) return 0;
    *seqs = all->subs[index].seqs;
    *times_ns = all->subs[index].times;
    return all->subs[index].count;
}

long cbf_subscribers_merged(const cbf_subscribers *all) {
    long merged = 0;
    for (int i = 0; i < all->count; i++) merged += all->subs[i].merged;
    return merged;
}

long cbf_subscribers_markers(const cbf_subscribers *all) {
    long markers = 0;
    for (int i = 0; i < all->count; i++) markers += all->subs[i].markers;
    return markers;
}

void cbf_subscribers_free(cbf_subscribers *all) {
    if (all == NULL) return;
    for (int i = 0; i < all->count; i++) {
        if (all->subs[i].fd >= 0) close(all->subs[i].fd);
        free(all->subs[i].seqs);
        free(all->subs[i].times);
    }
    free(all->subs);
    free(all);
}
