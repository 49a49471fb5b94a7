/* onnxc_parallel.c: the thread pool linked into every library onnxc builds.
 *
 * Generated code calls onnxc_parallel_for(fn, ctx, begin, end) for a loop
 * nest whose outer iterations are independent. The range is cut into one
 * contiguous slice per thread; the calling thread and the pool's workers
 * claim slices until none is left, so a worker the OS has not scheduled yet
 * (a busy machine) costs no waiting: the caller runs its slice instead.
 * Workers are started on first use, spin for ONNXC_SPIN_US microseconds after
 * each job (the next nest usually follows at once) and then sleep on a
 * condition variable.
 * The library's destructor stops and joins them, so that dlclose never
 * unmaps code a worker is running.
 *
 * Slice i belongs to thread i (the caller is thread 0, workers 1, 2, ...):
 * each thread runs its own slice first and then any left unclaimed. Owners
 * stay the same from nest to nest, so a thread reads what it wrote: the
 * channels a conv's thread produced feed the same thread's depthwise conv.
 * (First come, first served, a spinning worker often took slice 0, and the
 * lines of half of every nest's data moved between cores.)
 * `job` holds the job's number and slice count; claims[i] the number of the
 * last job whose slice i was taken. A thread takes slice i of job J by a
 * compare-and-swap of claims[i] from a number below J to J, so a worker
 * still holding an older job's number can never take a slice of a newer job
 * (its slices all hold that older number, or a newer one). The job's fields
 * are written before `job` names it, and the caller returns only when every
 * slice of its job has finished, so they stay valid while they are used.
 *
 * One job runs at a time: a thread that finds the pool busy (another thread
 * running the model concurrently) runs its whole range itself, so concurrent
 * calls of run_main_graph stay correct, only not all of them parallel.
 *
 * Thread count: onnxc_set_num_threads(n), else the environment variable
 * ONNXC_NUM_THREADS, else the number of CPUs this process may run on.
 *
 * Scratch memory per thread: a GEMM packs the part of B its tiles read into
 * memory of the thread doing it, so that no thread waits for another's
 * packing (MLAS keeps thread-local packing buffers for the same reason).
 * run_main_graph reserves the model's largest need for its own thread with
 * onnxc_reserve_scratch, failing with ONNXC_ERR_NOMEM before any work; a
 * worker grows its buffer before it claims a slice, and a worker that cannot
 * leaves the job's slices to the others (the calling thread runs whatever is
 * left). Buffers are kept for the thread's life (freed at its exit, through
 * a pthread key, or when the library is unloaded) and only grow, so they are
 * allocated once per thread.
 *
 * Arena per thread: run_main_graph keeps its intermediate buffers in one arena,
 * the calling thread's (onnxc_thread_arena), kept likewise: allocating and
 * faulting in tens of megabytes on every run cost milliseconds (the kernel
 * zeroes every fresh page). From 2 MB it is mapped 2 MB aligned and advised to
 * use transparent huge pages, so that the GEMM's strided reads of images (a
 * row per reduction step, each in another page) do not miss the TLB.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define HIDDEN __attribute__((visibility("hidden")))
#define EXPORTED __attribute__((visibility("default")))
#define MAX_THREADS 64
#define SPIN_ROUNDS 20000 /* pauses a caller spins for its job's slices before it sleeps */
#define DEFAULT_SPIN_US 5000 /* see worker_spin_ns */
#define CLOCK_ROUNDS 64 /* pauses between reads of the clock of a spinning worker */
#define YIELD_ROUNDS 64 /* spin rounds between sched_yield calls of a caller waiting for its job */
#define HUGE_PAGE (2 << 20)

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
static atomic_int stopping;        /* set by the destructor */
static atomic_uint_fast64_t job;                 /* the current job's number << 8 | its slices */
static atomic_uint_fast64_t claims[MAX_THREADS]; /* the last job whose slice i was taken */
static atomic_int finished;        /* slices of the current job that have run */

/* The current job: written by its caller before `job` names it. */
static onnxc_range_fn job_fn;
static void *job_ctx;
static int64_t job_begin, job_end;
static int job_slices;

static pthread_key_t memory_key;  /* the thread's struct thread_memory */
static int memory_key_made;       /* pthread_key_create succeeded */
static pthread_once_t memory_once = PTHREAD_ONCE_INIT;
static atomic_llong scratch_needed; /* bytes a thread needs to take part in a job */

struct buffer {
  int64_t bytes;
  void *data;
  size_t mapped; /* bytes mapped at data (a huge-page buffer), else 0 (aligned_alloc's) */
};

struct thread_memory {
  struct buffer scratch; /* GEMM packing */
  struct buffer arena;   /* run_main_graph's intermediate buffers */
  struct thread_memory *previous, *next; /* every thread's, so that dlclose frees them all */
};

static pthread_mutex_t memory_lock = PTHREAD_MUTEX_INITIALIZER;
static struct thread_memory *all_memory; /* the list of thread_memory records (memory_lock) */

static void relax(void) {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}

