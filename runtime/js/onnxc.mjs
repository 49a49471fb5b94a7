// onnxc.mjs: run a model compiled with `onnxc model.onnx --target wasm32 -o model.wasm`
// in a browser or in node, on typed arrays.
//
//   import { loadModel } from "./onnxc.mjs";
//   const model = await loadModel("mnist.wasm");       // a URL, a path (node), bytes or a Response
//   console.log(model.inputs);                         // [{name, dtype, shape, dims?}, ...]
//   const { logits } = model.run({ input: new Float32Array(784) });
//   console.log(logits.data, logits.shape);             // Float32Array(10), [1, 10]
//
// The module is the C ABI of runtime/onnxc.h (docs/abi.md) compiled to
// WebAssembly: 32-bit pointers, so an onnxc_tensor is 24 bytes (data at 0,
// shape at 4, rank at 8, dtype at 16). This file places each tensor in the
// module's memory with its exported malloc, calls run_main_graph, and copies
// the outputs out. It needs nothing but the WebAssembly API (SIMD128 support:
// every current browser, node 16 and later) and imports nothing else in a browser.

export const ABI_VERSION = 3;

const TENSOR_BYTES = 24;
const STATUS_NAMES = [
  "ONNXC_OK",
  "ONNXC_ERR_ARITY: num_inputs or num_outputs differ from the model's",
  "ONNXC_ERR_NULL: a tensor, its data or its shape pointer is NULL",
  "ONNXC_ERR_DTYPE: a tensor's dtype differs from the signature",
  "ONNXC_ERR_RANK: a tensor's rank differs from the signature",
  "ONNXC_ERR_SHAPE: a dimension differs from the signature",
  "ONNXC_ERR_NOMEM: arena, scratch or output memory could not be allocated",
];

// Element type name (the signature's) -> [ONNX code, typed array holding it]. float16 and
// bfloat16 are their bits (Uint16Array); the low-precision types one byte per element.
export const DTYPES = {
  float32: [1, Float32Array],
  uint8: [2, Uint8Array],
  int8: [3, Int8Array],
  uint16: [4, Uint16Array],
  int16: [5, Int16Array],
  int32: [6, Int32Array],
  int64: [7, BigInt64Array],
  bool: [9, Uint8Array],
  float16: [10, Uint16Array],
  float64: [11, Float64Array],
  uint32: [12, Uint32Array],
  uint64: [13, BigUint64Array],
  bfloat16: [16, Uint16Array],
  float8_e4m3fn: [17, Uint8Array],
  float8_e4m3fnuz: [18, Uint8Array],
  float8_e5m2: [19, Uint8Array],
  float8_e5m2fnuz: [20, Uint8Array],
  uint4: [21, Uint8Array],
  int4: [22, Uint8Array],
  float4_e2m1fn: [23, Uint8Array],
  float8_e8m0fnu: [24, Uint8Array],
  uint2: [25, Uint8Array],
  int2: [26, Uint8Array],
};
const NAME_OF_CODE = Object.fromEntries(Object.entries(DTYPES).map(([name, [code]]) => [code, name]));

/** A run_main_graph status other than ONNXC_OK, or a tensor that does not fit the signature. */
export class OnnxcError extends Error {
  constructor(message, status = null) {
    super(message);
    this.name = "OnnxcError";
    this.status = status;
  }
}

const isNode = typeof process !== "undefined" && process.versions?.node !== undefined;

