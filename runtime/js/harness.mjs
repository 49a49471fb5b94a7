// harness.mjs: runtime/harness/onnxc_harness.c for WebAssembly modules, run by node.
//
// onnxc.tools.emulation runs a wasm32 module through this script exactly as it runs
// a foreign ELF library through the C harness under qemu, with the same commands,
// manifest and exit statuses (see onnxc_harness.c):
//
//   node harness.mjs MODEL.wasm signature        print the signature on stdout
//   node harness.mjs MODEL.wasm run MANIFEST     run the model as the manifest says
//
// Exit status: 0 success, 2 usage or I/O error, 3 run_main_graph failed (its status
// is printed on stderr as "run_main_graph returned S").
import { readFileSync, writeFileSync } from "node:fs";

import { loadModel, OnnxcError } from "./onnxc.mjs";

const USAGE = "usage: node harness.mjs MODEL.wasm signature | node harness.mjs MODEL.wasm run MANIFEST";

function fail(message) {
  process.stderr.write(`onnxc harness.mjs: ${message}\n`);
  process.exit(2);
}

/** The manifest's tensors: [inputs, outputs, repeat]. */
function parseManifest(path) {
  const inputs = [];
  const outputs = [];
  let repeat = 1;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line === "") continue;
    const [kind, ...fields] = line.split(" ");
    if (kind === "repeat") {
      repeat = Math.max(1, Number(fields[0]));
      continue;
    }
    const [dtype, nbytes, rank] = fields.slice(0, 3).map(Number);
    if (kind === "dynamic") {
      outputs.push({ dtype, shape: null, rank, path: fields.slice(3).join(" ") });
      continue;
    }
    if (kind !== "input" && kind !== "output") fail(`bad manifest line: ${line}`);
    const shape = fields.slice(3, 3 + rank).map(Number);
    const tensor = { dtype, shape, rank, nbytes, path: fields.slice(3 + rank).join(" ") };
    if (kind === "input") {
      tensor.bytes = readFileSync(tensor.path);
      if (tensor.bytes.byteLength !== nbytes) fail(`input file does not have the manifest's size: ${tensor.path}`);
      inputs.push(tensor);
    } else {
      outputs.push(tensor);
    }
  }
  return [inputs, outputs, repeat];
}

const [modelPath, command, manifestPath, ...rest] = process.argv.slice(2);
if (!modelPath || rest.length || !(command === "signature" ? !manifestPath : command === "run" && manifestPath)) {
  fail(USAGE);
}
let model;
try {
  model = await loadModel(modelPath);
} catch (error) {
  fail(`cannot load ${modelPath}: ${error.message}`);
}
if (command === "signature") {
  process.stdout.write(model.signatureText);
} else {
  const [inputs, outputs, repeat] = parseManifest(manifestPath);
  let results;
  for (let r = 0; r < repeat; ++r) {
    const start = process.hrtime.bigint();
    try {
      results = model.runTensors(inputs, outputs);
    } catch (error) {
      if (!(error instanceof OnnxcError) || error.status === null) throw error;
      process.stderr.write(`run_main_graph returned ${error.status}\n`);
      process.exit(3);
    }
    process.stdout.write(`latency_ns ${process.hrtime.bigint() - start}\n`);
  }
  outputs.forEach((t, i) => {
    writeFileSync(t.path, results[i].bytes);
    if (t.shape === null) writeFileSync(`${t.path}.shape`, results[i].shape.map((d) => `${d} `).join(""));
  });
}
