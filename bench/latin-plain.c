/* The plain program `orchard run latin` is compared with (BENCHMARKS.md,
 * "The chapter-6 families"): the same counts by the same algorithm, with
 * nothing around it. Reduced Latin squares of order N row by row, each row
 * cell by cell with bitmasks (the symbols of the row, of each column), the
 * last row forced; per square, optionally, its transversals (depth-first,
 * the last three rows checked directly), an exact cover by N of them (the
 * transversal through (0,0) first, then (0,1), ...), and the orders of rows
 * 1..N-1 that make it a diagonal square. Threads take the second rows in
 * turn (row k to thread k mod T).
 *
 *   gcc -O3 -march=x86-64 -pthread -o latin-plain bench/latin-plain.c
 *   ./latin-plain ORDER [MATES 0|1] [DIAGONAL 0|1] [THREADS]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXN 10
#define MAXT 8192 /* transversals of one square; 2241 at most up to order 9 */

typedef unsigned __int128 u128;

static int n, do_mates, do_diag, threads;
static uint16_t full;
static uint8_t second[200000][MAXN];
static int nsecond;

typedef struct {
    int id;
    uint8_t sq[MAXN][MAXN];
    uint8_t pos[MAXN][MAXN];
    uint16_t col[MAXN];
    int rows;
    u128 tr[MAXT];
    int ntr, group[MAXN + 1];
    uint64_t nodes, reduced, mates, transversals, diagonal;
} Worker;

static void extend(Worker *w, int row, uint16_t cols, uint16_t syms, u128 cells) {
    if (row == n - 1) {
        int c = __builtin_ctz(cols);
        if (syms & (1u << w->sq[row][c]))
            w->tr[w->ntr++] = cells | (u128)1 << (row * n + c);
        return;
    }
    if (row == n - 2) {
        int a = __builtin_ctz(cols), b = __builtin_ctz(cols & (cols - 1));
        uint8_t *up = w->sq[row], *down = w->sq[row + 1];
        if (up[a] != down[b] && (syms >> up[a]) & (syms >> down[b]) & 1)
            w->tr[w->ntr++] = cells | (u128)1 << (row * n + a) | (u128)1 << (row * n + n + b);
        if (up[b] != down[a] && (syms >> up[b]) & (syms >> down[a]) & 1)
            w->tr[w->ntr++] = cells | (u128)1 << (row * n + b) | (u128)1 << (row * n + n + a);
        return;
    }
    if (row == n - 3) {
        int a = __builtin_ctz(cols);
        uint16_t rest = cols & (cols - 1);
        int b = __builtin_ctz(rest), c = __builtin_ctz(rest & (rest - 1));
        const int perm[6][3] = {{a, b, c}, {a, c, b}, {b, a, c}, {b, c, a}, {c, a, b}, {c, b, a}};
        uint8_t *r0 = w->sq[row], *r1 = w->sq[row + 1], *r2 = w->sq[row + 2];
        for (int k = 0; k < 6; k++) {
            int x = perm[k][0], y = perm[k][1], z = perm[k][2];
            if (((1u << r0[x]) | (1u << r1[y]) | (1u << r2[z])) == syms)
                w->tr[w->ntr++] = cells | (u128)1 << (row * n + x) | (u128)1 << (row * n + n + y) |
                                  (u128)1 << (row * n + 2 * n + z);
        }
        return;
    }
    uint16_t fit = 0, free = syms;
    while (free) {
        fit |= 1u << w->pos[row][__builtin_ctz(free)];
        free &= free - 1;
    }
    fit &= cols;
    while (fit) {
        int c = __builtin_ctz(fit);
        fit &= fit - 1;
        extend(w, row + 1, cols & ~(1u << c), syms & ~(1u << w->sq[row][c]),
               cells | (u128)1 << (row * n + c));
    }
}

static int cover(Worker *w, int k, u128 covered) {
    if (k == n) return 1;
    for (int t = w->group[k]; t < w->group[k + 1]; t++)
        if (!(w->tr[t] & covered) && cover(w, k + 1, covered | w->tr[t])) return 1;
    return 0;
}

static uint64_t place_row(Worker *w, int p, uint16_t rows, uint16_t main, uint16_t anti) {
    if (p == n) return 1;
    uint64_t count = 0;
    for (uint16_t free = rows; free; free &= free - 1) {
        int r = __builtin_ctz(free);
        uint16_t m = 1u << w->sq[r][p], a = 1u << w->sq[r][n - 1 - p];
        if (!(main & m) && !(anti & a))
            count += place_row(w, p + 1, rows & ~(1u << r), main | m, anti | a);
    }
    return count;
}

