#include "frame_reader.h"

#include <stdlib.h>
#include <string.h>

void frame_reader_init(frame_reader *reader, uint32_t max_frame_size) {
    memset(reader, 0, sizeof *reader);
    reader->max_frame_size = max_frame_size;
}

void frame_reader_free(frame_reader *reader) {
    free(reader->data);
    memset(reader, 0, sizeof *reader);
}

size_t frame_reader_space(frame_reader *reader, size_t wanted, uint8_t **space) {
    if (reader->start == reader->end) {
        reader->start = reader->end = 0;
    } else if (reader->start > 0 && reader->capacity - reader->end < wanted) {
        /* Move the frame in progress to the front before growing. */
        memmove(reader->data, reader->data + reader->start, reader->end - reader->start);
        reader->end -= reader->start;
        reader->start = 0;
    }
    if (reader->capacity - reader->end < wanted) {
        size_t capacity = reader->capacity ? reader->capacity : 4096;
        while (capacity - reader->end < wanted) capacity *= 2;
        uint8_t *grown = realloc(reader->data, capacity);
        if (!grown) return 0;
        reader->data = grown;
        reader->capacity = capacity;
    }
    *space = reader->data + reader->end;
    return reader->capacity - reader->end;
}

void frame_reader_commit(frame_reader *reader, size_t count) {
    reader->end += count;
}

frame_result frame_reader_next(frame_reader *reader, const uint8_t **body, size_t *length, uint32_t *announced) {
    size_t available = reader->end - reader->start;
    if (available < FRAME_HEADER_SIZE) return FRAME_NEED_MORE;
    const uint8_t *header = reader->data + reader->start;
    uint32_t size = (uint32_t)header[0] << 24 | (uint32_t)header[1] << 16 | (uint32_t)header[2] << 8 | header[3];
    /* Checked before anything is allocated for it: a garbage prefix must not
     * make the client ask for gigabytes. */
    if (size > reader->max_frame_size) {
        *announced = size;
        return FRAME_TOO_LARGE;
    }
    if (available - FRAME_HEADER_SIZE < size) return FRAME_NEED_MORE;
    *body = header + FRAME_HEADER_SIZE;
    *length = size;
    reader->start += FRAME_HEADER_SIZE + size;
    return FRAME_READY;
}

size_t frame_reader_pending(const frame_reader *reader) {
    return reader->end - reader->start;
}

void frame_header_write(uint8_t header[FRAME_HEADER_SIZE], uint32_t length) {
    header[0] = (uint8_t)(length >> 24);
    header[1] = (uint8_t)(length >> 16);
    header[2] = (uint8_t)(length >> 8);
    header[3] = (uint8_t)length;
}
