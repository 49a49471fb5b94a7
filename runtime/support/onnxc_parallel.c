/* onnxc_parallel.c: the thread pool linked into every library onnxc builds.
 *
 * Generated code calls onnxc_parallel_for(fn, ctx, begin, end) for a loop
 * nest whose outer iterations are independent. The range is cut into one
 * contiguous slice per thread; the calling thread and the pool's workers
 * claim slices until none is left, so a worker the OS has not scheduled yet
 * (a busy machine) costs no waiting: the caller runs its slice instead.
 * Workers are started on first use, spin for a while after each job (the
 * next nest usually follows at once) and then sleep on a condition variable.
 *
 * A slice is claimed by a compare-and-swap on `ticket`, which holds the job's
 * number, its slice count and the next slice: a worker still holding an old
 * job number can never claim a slice of a newer job, and the caller returns
 * only when every slice of its job has finished, so the job's fields, written
 * before the ticket names the job, stay valid while they are used.
 *
 * One job runs at a time: a thread that finds the pool busy (another thread
 * running the model concurrently) runs its whole range itself, so concurrent
 * calls of run_main_graph stay correct, only not all of them parallel.
 *
 * Thread count: onnxc_set_num_threads(n), else the environment variable
 * ONNXC_NUM_THREADS, else the number of CPUs this process may run on.
 *
 * Unloading: the library's destructor stops and joins the workers, so that
 * dlclose never unmaps code a worker is still running (or waiting) in.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define HIDDEN __attribute__((visibility("hidden")))
#define EXPORTED __attribute__((visibility("default")))
#define MAX_THREADS 64
#define SPIN_ROUNDS 20000

typedef void (*onnxc_range_fn)(void *ctx, int64_t begin, int64_t end);

/* Held by the thread whose job the pool runs, and while the pool changes. */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;

static atomic_int num_threads;     /* 0 until chosen */
static int num_workers;            /* started workers (pool_lock) */
static pthread_t workers[MAX_THREADS];
static atomic_int stopping;        /* set once, by the destructor */
static atomic_uint_fast64_t ticket; /* job number << 32 | slices << 16 | next slice to claim */
static atomic_int finished;        /* slices of the current job that have run */

/* The current job: written by its caller before `ticket` names it. */
static onnxc_range_fn job_fn;
static void *job_ctx;
static int64_t job_begin, job_end;
static int job_slices;

static void relax(void) {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}

static int default_threads(void) {
  const char *text = getenv("ONNXC_NUM_THREADS");
  if (text != NULL) {
    long value = strtol(text, NULL, 10);
    if (value > 0) return value < MAX_THREADS ? (int)value : MAX_THREADS;
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) {
    int count = CPU_COUNT(&set);
    return count < MAX_THREADS ? count : MAX_THREADS;
  }
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online < 1 ? 1 : online < MAX_THREADS ? (int)online : MAX_THREADS;
}

static int current_threads(void) {
  int n = atomic_load(&num_threads);
  if (n == 0) {
    int expected = 0;
    n = default_threads();
    if (!atomic_compare_exchange_strong(&num_threads, &expected, n)) n = expected;
  }
  return n;
}

/* Run slice `slice` of the current job: the slice-th of job_slices equal parts of [begin, end). */
static void run_slice(int64_t slice) {
  int64_t count = job_end - job_begin;
  int64_t first = job_begin + count * slice / job_slices;
  int64_t last = job_begin + count * (slice + 1) / job_slices;
  if (first < last) job_fn(job_ctx, first, last);
  if (atomic_fetch_add(&finished, 1) + 1 == job_slices) {
    pthread_mutex_lock(&done_lock);
    pthread_cond_signal(&done_cond);
    pthread_mutex_unlock(&done_lock);
  }
}