async function bytesOf(source) {
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return source;
  if (typeof Response !== "undefined" && source instanceof Response) return source.arrayBuffer();
  const text = source instanceof URL ? source.href : String(source);
  if (isNode && !/^(https?|data|blob):/.test(text)) {
    const { readFile } = await import("node:fs/promises");
    return readFile(source instanceof URL ? source : text);
  }
  const response = await fetch(source);
  if (!response.ok) throw new OnnxcError(`cannot fetch ${text}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

/** Compile and instantiate the module at `source`: a URL or path, an ArrayBuffer or typed
 * array of its bytes, a fetch Response, or a WebAssembly.Module. */
export async function loadModel(source) {
  const module = source instanceof WebAssembly.Module ? source : await WebAssembly.compile(await bytesOf(source));
  const instance = await WebAssembly.instantiate(module, {});
  return new OnnxcModel(instance);
}

const MAX_DIM = 2147483647; // ONNXC_MAX_DIM: the largest size a symbol may be bound to
const SYMBOL = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Symbol -> size: each symbol (a "dims" entry that is one name) bound by the first input having it. */
function bindSymbols(given) {
  const sizes = {};
  for (const { spec, shape } of given) {
    spec.dims?.forEach((entry, axis) => {
      if (!SYMBOL.test(entry) || entry in sizes) return;
      if (!(shape[axis] >= 0 && shape[axis] <= MAX_DIM)) {
        throw new OnnxcError(`input '${spec.name}': dim ${axis} (${entry}) is ${shape[axis]}, outside [0, ${MAX_DIM}]`);
      }
      sizes[entry] = shape[axis];
    });
  }
  return sizes;
}

/** The value of a signature's dim expression ("N*S", "(H - 3)//2 + 1": integers, symbols,
 * + - *, // floor division, min, max, parentheses) for the symbols' `sizes`. */
export function evaluateDim(expression, sizes) {
  const tokens = expression.match(/\d+|[A-Za-z_]\w*|\/\/|\S/g) ?? [];
  let at = 0;
  const fail = () => {
    throw new OnnxcError(`not a dim expression: '${expression}'`);
  };
  const take = (token) => (tokens[at] === token ? (++at, true) : false);
  const sum = () => {
    let value = product();
    for (;;) {
      if (take("+")) value += product();
      else if (take("-")) value -= product();
      else return value;
    }
  };
  const product = () => {
    let value = unary();
    for (;;) {
      if (take("*")) value *= unary();
      else if (take("//")) value = Math.floor(value / unary());
      else return value;
    }
  };
  const unary = () => (take("-") ? -unary() : atom());
  const atom = () => {
    const token = tokens[at++];
    if (token === "(") {
      const value = sum();
      return take(")") ? value : fail();
    }
    if (/^\d+$/.test(token)) return Number(token);
    if (token === "min" || token === "max") {
      if (!take("(")) fail();
      const values = [sum()];
      while (take(",")) values.push(sum());
      return take(")") ? Math[token](...values) : fail();
    }
    if (token !== undefined && SYMBOL.test(token)) {
      if (!(token in sizes)) throw new OnnxcError(`dim expression '${expression}': no input binds ${token}`);
      return sizes[token];
    }
    return fail();
  };
  const value = sum();
  return at === tokens.length ? value : fail();
}

export class OnnxcModel {
  constructor(instance) {
    const exports = instance.exports;
    for (const name of ["memory", "run_main_graph", "onnxc_signature", "onnxc_abi_version", "malloc", "free"]) {
      if (!(name in exports)) throw new OnnxcError(`not an onnxc WebAssembly module: no export ${name}`);
    }
    this.exports = exports;
    if (exports._initialize) exports._initialize(); // a WASI reactor: the C library's constructors
    const version = exports.onnxc_abi_version();
    if (version !== ABI_VERSION) {
      throw new OnnxcError(`the module has ABI version ${version}, this loader implements ${ABI_VERSION}`);
    }
    const signature = this.cString(exports.onnxc_signature());
    /** The signature (docs/abi.md): {abi_version, model, target, byte_order, inputs, outputs}. */
    this.signature = JSON.parse(signature);
    this.signatureText = signature;
    this.inputs = this.signature.inputs;
    this.outputs = this.signature.outputs;
    for (const spec of [...this.inputs, ...this.outputs]) {
      if (!(spec.dtype in DTYPES)) throw new OnnxcError(`'${spec.name}': ${spec.dtype} tensors are not supported by this loader yet`);
    }
  }

  get view() {
    return new DataView(this.exports.memory.buffer); // anew each time: malloc may grow the memory
  }

  cString(pointer) {
    const bytes = new Uint8Array(this.exports.memory.buffer, pointer);
    return new TextDecoder().decode(bytes.subarray(0, bytes.indexOf(0)));
  }

  /** Run on `feeds` ({name: typed array or {data, shape}}); returns {name: {data, shape, dtype}}.
   * A plain typed array takes the signature's shape; a model with symbolic dims needs {data, shape}. */
  run(feeds) {
    const given = this.inputs.map((spec) => {
      const feed = feeds[spec.name];
      if (feed === undefined) throw new OnnxcError(`missing input '${spec.name}'`);
      const [data, shape] = ArrayBuffer.isView(feed) ? [feed, spec.shape] : [feed.data, feed.shape];
      const Type = DTYPES[spec.dtype][1];
      if (!(data instanceof Type)) {
        const got = data?.constructor?.name;
        throw new OnnxcError(`input '${spec.name}': expected a ${Type.name} (${spec.dtype}), got ${got}`);
      }
      if (shape.length !== spec.shape.length) {
        throw new OnnxcError(`input '${spec.name}': expected rank ${spec.shape.length}, got ${shape.length}`);
      }
      return { spec, data, shape };
    });
    const sizes = bindSymbols(given);
    const shapeOf = (spec, dims) =>
      dims.map((dim, axis) => (spec.dims?.[axis] ? evaluateDim(spec.dims[axis], sizes) : dim));
    const inputs = given.map(({ spec, data, shape }) => {
      shapeOf(spec, spec.shape).forEach((want, axis) => {
        if (shape[axis] !== want) {
          throw new OnnxcError(`input '${spec.name}': dim ${axis} must be ${want}, got ${shape[axis]}`);
        }
      });
      const count = shape.reduce((a, b) => a * b, 1);
      if (data.length !== count) {
        throw new OnnxcError(`input '${spec.name}': ${data.length} elements for shape [${shape}] (${count})`);
      }
      const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      return { dtype: DTYPES[spec.dtype][0], shape, bytes };
    });
    const outputs = this.outputs.map((spec) => ({
      dtype: DTYPES[spec.dtype][0],
      shape: spec.dynamic ? null : shapeOf(spec, spec.shape),
      rank: spec.shape.length,
    }));
    const results = this.runTensors(inputs, outputs);
    return Object.fromEntries(
      this.outputs.map((spec, i) => {
        const Type = DTYPES[spec.dtype][1];
        const { bytes, shape } = results[i];
        const data = new Type(bytes.buffer, bytes.byteOffset, bytes.byteLength / Type.BYTES_PER_ELEMENT);
        return [spec.name, { data, shape, dtype: spec.dtype }];
      }),
    );
  }

  /** The ABI itself, without checks: `inputs` [{dtype (code), shape, bytes}], `outputs`
   * [{dtype, shape (null: dynamic), rank}], in signature order. Returns [{shape, bytes}] per
   * output (copies); throws OnnxcError with `status` if run_main_graph fails. */
  runTensors(inputs, outputs) {
    const e = this.exports;
    const blocks = [];
    const allocate = (bytes) => {
      const pointer = e.malloc(Math.max(bytes, 1)); // never NULL data, even for no elements
      if (pointer === 0) throw new OnnxcError(`cannot allocate ${bytes} bytes in the module's memory`, 6);
      blocks.push(pointer);
      return pointer;
    };
    const tensorArray = (tensors, fill) => {
      const base = allocate(tensors.length * TENSOR_BYTES);
      tensors.forEach((t, i) => fill(t, base + i * TENSOR_BYTES));
      return base;
    };
    const writeTensor = (at, t, data) => {
      const shape = allocate(8 * t.shape.length);
      t.shape.forEach((dim, axis) => this.view.setBigInt64(shape + 8 * axis, BigInt(dim), true));
      const view = this.view;
      view.setUint32(at, data, true);
      view.setUint32(at + 4, shape, true);
      view.setBigInt64(at + 8, BigInt(t.shape.length), true);
      view.setInt32(at + 16, t.dtype, true);
      view.setInt32(at + 20, 0, true);
    };
    const outputBytes = (t) =>
      t.shape.reduce((a, b) => a * b, 1) * DTYPES[NAME_OF_CODE[t.dtype]][1].BYTES_PER_ELEMENT;
    try {
      const inputBase = tensorArray(inputs, (t, at) => {
        const data = allocate(t.bytes.byteLength);
        new Uint8Array(e.memory.buffer, data, t.bytes.byteLength).set(t.bytes);
        writeTensor(at, t, data);
      });
      const outputBase = tensorArray(outputs, (t, at) => {
        if (t.shape === null) {
          new Uint8Array(e.memory.buffer, at, TENSOR_BYTES).fill(0); // written by the library
          this.view.setBigInt64(at + 8, BigInt(t.rank), true);
          this.view.setInt32(at + 16, t.dtype, true);
        } else {
          writeTensor(at, t, allocate(outputBytes(t)));
        }
      });
      const status = e.run_main_graph(inputBase, BigInt(inputs.length), outputBase, BigInt(outputs.length));
      if (status !== 0) {
        throw new OnnxcError(`run_main_graph returned ${status} (${STATUS_NAMES[status] ?? "unknown status"})`, status);
      }
      return outputs.map((t, i) => {
        const at = outputBase + i * TENSOR_BYTES;
        const view = this.view;
        const data = view.getUint32(at, true);
        const shapePointer = view.getUint32(at + 4, true);
        const rank = Number(view.getBigInt64(at + 8, true));
        const dim = (axis) => Number(view.getBigInt64(shapePointer + 8 * axis, true));
        const shape = Array.from({ length: rank }, (_, axis) => dim(axis));
        const bytes = new Uint8Array(e.memory.buffer, data, outputBytes({ ...t, shape })).slice();
        if (t.shape === null) e.onnxc_free_tensor(at);
        return { shape, bytes };
      });
    } finally {
      for (const pointer of blocks) e.free(pointer);
    }
  }
}