static int64_t now_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* How long a worker spins for the next job before it sleeps: ONNXC_SPIN_US microseconds
   (0: at once), else DEFAULT_SPIN_US. 5 ms, not 0.2: a scheduler that packs threads which look
   idle onto one CPU (some virtual machines' kernels do) put a worker that slept after every run
   beside its caller, for good; two threads then ran slower than one (ResNeXt-style: 10.7 ms
   against 5.9, 1.78 of onnxruntime's time -> 0.95; T5's encoder 1.23 -> 1.00). onnxruntime's
   workers spin about 40 ms. */
static int64_t worker_spin_ns(void) {
  static atomic_llong chosen = -1;
  long long value = atomic_load(&chosen);
  if (value < 0) {
    const char *text = getenv("ONNXC_SPIN_US");
    long long microseconds = text != NULL ? strtoll(text, NULL, 10) : DEFAULT_SPIN_US;
    value = (microseconds < 0 ? 0 : microseconds) * 1000;
    atomic_store(&chosen, value);
  }
  return value;
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

static void release(struct buffer *buffer) {
  if (buffer->mapped)
    munmap(buffer->data, buffer->mapped);
  else
    free(buffer->data);
}

static void free_thread_memory(void *pointer) {
  struct thread_memory *memory = pointer;
  pthread_mutex_lock(&memory_lock);
  if (memory->previous != NULL) memory->previous->next = memory->next;
  else all_memory = memory->next;
  if (memory->next != NULL) memory->next->previous = memory->previous;
  pthread_mutex_unlock(&memory_lock);
  release(&memory->scratch);
  release(&memory->arena);
  free(memory);
}

static void make_memory_key(void) { memory_key_made = pthread_key_create(&memory_key, free_thread_memory) == 0; }

/* This thread's memory record (created on first use); NULL if it cannot be. */
static struct thread_memory *thread_memory(void) {
  pthread_once(&memory_once, make_memory_key);
  if (!memory_key_made) return NULL;
  struct thread_memory *memory = pthread_getspecific(memory_key);
  if (memory == NULL) {
    memory = calloc(1, sizeof *memory);
    if (memory == NULL || pthread_setspecific(memory_key, memory) != 0) {
      free(memory);
      return NULL;
    }
    pthread_mutex_lock(&memory_lock);
    memory->next = all_memory;
    if (all_memory != NULL) all_memory->previous = memory;
    all_memory = memory;
    pthread_mutex_unlock(&memory_lock);
  }
  return memory;
}

/* `size` bytes (a multiple of HUGE_PAGE) mapped at a HUGE_PAGE boundary, advised to use huge
   pages; NULL if they cannot be. Mapped, not malloc'ed, so that freeing returns them to the
   system at once (glibc keeps what a thread's malloc arena frees). */
static void *map_huge(size_t size) {
  char *start = mmap(NULL, size + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (start == MAP_FAILED) return NULL;
  char *aligned = (char *)(((uintptr_t)start + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE);
  if (aligned > start) munmap(start, (size_t)(aligned - start));
  if (aligned + size < start + size + HUGE_PAGE) munmap(aligned + size, (size_t)(start + size + HUGE_PAGE - (aligned + size)));
#ifdef MADV_HUGEPAGE
  madvise(aligned, size, MADV_HUGEPAGE); /* advice only: failure is harmless */
#endif
  return aligned;
}

/* Grow `buffer` to `bytes` (its contents are not kept); 0 if it cannot. */
static int grow(struct buffer *buffer, int64_t bytes) {
  if (buffer->bytes >= bytes) return 1;
  size_t mapped = bytes >= HUGE_PAGE ? ((size_t)bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE : 0;
  void *data = mapped ? map_huge(mapped) : aligned_alloc(64, ((size_t)bytes + 63) / 64 * 64);
  if (data == NULL) return 0;
  release(buffer);
  buffer->data = data;
  buffer->bytes = bytes;
  buffer->mapped = mapped;
  return 1;
}

/* Grow this thread's scratch to `bytes` (64-byte aligned); 0 if it cannot. */
static int ensure_scratch(int64_t bytes) {
  if (bytes <= 0) return 1;
  struct thread_memory *memory = thread_memory();
  return memory != NULL && grow(&memory->scratch, bytes);
}

/* The calling thread's arena of at least `bytes`, for one run_main_graph call; NULL if it cannot be had. */
/* At least a cache line, so that a run whose buffers are all empty (a pool of a 1x1 image by a
   2x2 window) still gets an arena, not NULL (ONNXC_ERR_NOMEM). */
HIDDEN void *onnxc_thread_arena(int64_t bytes) {
  struct thread_memory *memory = thread_memory();
  return memory != NULL && grow(&memory->arena, bytes > 64 ? bytes : 64) ? memory->arena.data : NULL;
}

/* The model needs `bytes` of scratch per thread: reserve them for the calling thread; 0 on success. */
HIDDEN int32_t onnxc_reserve_scratch(int64_t bytes) {
  long long needed = atomic_load(&scratch_needed);
  while (needed < bytes && !atomic_compare_exchange_weak(&scratch_needed, &needed, bytes)) {
  }
  return ensure_scratch(bytes) ? 0 : -1;
}

/* This thread's scratch: reserved by onnxc_reserve_scratch or, on a worker, before it claimed its slice. */
HIDDEN void *onnxc_thread_scratch(void) { return ((struct thread_memory *)pthread_getspecific(memory_key))->scratch.data; }

/* Run slice `slice` of the current job: the slice-th of job_slices equal parts of [begin, end). */
static void run_slice(int slice) {
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

/* Take slice `slice` of job `number`: 1 if this thread got it. */
static int claim(int slice, uint64_t number) {
  uint_fast64_t last = atomic_load(&claims[slice]);
  return last < number && atomic_compare_exchange_strong(&claims[slice], &last, number);
}

/* Hand back slice `slice` of job `number`, which this worker cannot run, and wake the caller to run it. */
static void give_back(int slice, uint64_t number) {
  pthread_mutex_lock(&done_lock);
  atomic_store(&claims[slice], number - 1);
  pthread_cond_signal(&done_cond);
  pthread_mutex_unlock(&done_lock);
}

/* Whether a slice of job `word` is left for any thread to take. */
static int slices_left(uint64_t word) {
  for (int slice = 0; slice < (int)(word & 0xFF); ++slice)
    if (atomic_load(&claims[slice]) < word >> 8) return 1;
  return 0;
}

/* Run slice `own` of job `word` (its number and slice count) unless a thread took it, then
   the slices no thread took. A worker first makes sure of its scratch. */
static void run_slices_of(uint64_t word, int own, int worker) {
  uint64_t number = word >> 8;
  int slices = (int)(word & 0xFF);
  for (int i = -1; i < slices; ++i) {
    int slice = i < 0 ? own : i;
    if (slice < 0 || slice >= slices || !claim(slice, number)) continue;
    if (worker && !ensure_scratch(atomic_load(&scratch_needed))) {
      give_back(slice, number);
      return;
    }
    run_slice(slice);
  }
}

static void *worker_main(void *index) {
  uint64_t seen = 0;  /* the last job this worker looked at */
  for (;;) {
    int64_t spin_end = now_ns() + worker_spin_ns();
    for (unsigned i = 0; atomic_load(&job) == seen; ++i) {
      relax();
      if (i % CLOCK_ROUNDS == 0 && now_ns() >= spin_end) break;
    }
    if (atomic_load(&job) == seen) {
      pthread_mutex_lock(&wake_lock);
      while (atomic_load(&job) == seen) pthread_cond_wait(&wake_cond, &wake_lock);
      pthread_mutex_unlock(&wake_lock);
    }
    seen = atomic_load(&job);
    if (atomic_load(&stopping)) return NULL;
    run_slices_of(seen, (int)(intptr_t)index, 1);
  }
  return NULL;
}

/* Start workers until there are `wanted` (pool_lock held); fewer if the system refuses. */
static void start_workers(int wanted) {
  while (num_workers < wanted && pthread_create(&workers[num_workers], NULL, worker_main, (void *)(intptr_t)(num_workers + 1)) == 0)
    ++num_workers;
}

/* Stop and join the workers when the library is unloaded (dlclose) or the process exits. */
__attribute__((destructor)) static void stop_workers(void) {
  pthread_mutex_lock(&pool_lock);
  atomic_store(&stopping, 1);
  pthread_mutex_lock(&wake_lock);
  atomic_store(&job, ((atomic_load(&job) >> 8) + 1) << 8); /* a job of no slices wakes them */
  pthread_cond_broadcast(&wake_cond);
  pthread_mutex_unlock(&wake_lock);
  for (int i = 0; i < num_workers; ++i) pthread_join(workers[i], NULL);
  num_workers = 0;
  pthread_mutex_unlock(&pool_lock);
  /* The key's destructor is this library's code: no thread may run it once
     the library is unmapped. The workers freed theirs as they exited; the
     records of threads still alive (which cannot run the model any more) are
     freed here. */
  if (memory_key_made) {
    pthread_key_delete(memory_key);
    while (all_memory != NULL) free_thread_memory(all_memory);
  }
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
  uint64_t word = ((atomic_load(&job) >> 8) + 1) << 8 | (uint64_t)threads;
  pthread_mutex_lock(&wake_lock);
  atomic_store(&job, word);
  pthread_cond_broadcast(&wake_cond);
  pthread_mutex_unlock(&wake_lock);

  run_slices_of(word, 0, 0);
  /* Waiting for the workers' slices: a scheduler that packs threads onto few CPUs (as some
     virtual machines' do) may have put a worker on this thread's CPU, where it runs only
     when this thread yields. A slice a worker hands back is run here. */
  for (int i = 0; atomic_load(&finished) < threads; ++i) {
    if (i % YIELD_ROUNDS == 0 && slices_left(word)) run_slices_of(word, -1, 0);
    if (i < SPIN_ROUNDS) {
      relax();
      if (i % YIELD_ROUNDS == YIELD_ROUNDS - 1) sched_yield();
      continue;
    }
    pthread_mutex_lock(&done_lock);
    while (atomic_load(&finished) < threads && !slices_left(word)) pthread_cond_wait(&done_cond, &done_lock);
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
