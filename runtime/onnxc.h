/* onnxc.h: the C ABI of a library compiled by onnxc (ABI version 3).
 *
 * A library exports the functions below. Any number of threads may call
 * run_main_graph at once (each call allocates its own scratch memory and
 * frees it before returning); inside a call, parallel loops run on the
 * library's thread pool (see onnxc_set_num_threads).
 */
#ifndef ONNXC_H
#define ONNXC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ONNXC_ABI_VERSION 3

/* The largest size a symbolic dim may be bound to (the smallest is 0: empty tensors). */
#define ONNXC_MAX_DIM 2147483647

/* One tensor: contiguous, row-major, in the target's byte order. */
typedef struct onnxc_tensor {
  void *data;            /* first element */
  const int64_t *shape;  /* `rank` dimensions */
  int64_t rank;
  int32_t dtype;         /* ONNX TensorProto.DataType code (1 = float32, 7 = int64, ...;
                            see ONNXC_DTYPE_* and docs/abi.md for each type's layout) */
  int32_t reserved;      /* set to 0 */
} onnxc_tensor;          /* 32 bytes on every 64-bit target */

/* One element of a string tensor (ONNXC_DTYPE_STRING): `size` bytes of UTF-8 at
 * `data` (no NUL needed; `data` may be NULL when `size` is 0). An input's bytes
 * are only read, during the call. A string output is always library-allocated
 * ("dynamic": true): one block of shape, elements and their bytes, released
 * with onnxc_free_tensor. */
typedef struct onnxc_string {
  const char *data;
  int64_t size;
} onnxc_string;          /* 16 bytes (8-byte aligned on wasm32 too) */

/* Element type codes (ONNX TensorProto.DataType) a library may use, with their
 * sizes: float32 4, uint8 1, int8 1, uint16 2, int16 2, int32 4, int64 8, bool 1
 * (0 or 1), float16 2, float64 8, uint32 4, uint64 8, bfloat16 2 (the upper half
 * of a float). The low-precision types 17..26 take ONE BYTE PER ELEMENT (the
 * ml_dtypes layout, also for the 4-bit and 2-bit types ONNX files pack): the
 * value's bits in the low bits of the byte, the upper bits 0. */
enum onnxc_dtype {
  ONNXC_DTYPE_FLOAT = 1,
  ONNXC_DTYPE_UINT8 = 2,
  ONNXC_DTYPE_INT8 = 3,
  ONNXC_DTYPE_UINT16 = 4,
  ONNXC_DTYPE_INT16 = 5,
  ONNXC_DTYPE_INT32 = 6,
  ONNXC_DTYPE_INT64 = 7,
  ONNXC_DTYPE_STRING = 8,          /* onnxc_string elements */
  ONNXC_DTYPE_BOOL = 9,
  ONNXC_DTYPE_FLOAT16 = 10,
  ONNXC_DTYPE_DOUBLE = 11,
  ONNXC_DTYPE_UINT32 = 12,
  ONNXC_DTYPE_UINT64 = 13,
  ONNXC_DTYPE_BFLOAT16 = 16,
  ONNXC_DTYPE_FLOAT8E4M3FN = 17,   /* no infinity; NaN is S.1111.111 */
  ONNXC_DTYPE_FLOAT8E4M3FNUZ = 18, /* bias 8; no infinity, no -0; NaN is 0x80 */
  ONNXC_DTYPE_FLOAT8E5M2 = 19,     /* the upper byte of a float16 */
  ONNXC_DTYPE_FLOAT8E5M2FNUZ = 20, /* bias 16; no infinity, no -0; NaN is 0x80 */
  ONNXC_DTYPE_UINT4 = 21,          /* 0..15 in bits 0-3 */
  ONNXC_DTYPE_INT4 = 22,           /* -8..7 in bits 0-3, two's complement (-1 is 0x0F) */
  ONNXC_DTYPE_FLOAT4E2M1 = 23,     /* S.EE.M in bits 0-3; no infinity, no NaN */
  ONNXC_DTYPE_FLOAT8E8M0 = 24,     /* 2^(byte - 127); 0xFF is NaN */
  ONNXC_DTYPE_UINT2 = 25,          /* 0..3 in bits 0-1 */
  ONNXC_DTYPE_INT2 = 26            /* -2..1 in bits 0-1, two's complement (-1 is 0x03) */
};

