/*
 * The framing of the homed wire, incoming side: a 4-byte big-endian length,
 * then that many bytes of one serialized home.v1.Frame. Bytes go in as they
 * arrive, in any split; whole frame bodies come out. No I/O here: the caller
 * reads the socket into the space this gives it.
 */
#ifndef HOMED_FRAME_READER_H
#define HOMED_FRAME_READER_H

#include <stddef.h>
#include <stdint.h>

#define FRAME_HEADER_SIZE 4

typedef struct frame_reader {
    uint8_t *data;
    size_t start;    /* first byte not yet taken */
    size_t end;      /* one past the last byte received */
    size_t capacity;
    uint32_t max_frame_size;
} frame_reader;

typedef enum frame_result {
    FRAME_READY,     /* *body and *length hold the next frame's body */
    FRAME_NEED_MORE, /* no complete frame yet */
    FRAME_TOO_LARGE, /* the next length prefix is above max_frame_size */
} frame_result;

void frame_reader_init(frame_reader *reader, uint32_t max_frame_size);
void frame_reader_free(frame_reader *reader);

/* Room for at least `wanted` more bytes at *space (at most `wanted` of them
 * are asked for; the frame in progress never needs more than its own size).
 * Returns how many bytes fit there, or 0 when memory ran out. */
size_t frame_reader_space(frame_reader *reader, size_t wanted, uint8_t **space);
/* Counts `count` bytes written into the space as received. */
void frame_reader_commit(frame_reader *reader, size_t count);

/* The next complete frame. Its body stays valid until the next call of any
 * frame_reader function. With FRAME_TOO_LARGE, *announced is the length the
 * prefix claimed, and nothing is taken. */
frame_result frame_reader_next(frame_reader *reader, const uint8_t **body, size_t *length, uint32_t *announced);

/* Bytes received towards a frame not yet complete: not 0 at the end of the
 * stream means the stream was cut inside a frame. */
size_t frame_reader_pending(const frame_reader *reader);

/* Writes the 4-byte big-endian length prefix of a body of `length` bytes. */
void frame_header_write(uint8_t header[FRAME_HEADER_SIZE], uint32_t length);

#endif
