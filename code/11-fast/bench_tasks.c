/* bench_tasks.c -- what a task costs: this chapter's tasks against
 * CPython's asyncio and uvloop, measured in one run.
 *
 * Three workloads, written the same way here and in Python
 * (tests/bench/tasks_peer.py: read the two side by side):
 *
 *   create   create and complete N tasks, each `await sleep(0)` then
 *            return.  The main task creates them BATCH at a time and awaits
 *            each in turn; a task already done is not waited for, as
 *            Python's Future.__await__ does not suspend on a done future
 *            (`if not self.done(): yield self`).  ns per task.
 *   chain    a chain of N awaits.  In asyncio terms: N futures, each
 *            awaited by a task and completed by the task that the previous
 *            future woke.  Two tasks hand a baton to each other: each
 *            creates a future, completes the one the other task awaits,
 *            then awaits its own.  So every await suspends, and resumes
 *            only after the one before it did: a set_result, a done
 *            callback scheduled, one task step.  ns per await.
 *   memory   N tasks pending, each suspended at `await gate` (one future
 *            they all wait for): bytes per task, as the allocator counts
 *            them (here mallinfo2's bytes in use, headers included; Python:
 *            tracemalloc, the bytes asked for) on a warm heap, and as the
 *            process's resident memory grows (the first, cold pass).
 *
 * Every measurement runs in a new process: this program runs itself with
 * --one, and the peer script once per loop, and reads one line back.  Each
 * of ROUNDS rounds runs every workload once per contender, the contenders
 * in a new random order every time, so that a slow minute of the machine
 * does not fall on one of them only.  Time is the process's CPU time (user
 * + system) over the workload alone, not the start-up: both sides read
 * CLOCK_PROCESS_CPUTIME_ID (Python: time.process_time_ns).  Each row is the
 * median of the rounds, then their min and max, then its ratio to C's
 * median.  Every run's count (tasks completed, awaits resumed, tasks
 * pending) is checked.
 *
 * usage: bench_tasks           the comparison (`make bench` writes it to
 *                              book/data/tasks.dat)
 *        bench_tasks --smoke   a tiny N, one round, the counts checked and
 *                              no time printed: `make check` runs it
 *        bench_tasks --one WORKLOAD N   one run of this loop, in this process
 * The peer: $TASKS_PEER (default ../../tests/bench/tasks_peer.py, right
 * from build/09-tasks), run by $PYTHON (default /usr/bin/python3).  Without
 * uvloop its rows say so and the rest runs.
 */
#define _GNU_SOURCE /* mallinfo2, popen */
#include "task.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

enum { ROUNDS = 7, BATCH = 1000 };

/* The sizes: the comparison's, and the smoke run's (several batches, the
 * last one partial). */
static const long SIZES[] = {1000000, 1000000, 100000};
static const long SMOKE_SIZES[] = {2500, 1001, 100};

