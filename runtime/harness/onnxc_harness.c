/* onnxc_harness: run an onnxc library in a process of its own target.
 *
 * Built for a foreign target (s390x, ppc64le) and run under qemu-user by
 * onnxc/emulation.py, which cannot dlopen such a library itself. The harness
 * knows nothing about dtypes or byte order: Python writes every input as raw
 * bytes in the target's order and reads the outputs back the same way.
 *
 *   onnxc_harness LIB.so signature        print onnxc_signature() on stdout
 *   onnxc_harness LIB.so run MANIFEST     run the model as the manifest says
 *
 * MANIFEST is text, one tensor per line, inputs then outputs in signature order:
 *   repeat N
 *   input   DTYPE NBYTES RANK D0 .. Dn-1 PATH     (PATH: the rest of the line)
 *   output  DTYPE NBYTES RANK D0 .. Dn-1 PATH
 *   dynamic DTYPE ITEMSIZE RANK PATH              (an output the library allocates)
 * A dynamic output's data goes to PATH and its dims, as decimal text, to
 * PATH.shape; the library's block is released with onnxc_free_tensor after
 * every run. Each run's latency is printed on stdout as "latency_ns N".
 *
 * Exit status: 0 success, 2 usage or I/O error, 3 run_main_graph failed
 * (its status is printed on stderr as "run_main_graph returned S").
 */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onnxc.h"

#define MAX_TENSORS 1024
#define MAX_RANK 64
#define DATA_ALIGNMENT 64

typedef int32_t (*run_fn)(const onnxc_tensor *, int64_t, onnxc_tensor *, int64_t);
typedef const char *(*signature_fn)(void);
typedef void (*free_tensor_fn)(onnxc_tensor *);
typedef int32_t (*abi_version_fn)(void);

typedef struct {
  onnxc_tensor tensor;
  int64_t shape[MAX_RANK];
  int64_t nbytes;   /* a dynamic output: the size of one element */
  int dynamic;
  char path[1024];
} tensor_file;

static tensor_file inputs[MAX_TENSORS], outputs[MAX_TENSORS];
static onnxc_tensor input_tensors[MAX_TENSORS], output_tensors[MAX_TENSORS];

