/* onnxc_single_thread.c: the runtime support of a WebAssembly module (wasm32).
 *
 * The same functions as onnxc_parallel.c, for a target without threads: a
 * WebAssembly instance runs on one thread (threads would need shared memory,
 * which browsers give only to cross-origin-isolated pages). So
 * onnxc_parallel_for runs the whole range on the caller, the thread count is
 * 1, and the arena and the GEMM scratch are single buffers that only grow.
 */
#include <stdint.h>
#include <stdlib.h>

#define HIDDEN __attribute__((visibility("hidden")))
#define EXPORTED __attribute__((visibility("default")))
#define ALIGNMENT 64

typedef void (*onnxc_range_fn)(void *ctx, int64_t begin, int64_t end);

struct buffer {
  int64_t bytes;
  void *data;
};

static struct buffer scratch, arena;

/* Grow `buffer` to `bytes` (its contents are not kept); 0 if it cannot. */
static int grow(struct buffer *buffer, int64_t bytes) {
  if (buffer->bytes >= bytes) return 1;
  if ((uint64_t)bytes > SIZE_MAX - ALIGNMENT) return 0;
  void *data = aligned_alloc(ALIGNMENT, ((size_t)bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT);
  if (data == NULL) return 0;
  free(buffer->data);
  buffer->data = data;
  buffer->bytes = bytes;
  return 1;
}

/* The arena of at least `bytes` for one run_main_graph call; NULL if it cannot be had. */
/* At least a cache line: a run whose buffers are all empty still gets an arena, not NULL. */
HIDDEN void *onnxc_thread_arena(int64_t bytes) { return grow(&arena, bytes > 64 ? bytes : 64) ? arena.data : NULL; }

/* Reserve `bytes` of GEMM scratch; 0 on success. */
HIDDEN int32_t onnxc_reserve_scratch(int64_t bytes) { return grow(&scratch, bytes) ? 0 : -1; }

HIDDEN void *onnxc_thread_scratch(void) { return scratch.data; }

HIDDEN void onnxc_parallel_for(onnxc_range_fn fn, void *ctx, int64_t begin, int64_t end) {
  if (begin < end) fn(ctx, begin, end);
}

/* One thread, whatever is asked: the ABI's answer is the count in effect. */
EXPORTED int32_t onnxc_set_num_threads(int32_t threads) {
  (void)threads;
  return 1;
}

EXPORTED int32_t onnxc_get_num_threads(void) { return 1; }