static void die(const char *what)
{
    fprintf(stderr, "bench_tasks: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* The CPU time of the whole process, in ns: what the work costs, without
 * the time other processes take the CPU away. */
static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The bytes the allocator has handed out and not had back (glibc); -1
 * elsewhere. */
static double heap_bytes(void)
{
#ifdef __GLIBC__
    return (double)mallinfo2().uordblks;
#else
    return -1;
#endif
}

/* The resident set, from /proc (Linux); -1 elsewhere. */
static double rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size, resident;
    int ok = f != NULL && fscanf(f, "%ld %ld", &size, &resident) == 2;
    if (f != NULL)
        fclose(f);
    return ok ? (double)resident * (double)sysconf(_SC_PAGESIZE) : -1;
}

static void free_coro(coro_t *c)
{
    free(c);
}

/* loop_create_task, or the end of the run: a benchmark has no plan B. */
static task_t *spawn(loop_t *loop, coro_t *coro)
{
    if (coro == NULL)
        die("malloc");
    task_t *t = loop_create_task(loop, coro);
    if (t == NULL)
        die("loop_create_task");
    return t;
}

/* `await t` as Python spells it: suspend only if t is not done yet.  (A
 * CORO_AWAIT on a done future would still cost a turn of the loop.) */
#define AWAIT_TASK(c, t)                                                    \
    do {                                                                    \
        if (!future_done(task_future(t)))                                   \
            CORO_AWAIT(c, task_future(t));                                  \
    } while (0)

/* What a run measured: COUNT is checked by the caller. */
static long result_count;
static double result_value[2];

/* ---- create: N tasks, each awaits sleep(0) then returns -------------- */

/* @region child */
/* async def child(): await asyncio.sleep(0) */
typedef struct child {
    coro_t coro;
    sleep_t sleep;
} child_t;

static coro_status child_step(coro_t *c)
{
    child_t *ch = (child_t *)c;
    CORO_BEGIN(c);
    CORO_CALL(c, sleep_init(&ch->sleep, 0));
    CORO_END(c);
}

static coro_t *child_new(void)
{
    child_t *ch = malloc(sizeof *ch);
    return ch == NULL ? NULL : coro_init(&ch->coro, child_step, "child", free_coro);
}
/* @end child */

typedef struct create {
    coro_t coro;
    loop_t *loop;
    long n, start, k, i, completed;
    double t0;
    task_t *batch[BATCH];
} create_t;

static coro_status create_step(coro_t *c)
{
    create_t *m = (create_t *)c;
    CORO_BEGIN(c);
    m->t0 = cpu_ns();
    for (m->start = 0; m->start < m->n; m->start += m->k) {
        m->k = m->n - m->start < BATCH ? m->n - m->start : BATCH;
        for (m->i = 0; m->i < m->k; m->i++)
            m->batch[m->i] = spawn(m->loop, child_new());
        for (m->i = 0; m->i < m->k; m->i++) {
            AWAIT_TASK(c, m->batch[m->i]);
            m->completed++;
            task_release(m->batch[m->i]);
        }
    }
    result_value[0] = (cpu_ns() - m->t0) / (double)m->n;
    result_count = m->completed;
    CORO_END(c);
}

/* ---- chain: N awaits, each future completed by the task the previous woke */

/* @region chain */
typedef struct baton {
    loop_t *loop;
    future_t *fut;  /* the future the waiting task awaits (a reference) */
    long remaining; /* awaits still to make */
    long awaits;    /* awaits resumed */
} baton_t;

typedef struct runner {
    coro_t coro;
    baton_t *baton;
    future_t *mine; /* the future this task awaits */
} runner_t;

static coro_status runner_step(coro_t *c)
{
    runner_t *r = (runner_t *)c;
    baton_t *b = r->baton;
    future_t *prev;
    CORO_BEGIN(c);
    for (;;) {
        prev = b->fut;
        if (b->remaining == 0) {
            /* The last link: wake the other task, which then finds none left. */
            if (!future_done(prev))
                future_set_result(prev, NULL);
            CORO_RETURN(c, NULL);
        }
        b->remaining--;
        b->fut = r->mine = loop_create_future(b->loop);
        if (r->mine == NULL)
            die("loop_create_future");
        future_set_result(prev, NULL); /* the other task's wakeup is scheduled */
        future_release(prev);          /* (it holds its own reference) */
        CORO_AWAIT(c, r->mine);
        b->awaits++;
    }
    CORO_END(c);
}
/* @end chain */

static coro_t *runner_new(baton_t *b)
{
    runner_t *r = malloc(sizeof *r);
    if (r == NULL)
        return NULL;
    r->baton = b;
    r->mine = NULL;
    return coro_init(&r->coro, runner_step, "runner", free_coro);
}

typedef struct chain {
    coro_t coro;
    long n;
    double t0;
    baton_t baton;
    task_t *a, *b;
} chain_t;

static coro_status chain_step(coro_t *c)
{
    chain_t *m = (chain_t *)c;
    CORO_BEGIN(c);
    m->t0 = cpu_ns();
    m->baton.fut = loop_create_future(m->baton.loop);
    if (m->baton.fut == NULL)
        die("loop_create_future");
    m->baton.remaining = m->n;
    m->a = spawn(m->baton.loop, runner_new(&m->baton));
    m->b = spawn(m->baton.loop, runner_new(&m->baton));
    AWAIT_TASK(c, m->a);
    AWAIT_TASK(c, m->b);
    result_value[0] = (cpu_ns() - m->t0) / (double)m->n;
    result_count = m->baton.awaits;
    task_release(m->a);
    task_release(m->b);
    future_release(m->baton.fut);
    CORO_END(c);
}

/* ---- memory: N tasks pending at `await gate` ---------------------------- */

/* async def pending(gate): await gate */
typedef struct pending {
    coro_t coro;
    future_t *gate;
} pending_t;

static coro_status pending_step(coro_t *c)
{
    pending_t *p = (pending_t *)c;
    CORO_BEGIN(c);
    CORO_AWAIT(c, p->gate);
    CORO_END(c);
}

static coro_t *pending_new(future_t *gate)
{
    pending_t *p = malloc(sizeof *p);
    if (p == NULL)
        return NULL;
    p->gate = gate;
    return coro_init(&p->coro, pending_step, "pending", free_coro);
}

/* Pass 0 reads the resident set (cold: the first tasks this process
 * makes); pass 1 the allocator's bytes in use, once the loop's queues and
 * the allocator's free lists have grown to the size the workload needs. */
typedef struct memory {
    coro_t coro;
    loop_t *loop;
    long n, i, count;
    int pass;
    double before;
    future_t *gate;
    task_t **tasks; /* allocated before the first reading, as Python's list */
    sleep_t sleep;
} memory_t;

static double memory_reading(int pass)
{
    return pass == 0 ? rss_bytes() : heap_bytes();
}

static coro_status memory_step(coro_t *c)
{
    memory_t *m = (memory_t *)c;
    CORO_BEGIN(c);
    result_count = m->n;
    for (m->pass = 0; m->pass < 2; m->pass++) {
        m->gate = loop_create_future(m->loop);
        if (m->gate == NULL)
            die("loop_create_future");
        m->before = memory_reading(m->pass);
        for (m->i = 0; m->i < m->n; m->i++)
            m->tasks[m->i] = spawn(m->loop, pending_new(m->gate));
        /* One turn: every task runs its first step, to `await gate`. */
        CORO_CALL(c, sleep_init(&m->sleep, 0));
        result_value[1 - m->pass] = m->before < 0 ? -1
            : (memory_reading(m->pass) - m->before) / (double)m->n;
        m->count = 0;
        for (m->i = 0; m->i < m->n; m->i++)
            m->count += !future_done(task_future(m->tasks[m->i]));
        if (m->count < result_count)
            result_count = m->count;
        future_set_result(m->gate, NULL);
        for (m->i = 0; m->i < m->n; m->i++) {
            AWAIT_TASK(c, m->tasks[m->i]);
            task_release(m->tasks[m->i]);
        }
        future_release(m->gate);
    }
    CORO_END(c);
}

/* ---- one run, in this process ------------------------------------------ */

static const char *const WORKLOADS[] = {"create", "chain", "memory"};
enum { NWORKLOADS = 3 };

/* bench_tasks --one WORKLOAD N: run it on a new loop, as asyncio.Runner
 * runs main(): a main task, run_until_complete.  Prints one line. */
static int run_one(const char *workload, long n)
{
    loop_t *loop = loop_new();
    if (loop == NULL)
        die("loop_new");
    coro_t *main_coro = NULL;
    void *frame = NULL;
    if (strcmp(workload, "create") == 0) {
        create_t *m = calloc(1, sizeof *m);
        if (m != NULL) {
            m->loop = loop;
            m->n = n;
            main_coro = coro_init(&m->coro, create_step, "create", NULL);
        }
        frame = m;
    } else if (strcmp(workload, "chain") == 0) {
        chain_t *m = calloc(1, sizeof *m);
        if (m != NULL) {
            m->baton.loop = loop;
            m->n = n;
            main_coro = coro_init(&m->coro, chain_step, "chain", NULL);
        }
        frame = m;
    } else if (strcmp(workload, "memory") == 0) {
        memory_t *m = calloc(1, sizeof *m);
        if (m != NULL && (m->tasks = calloc((size_t)n, sizeof *m->tasks)) != NULL) {
            m->loop = loop;
            m->n = n;
            main_coro = coro_init(&m->coro, memory_step, "memory", NULL);
        }
        frame = m;
    } else {
        fprintf(stderr, "bench_tasks: no workload '%s' (create, chain, memory)\n", workload);
        return 2;
    }
    if (main_coro == NULL)
        die("calloc");
    task_t *main_task = spawn(loop, main_coro);
    if (loop_run_until_complete(loop, task_future(main_task)) < 0) {
        fprintf(stderr, "bench_tasks: %s\n", loop_error(loop));
        return 1;
    }
    void *ignored;
    loop_exception_t error;
    if (future_result(task_future(main_task), &ignored, &error) < 0) {
        fprintf(stderr, "bench_tasks: %s: %s\n", error.type, error.message);
        return 1;
    }
    task_release(main_task);
    if (strcmp(workload, "memory") == 0) {
        free(((memory_t *)frame)->tasks);
        printf("memory %ld %.1f %.1f\n", result_count, result_value[0], result_value[1]);
    } else {
        printf("%s %ld %.1f\n", workload, result_count, result_value[0]);
    }
    free(frame);
    loop_close(loop);
    loop_free(loop);
    return 0;
}

/* ---- the comparison ----------------------------------------------------- */

typedef struct contender {
    const char *name; /* as the rows print it */
    const char *loop; /* the peer's argument; NULL: this program */
    int skipped;      /* uvloop not installed */
    double values[NWORKLOADS][2][ROUNDS];
} contender_t;

static contender_t contenders[] = {
    {"C (stage 09)", NULL, 0, {{{0}}}},
    {"asyncio", "asyncio", 0, {{{0}}}},
    {"uvloop", "uvloop", 0, {{{0}}}},
};
enum { NCONTENDERS = 3 };

static const char *self_path, *python, *peer;

/* Run one measurement in a new process; 0, or -1 (it said why on stderr),
 * or 3 from the peer: uvloop is not installed. */
static int measure(contender_t *who, int w, long n, double out[2])
{
    char cmd[4096];
    if (who->loop == NULL)
        snprintf(cmd, sizeof cmd, "'%s' --one %s %ld", self_path, WORKLOADS[w], n);
    else
        snprintf(cmd, sizeof cmd, "'%s' '%s' %s %s %ld", python, peer, who->loop,
                 WORKLOADS[w], n);
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        die("popen");
    char line[256] = "", name[32];
    long count = -1;
    out[1] = -1;
    int fields = 0;
    if (fgets(line, sizeof line, p) != NULL)
        fields = sscanf(line, "%31s %ld %lf %lf", name, &count, &out[0], &out[1]);
    int status = pclose(p);
    if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 3)
        return 3;
    if (status != 0 || fields < 3 || strcmp(name, WORKLOADS[w]) != 0) {
        fprintf(stderr, "bench_tasks: %s: exit status %d, printed '%s'\n", cmd, status, line);
        return -1;
    }
    if (count != n) {
        fprintf(stderr, "bench_tasks: %s: %s counted %ld, expected %ld\n", who->name,
                WORKLOADS[w], count, n);
        return -1;
    }
    return 0;
}

