/* onnxc_profile.c: per-kernel timestamps, linked only into libraries built with `onnxc --profile`.
 *
 * The generated code brackets every kernel call (a loop nest of one or more
 * ONNX nodes, see onnxc/codegen/profiling.py) with onnxc_profile_now() and
 * onnxc_profile_record(kernel, start). run_main_graph calls
 * onnxc_profile_start_run() first, so each thread's log holds the events of
 * its latest run, which onnxc_profile_events hands to that thread's caller
 * (runtime/onnxc.h). Times are CLOCK_MONOTONIC nanoseconds, wall time on the
 * calling thread: a kernel run on the thread pool counts until its last
 * slice is done.
 *
 * Logs are per thread (a pthread key), so concurrent runs never share one;
 * like onnxc_parallel.c's thread memory they are listed, so that unloading
 * the library frees those of threads still alive and deletes the key whose
 * destructor is this library's code.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define HIDDEN __attribute__((visibility("hidden")))
#define EXPORTED __attribute__((visibility("default")))

typedef struct onnxc_profile_event {
  int64_t start_ns;
  int64_t duration_ns;
  int32_t kernel;
  int32_t reserved;
} onnxc_profile_event;

struct profile_log {
  onnxc_profile_event *events;
  int64_t count, capacity;
  struct profile_log *previous, *next;
};

static pthread_key_t log_key;
static int log_key_made;
static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t logs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct profile_log *all_logs;

static void free_log(void *pointer) {
  struct profile_log *log = pointer;
  pthread_mutex_lock(&logs_lock);
  if (log->previous != NULL) log->previous->next = log->next;
  else all_logs = log->next;
  if (log->next != NULL) log->next->previous = log->previous;
  pthread_mutex_unlock(&logs_lock);
  free(log->events);
  free(log);
}

static void make_log_key(void) { log_key_made = pthread_key_create(&log_key, free_log) == 0; }

/* This thread's log, created on first use; NULL if it cannot be. */
static struct profile_log *thread_log(void) {
  pthread_once(&log_once, make_log_key);
  if (!log_key_made) return NULL;
  struct profile_log *log = pthread_getspecific(log_key);
  if (log != NULL) return log;
  log = calloc(1, sizeof *log);
  if (log == NULL || pthread_setspecific(log_key, log) != 0) {
    free(log);
    return NULL;
  }
  pthread_mutex_lock(&logs_lock);
  log->next = all_logs;
  if (all_logs != NULL) all_logs->previous = log;
  all_logs = log;
  pthread_mutex_unlock(&logs_lock);
  return log;
}

__attribute__((destructor)) static void free_logs(void) {
  if (!log_key_made) return;
  pthread_key_delete(log_key);
  while (all_logs != NULL) free_log(all_logs);
}

HIDDEN int64_t onnxc_profile_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* Forget the calling thread's events: a new run begins. */
HIDDEN void onnxc_profile_start_run(void) {
  struct profile_log *log = thread_log();
  if (log != NULL) log->count = 0;
}

/* Kernel `kernel` ran on this thread from `start_ns` until now. An event that finds no
   memory is dropped (the run itself goes on). */
HIDDEN void onnxc_profile_record(int32_t kernel, int64_t start_ns) {
  int64_t end_ns = onnxc_profile_now();
  struct profile_log *log = thread_log();
  if (log == NULL) return;
  if (log->count == log->capacity) {
    int64_t capacity = log->capacity ? 2 * log->capacity : 256;
    onnxc_profile_event *events = realloc(log->events, (size_t)capacity * sizeof *events);
    if (events == NULL) return;
    log->events = events;
    log->capacity = capacity;
  }
  log->events[log->count++] = (onnxc_profile_event){start_ns, end_ns - start_ns, kernel, 0};
}

EXPORTED int64_t onnxc_profile_events(const onnxc_profile_event **events) {
  struct profile_log *log = log_key_made ? pthread_getspecific(log_key) : NULL;
  *events = log != NULL ? log->events : NULL;
  return log != NULL ? log->count : 0;
}