static void square(Worker *w) {
    w->reduced++;
    if (do_diag)
        w->diagonal += n == 1 ? 1 : place_row(w, 1, full & ~1u, 1u << w->sq[0][0], 1u << w->sq[0][n - 1]);
    if (!do_mates) return;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < n; c++) w->pos[i][w->sq[i][c]] = c;
    w->ntr = 0;
    for (int c = 0; c < n; c++) {
        w->group[c] = w->ntr;
        if (n == 1)
            w->tr[w->ntr++] = 1;
        else
            extend(w, 1, full & ~(1u << c), full & ~(1u << w->sq[0][c]), (u128)1 << c);
    }
    w->group[n] = w->ntr;
    w->transversals += w->ntr;
    for (int k = 0; k < n; k++)
        if (w->group[k] == w->group[k + 1]) return;
    if (cover(w, 0, 0)) w->mates++;
}

static void visit(Worker *w);

static void fill(Worker *w, int c, uint16_t used) {
    int r = w->rows;
    if (c == n) {
        w->rows++;
        visit(w);
        w->rows--;
        return;
    }
    for (uint16_t free = full & ~used & ~w->col[c]; free; free &= free - 1) {
        uint16_t bit = free & -free;
        w->sq[r][c] = __builtin_ctz(bit);
        w->col[c] |= bit;
        fill(w, c + 1, used | bit);
        w->col[c] ^= bit;
    }
}

static void visit(Worker *w) {
    w->nodes++;
    if (w->rows >= (n > 2 ? n - 1 : 1)) {
        if (n >= 2 && w->rows == n - 1)
            for (int c = 0; c < n; c++) w->sq[n - 1][c] = __builtin_ctz(full & ~w->col[c]);
        square(w);
        return;
    }
    int r = w->rows;
    w->sq[r][0] = r;
    w->col[0] |= 1u << r;
    fill(w, 1, 1u << r);
    w->col[0] &= ~(1u << r);
}

static void *run(void *arg) {
    Worker *w = arg;
    for (int c = 0; c < n; c++) {
        w->sq[0][c] = c;
        w->col[c] = 1u << c;
    }
    if (n <= 2) {
        if (w->id == 0) {
            w->rows = 1;
            visit(w);
        }
        return NULL;
    }
    for (int k = w->id; k < nsecond; k += threads) {
        for (int c = 0; c < n; c++) {
            w->sq[1][c] = second[k][c];
            w->col[c] |= 1u << second[k][c];
        }
        w->rows = 2;
        visit(w);
        for (int c = 0; c < n; c++) w->col[c] &= ~(1u << second[k][c]);
    }
    return NULL;
}

static void second_rows(int c, uint16_t used, uint8_t *row) {
    if (c == n) {
        memcpy(second[nsecond++], row, n);
        return;
    }
    for (int s = 0; s < n; s++)
        if (s != c && !(used & (1u << s))) {
            row[c] = s;
            second_rows(c + 1, used | (1u << s), row);
        }
}

int main(int argc, char **argv) {
    n = argc > 1 ? atoi(argv[1]) : 6;
    do_mates = argc > 2 ? atoi(argv[2]) : 1;
    do_diag = argc > 3 ? atoi(argv[3]) : 1;
    threads = argc > 4 ? atoi(argv[4]) : 2;
    if (n < 1 || n > 9 || threads < 1 || threads > 64) {
        fprintf(stderr, "usage: %s ORDER(1..9) [MATES 0|1] [DIAGONAL 0|1] [THREADS]\n", argv[0]);
        return 2;
    }
    full = (1u << n) - 1;
    uint8_t row[MAXN] = {1};
    if (n > 2) second_rows(1, 1u << 1, row);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    Worker *w = calloc(threads, sizeof(Worker));
    pthread_t *tid = calloc(threads, sizeof(pthread_t));
    for (int t = 0; t < threads; t++) {
        w[t].id = t;
        pthread_create(&tid[t], NULL, run, &w[t]);
    }
    uint64_t nodes = 0, reduced = 0, mates = 0, trans = 0, diag = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
        nodes += w[t].nodes;
        reduced += w[t].reduced;
        mates += w[t].mates;
        trans += w[t].transversals;
        diag += w[t].diagonal;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("order %d: reduced %llu", n, (unsigned long long)reduced);
    if (do_mates)
        printf(", with_orthogonal_mate %llu, transversals %llu", (unsigned long long)mates,
               (unsigned long long)trans);
    if (do_diag) printf(", diagonal_squares %llu", (unsigned long long)diag);
    printf(", nodes %llu, %d threads, %.3f s\n", (unsigned long long)nodes, threads, secs);
    return 0;
}
