/* onnxc_strings.c: string tensors returned by a library (runtime/onnxc.h).
 *
 * A string output is allocated by the library, like a dynamic output: one
 * malloc block holding its shape, then (16-byte aligned) its onnxc_string
 * elements, then their bytes; the caller frees it with onnxc_free_tensor,
 * which frees the block its shape pointer starts. The strings the kernels made
 * live in buffers the call frees, so every byte is copied here.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HIDDEN __attribute__((visibility("hidden")))

typedef struct onnxc_string {
  const char *data;
  int64_t size;
} onnxc_string;

typedef struct onnxc_tensor {
  void *data;
  const int64_t *shape;
  int64_t rank;
  int32_t dtype;
  int32_t reserved;
} onnxc_tensor;

enum { STATUS_OK = 0, STATUS_NOMEM = 6, DTYPE_STRING = 8, MAX_RANK = 64 };

/* The element of `source` (of dims `bound`) at the `index`-th position of the
 * row-major box of dims `shape` (each at most its `bound`). */
static const onnxc_string *element(const onnxc_string *source, const int64_t *bound, const int64_t *shape,
                                   int64_t rank, int64_t index) {
  int64_t offset = 0, stride = 1;
  for (int64_t axis = rank - 1; axis >= 0; --axis) {
    offset += (index % shape[axis]) * stride;
    index /= shape[axis];
    stride *= bound[axis];
  }
  return source + offset;
}

/* Copy the box `shape` of `source` (dims `bound`) into a fresh block described
 * by `*out`; STATUS_NOMEM (and `*out` untouched) if it cannot be allocated. */
HIDDEN int32_t onnxc_string_output(const onnxc_string *source, const int64_t *bound, const int64_t *shape,
                                   int64_t rank, onnxc_tensor *out) {
  int64_t count = 1;
  for (int64_t axis = 0; axis < rank; ++axis) count *= shape[axis];
  uint64_t bytes = 0;
  for (int64_t k = 0; k < count; ++k) bytes += (uint64_t)element(source, bound, shape, rank, k)->size;
  uint64_t header = ((uint64_t)rank * 8 + 15) / 16 * 16;
  uint64_t pairs = (uint64_t)count * sizeof(onnxc_string);
  if (bytes > SIZE_MAX - header - pairs - 1) return STATUS_NOMEM;
  char *block = malloc((size_t)(header + pairs + bytes + 1));
  if (block == NULL) return STATUS_NOMEM;
  memcpy(block, shape, (size_t)rank * 8);
  onnxc_string *strings = (onnxc_string *)(block + header);
  char *text = block + header + pairs;
  for (int64_t k = 0; k < count; ++k) {
    const onnxc_string *from = element(source, bound, shape, rank, k);
    if (from->size) memcpy(text, from->data, (size_t)from->size);
    strings[k].data = text;
    strings[k].size = from->size;
    text += from->size;
  }
  out->data = strings;
  out->shape = (const int64_t *)block;
  out->rank = rank;
  out->dtype = DTYPE_STRING;
  out->reserved = 0;
  return STATUS_OK;
}