/* xorshift64: the shuffles need no more (and print their seed). */
static unsigned long long rng_state;
static unsigned long long rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void shuffle(int *order, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rng_next() % (unsigned long long)(i + 1));
        int tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v; its median. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The peer's versions line; fills `versions`.  -1 if the peer does not run. */
static int peer_versions(char *versions, size_t size)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' '%s' --versions", python, peer);
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        die("popen");
    int ok = fgets(versions, (int)size, p) != NULL;
    if (pclose(p) != 0 || !ok)
        return -1;
    versions[strcspn(versions, "\n")] = '\0';
    return 0;
}

/* The 1-minute load average (Linux); -1 elsewhere.  The data file records it
 * at the start and at the end: other work on the machine widens min-max. */
static double load_average(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double load = -1;
    if (f != NULL) {
        if (fscanf(f, "%lf", &load) != 1)
            load = -1;
        fclose(f);
    }
    return load;
}

static void print_row(const contender_t *who, int w, int which, int rounds, double c_median)
{
    double v[ROUNDS];
    memcpy(v, who->values[w][which], sizeof v);
    double med = median(v, rounds);
    printf("  %10.1f %8.1f %8.1f %6.2f", med, v[0], v[rounds - 1], med / c_median);
}

/* The head of data set w (gnuplot's `index w`). */
static void print_head(int w, const long *sizes)
{
    switch (w) {
    case 0:
        printf("# index 0: create and complete %ld tasks, each awaits sleep(0) then returns"
               " (created %d at a time)\n", sizes[0], BATCH);
        printf("# contender       ns/task      min      max    x C\n");
        break;
    case 1:
        printf("# index 1: a chain of %ld awaits: two tasks hand a baton through futures,\n"
               "# each await resumed by the task the previous one woke\n", sizes[1]);
        printf("# contender      ns/await      min      max    x C\n");
        break;
    default:
        printf("# index 2: bytes per pending task, %ld tasks at `await gate`.\n"
               "# allocator: C mallinfo2's bytes in use (headers included), Python\n"
               "# tracemalloc's (the bytes asked for), on a warm heap;\n"
               "# rss: what the resident memory grew by, cold\n", sizes[2]);
        printf("# contender     allocator      min      max    x C         rss      min      max    x C\n");
    }
}

