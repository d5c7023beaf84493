/* A few checks for the C client's tests: each failed check prints where and
 * what, and the test program exits 1 when any failed. */
#ifndef HOMED_TEST_SUPPORT_H
#define HOMED_TEST_SUPPORT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;

#define CHECK(condition)                                                                 \
    do {                                                                                 \
        if (!(condition)) {                                                              \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
            test_failures++;                                                             \
        }                                                                                \
    } while (0)

/* A status code, with the status's message when it is not the one expected. */
#define CHECK_CODE(actual, expected, status)                                                               \
    do {                                                                                                   \
        int actual_code = (actual);                                                                        \
        if (actual_code != (expected)) {                                                                   \
            fprintf(stderr, "%s:%d: expected %s, got %s: %s\n", __FILE__, __LINE__,                        \
                    homed_status_name(expected), homed_status_name(actual_code), (status).message);        \
            test_failures++;                                                                               \
        }                                                                                                  \
    } while (0)

#define CHECK_CONTAINS(text, part)                                                                         \
    do {                                                                                                   \
        const char *checked_text = (text);                                                                 \
        if (!checked_text || !strstr(checked_text, (part))) {                                              \
            fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__,                 \
                    checked_text ? checked_text : "(null)", (part));                                       \
            test_failures++;                                                                               \
        }                                                                                                  \
    } while (0)

#define RUN(test)                                                                  \
    do {                                                                           \
        int failures_before = test_failures;                                       \
        test();                                                                    \
        printf("%s %s\n", test_failures == failures_before ? "ok  " : "FAIL", #test); \
        fflush(stdout);                                                            \
    } while (0)

#define FINISH()                                                                            \
    do {                                                                                    \
        if (test_failures) fprintf(stderr, "%s: %d check(s) failed\n", __FILE__, test_failures); \
        return test_failures ? 1 : 0;                                                       \
    } while (0)

#endif