/* Return codes of run_main_graph. */
enum onnxc_status {
  ONNXC_OK = 0,
  ONNXC_ERR_ARITY = 1,   /* num_inputs or num_outputs differ from the model's */
  ONNXC_ERR_NULL = 2,    /* a tensor, its data or its shape pointer is NULL */
  ONNXC_ERR_DTYPE = 3,   /* a tensor's dtype differs from the signature */
  ONNXC_ERR_RANK = 4,    /* a tensor's rank differs from the signature */
  ONNXC_ERR_SHAPE = 5,   /* a dimension differs from the signature */
  ONNXC_ERR_NOMEM = 6,   /* arena, scratch or output memory could not be allocated */
  ONNXC_ERR_INDEX = 7    /* an index read from an input is outside its dim; status >> 8 is
                            1 + the node's place in the signature's "index_sites" */
};

/* Symbolic dims (ABI version 3): a dim given as -1 with an entry in "dims" is
 * chosen by the caller. An entry that is one name (a symbol: "N", "S") is
 * bound by the first input having it, to a size in [0, ONNXC_MAX_DIM]; any
 * other entry is an integer expression over symbols ("N*S", "(S - 3)//2 + 1":
 * + - * // min max, Python's semantics), and every symbolic dim of every
 * tensor, outputs included, must equal its expression's value: the caller
 * allocates an output of [-1, -1, 768] with dims ["N", "S", ""] as
 * N x S x 768 for the N and S of its inputs (ONNXC_ERR_SHAPE otherwise).
 *
 * Run the model. Inputs are read. A static output (the signature gives all
 * its dims) must point at a caller-allocated buffer of its shape and dtype,
 * which is written; every such tensor is checked against the signature
 * before anything is read.
 *
 * A dynamic output ("dynamic": true in the signature: some dims, given as -1,
 * depend on input values, as for NonZero or Unique) is allocated by the
 * library: its onnxc_tensor is only written (data, shape, rank, dtype,
 * reserved). On ONNXC_OK the caller owns it and must release it with
 * onnxc_free_tensor; on any other status its data and shape are NULL and
 * nothing needs freeing. */
int32_t run_main_graph(const onnxc_tensor *inputs, int64_t num_inputs,
                       onnxc_tensor *outputs, int64_t num_outputs);

/* Release a dynamic output filled by run_main_graph (its data and shape,
 * one block from the library's allocator) and set both pointers to NULL.
 * NULL, or a tensor released before, is a no-op. Never call free() on them. */
void onnxc_free_tensor(onnxc_tensor *tensor);

/* The model's signature as a NUL-terminated JSON document (static storage):
 * {"abi_version": 3, "model": "...", "target": "<llvm triple>",
 *  "byte_order": "little" | "big",
 *  "inputs":  [{"name": "...", "dtype": "float32", "shape": [-1, 3, 224, 224],
 *               "dims": ["N", "", "", ""]}, ...],
 *  "outputs": [{"name": "...", "dtype": "float32", "shape": [1, 1000]},
 *              {"name": "...", "dtype": "int64", "shape": [2, -1], "dynamic": true}, ...]} */
const char *onnxc_signature(void);

/* ONNXC_ABI_VERSION of the library. */
int32_t onnxc_abi_version(void);

/* Threads used by the library's parallel loops, the calling thread included;
 * returns the value now in effect. threads < 1 restores the default: the
 * environment variable ONNXC_NUM_THREADS, else the number of CPUs the process
 * may run on (at most 64). Per loaded library; may be changed at any time.
 * Results do not depend on it. A call that finds the pool busy (another
 * thread inside run_main_graph) runs on its own thread. */
int32_t onnxc_set_num_threads(int32_t threads);
int32_t onnxc_get_num_threads(void);

/* Libraries built with `onnxc --profile` only (docs/abi.md, "Profiling"): one
 * kernel call of the calling thread's latest run_main_graph call; the
 * signature's "profile" entry names each kernel's ONNX nodes. */
typedef struct onnxc_profile_event {
  int64_t start_ns;     /* CLOCK_MONOTONIC */
  int64_t duration_ns;  /* wall time on the calling thread */
  int32_t kernel;       /* index into the signature's profile.kernels */
  int32_t reserved;
} onnxc_profile_event;

/* Set *events to the calling thread's events of its latest run_main_graph call
 * (valid until its next call) and return their count. */
int64_t onnxc_profile_events(const onnxc_profile_event **events);

#ifdef __cplusplus
}
#endif

#endif /* ONNXC_H */