static int fail(const char *what, const char *detail) {
  fprintf(stderr, "onnxc_harness: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  return 2;
}

static void *symbol(void *library, const char *name) {
  void *address = dlsym(library, name);
  if (!address) fprintf(stderr, "onnxc_harness: not an onnxc library: no symbol %s\n", name);
  return address;
}

/* Parse "DTYPE NBYTES RANK D0 .. PATH" (or, dynamic, "DTYPE ITEMSIZE RANK PATH") into `t`; 0 on success. */
static int parse_tensor(char *text, tensor_file *t, int dynamic) {
  char *end;
  long long dtype = strtoll(text, &end, 10), nbytes = strtoll(end, &end, 10), rank = strtoll(end, &end, 10);
  if (nbytes < 0 || rank < 0 || rank > MAX_RANK) return 1;
  for (long long axis = 0; axis < rank && !dynamic; ++axis) t->shape[axis] = strtoll(end, &end, 10);
  while (*end == ' ') ++end;
  size_t length = strcspn(end, "\n");
  if (length == 0 || length >= sizeof t->path) return 1;
  memcpy(t->path, end, length);
  t->path[length] = '\0';
  t->nbytes = nbytes;
  t->dynamic = dynamic;
  if (dynamic) { /* filled by the library */
    t->tensor = (onnxc_tensor){.data = NULL, .shape = NULL, .rank = rank, .dtype = (int32_t)dtype, .reserved = 0};
    return 0;
  }
  /* A buffer for every tensor, even an empty one: the library rejects NULL data. */
  size_t capacity = ((size_t)nbytes + DATA_ALIGNMENT) / DATA_ALIGNMENT * DATA_ALIGNMENT;
  t->tensor.data = aligned_alloc(DATA_ALIGNMENT, capacity);
  t->tensor.shape = t->shape;
  t->tensor.rank = rank;
  t->tensor.dtype = (int32_t)dtype;
  t->tensor.reserved = 0;
  return t->tensor.data == NULL;
}

static int read_input(tensor_file *t) {
  FILE *file = fopen(t->path, "rb");
  if (!file) return fail(strerror(errno), t->path);
  size_t got = fread(t->tensor.data, 1, (size_t)t->nbytes, file);
  int extra = fgetc(file) != EOF;
  fclose(file);
  if (got != (size_t)t->nbytes || extra) return fail("input file does not have the manifest's size", t->path);
  return 0;
}

static int write_bytes(const char *path, const void *data, size_t nbytes) {
  FILE *file = fopen(path, "wb");
  if (!file) return fail(strerror(errno), path);
  size_t put = fwrite(data, 1, nbytes, file);
  if (fclose(file) != 0 || put != nbytes) return fail("cannot write", path);
  return 0;
}

/* `tensor` (the library's, for a dynamic output) to t->path, its dims to t->path.shape. */
static int write_output(const tensor_file *t, const onnxc_tensor *tensor) {
  if (!t->dynamic) return write_bytes(t->path, tensor->data, (size_t)t->nbytes);
  char shape_path[1100], dims[MAX_RANK * 24 + 2] = "";
  size_t count = 1, used = 0;
  for (int64_t axis = 0; axis < tensor->rank && axis < MAX_RANK; ++axis) {
    count *= (size_t)tensor->shape[axis];
    used += (size_t)snprintf(dims + used, sizeof dims - used, "%lld ", (long long)tensor->shape[axis]);
  }
  snprintf(shape_path, sizeof shape_path, "%s.shape", t->path);
  if (write_bytes(shape_path, dims, strlen(dims))) return 2;
  return write_bytes(t->path, tensor->data, count * (size_t)t->nbytes);
}

static int run(void *library, const char *manifest_path) {
  run_fn run_main_graph = (run_fn)symbol(library, "run_main_graph");
  free_tensor_fn free_tensor = (free_tensor_fn)symbol(library, "onnxc_free_tensor");
  if (!run_main_graph || !free_tensor) return 2;
  FILE *manifest = fopen(manifest_path, "r");
  if (!manifest) return fail(strerror(errno), manifest_path);
  long repeat = 1;
  int64_t num_inputs = 0, num_outputs = 0;
  char line[8192];
  while (fgets(line, sizeof line, manifest)) {
    if (strncmp(line, "repeat ", 7) == 0) {
      repeat = strtol(line + 7, NULL, 10);
    } else if (strncmp(line, "input ", 6) == 0) {
      if (num_inputs == MAX_TENSORS) return fail("too many inputs", NULL);
      if (parse_tensor(line + 6, &inputs[num_inputs], 0)) return fail("bad manifest line", line);
      if (read_input(&inputs[num_inputs++])) return 2;
    } else if (strncmp(line, "output ", 7) == 0 || strncmp(line, "dynamic ", 8) == 0) {
      int dynamic = line[0] == 'd';
      if (num_outputs == MAX_TENSORS) return fail("too many outputs", NULL);
      if (parse_tensor(line + (dynamic ? 8 : 7), &outputs[num_outputs++], dynamic)) return fail("bad manifest line", line);
    } else if (line[0] != '\n') {
      return fail("bad manifest line", line);
    }
  }
  fclose(manifest);

  for (int64_t i = 0; i < num_inputs; ++i) input_tensors[i] = inputs[i].tensor;
  for (int64_t i = 0; i < num_outputs; ++i) output_tensors[i] = outputs[i].tensor;

  for (long r = 0; r < (repeat > 0 ? repeat : 1); ++r) {
    if (r > 0)
      for (int64_t i = 0; i < num_outputs; ++i)
        if (outputs[i].dynamic) free_tensor(&output_tensors[i]);
    struct timespec start, stop;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int32_t status = run_main_graph(input_tensors, num_inputs, output_tensors, num_outputs);
    clock_gettime(CLOCK_MONOTONIC, &stop);
    if (status != ONNXC_OK) {
      fprintf(stderr, "run_main_graph returned %d\n", (int)status);
      return 3;
    }
    long long ns = (long long)(stop.tv_sec - start.tv_sec) * 1000000000LL + (stop.tv_nsec - start.tv_nsec);
    printf("latency_ns %lld\n", ns);
  }
  int status = 0;
  for (int64_t i = 0; i < num_outputs && !status; ++i) status = write_output(&outputs[i], &output_tensors[i]);
  for (int64_t i = 0; i < num_outputs; ++i)
    if (outputs[i].dynamic) free_tensor(&output_tensors[i]);
  return status;
}

int main(int argc, char **argv) {
  if (argc < 3) return fail("usage: onnxc_harness LIB.so signature | onnxc_harness LIB.so run MANIFEST", NULL);
  void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!library) return fail("cannot load the library", dlerror());
  abi_version_fn abi_version = (abi_version_fn)symbol(library, "onnxc_abi_version");
  if (!abi_version) return 2;
  if (abi_version() != ONNXC_ABI_VERSION) {
    fprintf(stderr, "onnxc_harness: the library has ABI version %d, the harness implements %d\n",
            (int)abi_version(), ONNXC_ABI_VERSION);
    return 2;
  }
  if (strcmp(argv[2], "signature") == 0 && argc == 3) {
    signature_fn signature = (signature_fn)symbol(library, "onnxc_signature");
    if (!signature) return 2;
    fputs(signature(), stdout);
    return fflush(stdout) == 0 ? 0 : 2;
  }
  if (strcmp(argv[2], "run") == 0 && argc == 4) return run(library, argv[3]);
  return fail("usage: onnxc_harness LIB.so signature | onnxc_harness LIB.so run MANIFEST", NULL);
}