static void print_table(int rounds, const long *sizes)
{
    for (int w = 0; w < NWORKLOADS; w++) {
        if (w > 0)
            printf("\n\n");
        print_head(w, sizes);
        double c_med[2];
        for (int which = 0; which < 2; which++) {
            double v[ROUNDS];
            memcpy(v, contenders[0].values[w][which], sizeof v);
            c_med[which] = median(v, rounds);
        }
        for (int k = 0; k < NCONTENDERS; k++) {
            char quoted[40];
            snprintf(quoted, sizeof quoted, "\"%s\"", contenders[k].name);
            printf("%-15s", quoted);
            if (contenders[k].skipped) {
                printf("  - (not installed)\n");
                continue;
            }
            for (int which = 0; which < (w == 2 ? 2 : 1); which++)
                print_row(&contenders[k], w, which, rounds, c_med[which]);
            printf("\n");
        }
    }
}

static int compare(int smoke)
{
    const long *sizes = smoke ? SMOKE_SIZES : SIZES;
    int rounds = smoke ? 1 : ROUNDS;
    char versions[512];
    if (peer_versions(versions, sizeof versions) < 0) {
        fprintf(stderr, "bench_tasks: the peer does not run: '%s' '%s' (set TASKS_PEER, PYTHON)\n",
                python, peer);
        return 1;
    }
    rng_state = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32);
    if (rng_state == 0)
        rng_state = 1;
    unsigned long long seed = rng_state;
    double load_before = load_average();
    for (int r = 0; r < rounds; r++) {
        for (int w = 0; w < NWORKLOADS; w++) {
            int order[NCONTENDERS] = {0, 1, 2};
            shuffle(order, NCONTENDERS);
            for (int k = 0; k < NCONTENDERS; k++) {
                contender_t *who = &contenders[order[k]];
                if (who->skipped)
                    continue;
                double out[2];
                int rc = measure(who, w, sizes[w], out);
                if (rc == 3) {
                    who->skipped = 1;
                    continue;
                }
                if (rc < 0)
                    return 1;
                who->values[w][0][r] = out[0];
                who->values[w][1][r] = out[1];
                if (smoke)
                    printf("ok: %s, %s: %ld counted\n", who->name, WORKLOADS[w], sizes[w]);
            }
        }
    }
    if (smoke) {
        if (contenders[2].skipped)
            printf("uvloop: skipped (not installed)\n");
        return 0;
    }
    printf("# bench_tasks: chapter 09's tasks against CPython's asyncio and uvloop, one run\n");
    printf("# peers: %s\n", versions);
    printf("# %d rounds; in each, every workload runs once per contender, each run a new\n"
           "# process, the contenders in a new random order every time (xorshift64 seed %llu)\n",
           rounds, seed);
    printf("# time: the process's CPU time (user + system) over the workload alone\n");
    printf("# load average (1 min): %.2f at the start, %.2f at the end\n", load_before,
           load_average());
    printf("# each row: the median of the rounds, min, max, and the median over C's\n");
    print_table(rounds, sizes);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--one") == 0)
        return run_one(argv[2], atol(argv[3]));
    int smoke = argc == 2 && strcmp(argv[1], "--smoke") == 0;
    if (argc > 1 && !smoke) {
        fprintf(stderr, "usage: bench_tasks [--smoke | --one create|chain|memory N]\n");
        return 2;
    }
    self_path = argv[0];
    python = getenv("PYTHON") ? getenv("PYTHON") : "/usr/bin/python3";
    peer = getenv("TASKS_PEER") ? getenv("TASKS_PEER") : "../../tests/bench/tasks_peer.py";
    setvbuf(stdout, NULL, _IOLBF, 0);
    return compare(smoke);
}