/* Claim and run slices of job `job` until none is left or another job began. */
static void run_slices_of(uint64_t job) {
  uint_fast64_t current = atomic_load(&ticket);
  while ((current >> 32) == job && (current & 0xFFFF) < ((current >> 16) & 0xFFFF)) {
    if (atomic_compare_exchange_weak(&ticket, &current, current + 1)) {
      run_slice((int64_t)(current & 0xFFFF));
      current = atomic_load(&ticket);
    }
  }
}

static void *worker_main(void *unused) {
  (void)unused;
  uint64_t seen = 0;  /* the last job this worker looked at */
  for (;;) {
    for (int i = 0; i < SPIN_ROUNDS && (atomic_load(&ticket) >> 32) == seen && !atomic_load(&stopping); ++i) relax();
    if ((atomic_load(&ticket) >> 32) == seen) {
      pthread_mutex_lock(&wake_lock);
      while ((atomic_load(&ticket) >> 32) == seen && !atomic_load(&stopping)) pthread_cond_wait(&wake_cond, &wake_lock);
      pthread_mutex_unlock(&wake_lock);
    }
    if (atomic_load(&stopping)) return NULL;
    seen = atomic_load(&ticket) >> 32;
    run_slices_of(seen);
  }
  return NULL;
}

/* Start workers until there are `wanted` (pool_lock held); fewer if the system refuses. */
static void start_workers(int wanted) {
  while (num_workers < wanted && num_workers < MAX_THREADS) {
    if (pthread_create(&workers[num_workers], NULL, worker_main, NULL) != 0) break;
    ++num_workers;
  }
}

/* Runs at dlclose (and process exit): wake every worker, let it return, join it. */
__attribute__((destructor)) static void stop_workers(void) {
  pthread_mutex_lock(&pool_lock);
  pthread_mutex_lock(&wake_lock);
  atomic_store(&stopping, 1);
  pthread_cond_broadcast(&wake_cond);
  pthread_mutex_unlock(&wake_lock);
  for (int i = 0; i < num_workers; ++i) pthread_join(workers[i], NULL);
  num_workers = 0;
  pthread_mutex_unlock(&pool_lock);
}

HIDDEN void onnxc_parallel_for(onnxc_range_fn fn, void *ctx, int64_t begin, int64_t end) {
  int threads = current_threads();
  if (end - begin < threads) threads = (int)(end - begin);
  if (threads <= 1 || pthread_mutex_trylock(&pool_lock) != 0) {
    if (begin < end) fn(ctx, begin, end);
    return;
  }
  start_workers(threads - 1);
  if (num_workers + 1 < threads) threads = num_workers + 1;
  job_fn = fn;
  job_ctx = ctx;
  job_begin = begin;
  job_end = end;
  job_slices = threads;
  atomic_store(&finished, 0);
  uint64_t job = (atomic_load(&ticket) >> 32) + 1;
  pthread_mutex_lock(&wake_lock);
  atomic_store(&ticket, job << 32 | (uint64_t)threads << 16);
  pthread_cond_broadcast(&wake_cond);
  pthread_mutex_unlock(&wake_lock);

  run_slices_of(job);
  for (int i = 0; i < SPIN_ROUNDS && atomic_load(&finished) < threads; ++i) relax();
  if (atomic_load(&finished) < threads) {
    pthread_mutex_lock(&done_lock);
    while (atomic_load(&finished) < threads) pthread_cond_wait(&done_cond, &done_lock);
    pthread_mutex_unlock(&done_lock);
  }
  pthread_mutex_unlock(&pool_lock);
}

EXPORTED int32_t onnxc_set_num_threads(int32_t threads) {
  int chosen = threads < 1 ? default_threads() : threads < MAX_THREADS ? threads : MAX_THREADS;
  pthread_mutex_lock(&pool_lock);
  atomic_store(&num_threads, chosen);
  pthread_mutex_unlock(&pool_lock);
  return chosen;
}

EXPORTED int32_t onnxc_get_num_threads(void) { return current_threads(); }
