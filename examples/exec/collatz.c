/* Collatz trajectories on orchard through `exec`, by a program that splits:
 * for every n in [1, N), the steps to reach 1; the count of numbers, the
 * sum of their steps, and the n with the most steps.
 *
 *   collatz roots N K      K root units, ranges "a b" covering [1, N)
 *   collatz explore        one range, on its first line of stdin
 *
 * It stops early, and prints what it did not reach as `rest` units, when its
 * budget (ORCHARD_BUDGET numbers) is spent or when its stdin closes (the
 * cluster asking for the rest): the splitting side of the protocol.
 *
 *   cc -O2 -o collatz collatz.c
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t steps(uint64_t n) {
    uint64_t s = 0;
    while (n != 1) {
        n = (n & 1) ? 3 * n + 1 : n / 2;
        s++;
    }
    return s;
}

/* Whether stdin has closed: the cluster asks for the rest. */
static int stop_asked(void) {
    struct pollfd p = {.fd = 0, .events = POLLIN};
    if (poll(&p, 1, 0) <= 0) return 0;
    char buf[256];
    ssize_t r = read(0, buf, sizeof buf);
    return r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN);
}

int main(int argc, char **argv) {
    if (argc >= 4 && strcmp(argv[1], "roots") == 0) {
        uint64_t n = strtoull(argv[2], 0, 10), k = strtoull(argv[3], 0, 10);
        if (n < 2 || k < 1) return 2;
        uint64_t width = (n - 1 + k - 1) / k;
        for (uint64_t a = 1; a < n; a += width)
            printf("unit %" PRIu64 " %" PRIu64 "\n", a, a + width < n ? a + width : n);
        printf("done\n");
        return 0;
    }
    if (argc < 2 || strcmp(argv[1], "explore") != 0) {
        fprintf(stderr, "usage: collatz roots N K | collatz explore\n");
        return 2;
    }
    uint64_t a, b;
    if (scanf("%" SCNu64 " %" SCNu64, &a, &b) != 2 || a < 1 || b < a) {
        fprintf(stderr, "bad unit\n");
        return 2;
    }
    const char *env = getenv("ORCHARD_BUDGET");
    uint64_t budget = env ? strtoull(env, 0, 10) : UINT64_MAX;
    if (budget == 0) budget = 1;
    uint64_t done = 0, sum = 0, best = 0;
    uint64_t n = a;
    for (; n < b; n++) {
        if (done >= budget || ((done & 4095) == 4095 && stop_asked())) break;
        uint64_t s = steps(n);
        sum += s;
        /* Every record and every tie: the merge keeps, of equal values,
         * the witness smallest as text, whatever the units' cuts. */
        if (s >= best) {
            best = s;
            printf("max steps %" PRIu64 " %" PRIu64 "\n", s, n);
        }
        done++;
    }
    printf("count numbers %" PRIu64 "\n", done);
    printf("count steps %" PRIu64 "\n", sum);
    printf("nodes %" PRIu64 "\n", done);
    if (n < b) printf("rest %" PRIu64 " %" PRIu64 "\n", n, b);
    printf("done\n");
    return 0;
}
