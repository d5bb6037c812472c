/*
 * A plain bit-board n-queens counter, the yardstick for `orchard run queens`
 * (bench/queens.sh builds and runs it beside orchard).
 *
 * The classic method (Richards' bit patterns, as in Jeff Somers' widely used
 * `nq` program): one row at a time, three masks of attacked columns, the free
 * squares of a row are the bits set in none of them, the lowest one taken
 * with `free & -free`; an explicit stack instead of recursion. Only half the
 * first row is searched and the count doubled (a solution and its mirror
 * image have their first queens in opposite halves); on odd boards the
 * middle column of the first row is searched with the same halving on the
 * second row. It counts all solutions, not the distinct ones, and it is not
 * resumable: it is the best a single-purpose program does, nothing more.
 *
 * Work is shared between THREADS threads by first-row (and, for the middle
 * column, second-row) placement, taken from a shared counter.
 *
 *   cc -O3 -march=x86-64 -pthread -o queens-plain bench/queens-plain.c
 *   ./queens-plain N [THREADS]      prints: n solutions nodes
 *
 * A node is a placed queen, as orchard counts them (orchard also counts a
 * unit's root, one node per unit).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int first;   /* column of the first-row queen */
  int second;  /* column of the second-row queen, or -1 */
  uint64_t weight;
} Task;

static int n;
static uint64_t all;
static Task tasks[64];
static int ntasks;
static int next_task;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t total_solutions, total_nodes;

/* Counts the completions of the board whose next row is `row`, with the
 * three masks of attacked columns as seen from that row. */
static void count_below(int row, uint64_t cols, uint64_t left, uint64_t right,
                        uint64_t *solutions, uint64_t *nodes) {
  uint64_t cs[64], ls[64], rs[64], free_[64];
  int d = row;
  uint64_t sols = 0, visited = 0;
  cs[d] = cols;
  ls[d] = left;
  rs[d] = right;
  free_[d] = all & ~(cols | left | right);
  for (;;) {
    uint64_t f = free_[d];
    if (f == 0) {
      if (d == row) break;
      d--;
      continue;
    }
    uint64_t bit = f & (0 - f);
    free_[d] = f ^ bit;
    visited++;
    if (d + 1 == n) {
      sols++;
      continue;
    }
    uint64_t c = cs[d] | bit, l = (ls[d] | bit) << 1, r = (rs[d] | bit) >> 1;
    d++;
    cs[d] = c;
    ls[d] = l;
    rs[d] = r;
    free_[d] = all & ~(c | l | r);
  }
  *solutions = sols;
  *nodes = visited;
}

static void *worker(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&lock);
    int i = next_task < ntasks ? next_task++ : -1;
    pthread_mutex_unlock(&lock);
    if (i < 0) return NULL;
    Task t = tasks[i];
    uint64_t b = 1ull << t.first, cols = b, left = b << 1, right = b >> 1;
    /* the task's deepest queen; main() adds the middle first-row node */
    uint64_t nodes = 1, sols = 0, s;
    int row = 1;
    if (t.second >= 0) {
      uint64_t b2 = 1ull << t.second;
      cols |= b2;
      left = (left | b2) << 1;
      right = (right | b2) >> 1;
      row = 2;
    }
    if (row == n) {
      sols = 1;
    } else {
      uint64_t v;
      count_below(row, cols, left, right, &s, &v);
      sols = s;
      nodes += v;
    }
    pthread_mutex_lock(&lock);
    total_solutions += t.weight * sols;
    total_nodes += nodes;
    pthread_mutex_unlock(&lock);
  }
}

int main(int argc, char **argv) {
  if (argc < 2 || (n = atoi(argv[1])) < 1 || n > 32) {
    fprintf(stderr, "usage: queens-plain N [THREADS] (1 <= N <= 32)\n");
    return 2;
  }
  int threads = argc > 2 ? atoi(argv[2]) : 1;
  if (threads < 1 || threads > 64) {
    fprintf(stderr, "queens-plain: THREADS must be 1..64\n");
    return 2;
  }
  all = (1ull << n) - 1;
  int m = n - 1;
  for (int c = 0; 2 * c <= m; c++) {
    if (2 * c < m) {
      tasks[ntasks++] = (Task){c, -1, 2};
    } else if (n == 1) {
      tasks[ntasks++] = (Task){c, -1, 1};
    } else {
      /* the middle column: halve on the second row instead */
      total_nodes++;
      for (int c2 = 0; 2 * c2 < m; c2++)
        if (c2 < c - 1 || c2 > c + 1) tasks[ntasks++] = (Task){c, c2, 2};
    }
  }
  pthread_t tid[64];
  for (int i = 0; i < threads; i++) pthread_create(&tid[i], NULL, worker, NULL);
  for (int i = 0; i < threads; i++) pthread_join(tid[i], NULL);
  printf("%d %llu %llu\n", n, (unsigned long long)total_solutions,
         (unsigned long long)total_nodes);
  return 0;
}
