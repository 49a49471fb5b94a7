"""The ONNX backend node-test suite, run against onnxc.

    python -m onnxc.tools.conformance [-k REGEX] [--jobs N] [--check | --update] [--docs]

`onnx.backend.test.case.node.collect_testcases` builds the suite's test cases
in memory (each a model, its inputs and expected outputs). Every case is
compiled and run through `onnxc.backend` in a pool of worker processes, so a
crash or hang in one case is recorded against that case (and the worker
restarted) instead of ending the run. Outputs are compared with the suite's
own comparison and tolerances.

Results are kept in a committed expectation file, one line per case:
`name<TAB>STATUS<TAB>reason`. STATUS is PASS, or for a case that does not pass:
UNSUPPORTED (a typed compile-time refusal), WRONG (ran, gave other numbers),
ERROR (any other exception), CRASH or TIMEOUT. `--check` fails when a case's
status differs from the file in either direction (a regression, or a fix not
yet recorded); `--update` rewrites the file; `--docs` regenerates
docs/supported-ops.md from the file: after the run with `--check`, `--update`
or `-k`, alone from the recorded results without running any case.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import subprocess
import sys
import threading
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXPECTATIONS = ROOT / "tests" / "conformance" / "expected.txt"
DYNAMIC_EXPECTATIONS = ROOT / "tests" / "conformance" / "expected-dynamic.txt"
"""Results with every graph-input dim made symbolic (`--force-dynamic`), as onnx-mlir runs its node tests."""
SUPPORTED_OPS_DOC = ROOT / "docs" / "supported-ops.md"
LOWERING_LIT_TESTS = ROOT / "tests" / "lit" / "convert-onnx-to-krnl"
DEFAULT_TIMEOUT = 180.0
PASS = "PASS"
STATUSES = (PASS, "UNSUPPORTED", "WRONG", "ERROR", "CRASH", "TIMEOUT")


@dataclass(frozen=True)
class Result:
    name: str
    status: str
    reason: str = ""

    def line(self) -> str:
        return f"{self.name}\t{self.status}\t{self.reason}".rstrip("\t")


# ----------------------------------------------------------------------------- the suite


def all_cases() -> dict:
    """name -> TestCase of every node test, in the suite's order."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators overflow on purpose (Cast tests)
        return {case.name: case for case in collect_testcases("")}


def with_symbolic_inputs(model):
    """The model with every dim of its graph inputs (initializers aside) a fresh symbol."""
    import onnx

    symbolic = onnx.ModelProto()
    symbolic.CopyFrom(model)
    initializers = {tensor.name for tensor in symbolic.graph.initializer}
    for position, value in enumerate(symbolic.graph.input):
        if value.name in initializers or not value.type.HasField("tensor_type"):
            continue
        for axis, dim in enumerate(value.type.tensor_type.shape.dim):
            dim.Clear()
            dim.dim_param = f"in{position}_d{axis}"
    return symbolic


def run_case(case, force_dynamic: bool = False) -> Result:
    """Compile and run one case in this process (with `force_dynamic`, once for
    the symbolic version of its inputs, see with_symbolic_inputs)."""
    from onnx.backend.test.runner import Runner

    from onnxc.backend import as_array, prepare
    from onnxc.errors import UnsupportedOpError

    try:
        rep = prepare(with_symbolic_inputs(case.model), pin_shapes=False) if force_dynamic else prepare(case.model)
        for inputs, expected in case.data_sets:
            outputs = rep.run(inputs)
            expected = [as_array(value) for value in expected]
            try:
                expected, outputs = _flatten_sequences(expected, outputs)
                Runner.assert_similar_outputs(expected, outputs, rtol=case.rtol, atol=case.atol)
            except AssertionError as exc:
                return Result(case.name, "WRONG", _first_line(str(exc).strip()))
    except UnsupportedOpError as exc:
        return Result(case.name, "UNSUPPORTED", _first_line(str(exc)))
    except Exception as exc:  # recorded per case: the runner's job is to report, not to stop
        return Result(case.name, "ERROR", _first_line(f"{type(exc).__name__}: {exc}"))
    return Result(case.name, PASS)


def _flatten_sequences(expected: list, outputs: list) -> tuple[list, list]:
    """Both output lists with each sequence output replaced by its items, compared one by
    one (the suite's comparison treats an item as a list of outputs: 0-d items fail)."""
    flat_expected, flat_outputs = [], []
    for index, (reference, value) in enumerate(zip(expected, outputs)):
        if isinstance(reference, list) or isinstance(value, list):
            if not (isinstance(reference, list) and isinstance(value, list) and len(reference) == len(value)):
                want = f"a sequence of {len(reference)}" if isinstance(reference, list) else "a tensor"
                got = f"a sequence of {len(value)}" if isinstance(value, list) else "a tensor"
                raise AssertionError(f"output {index}: expected {want}, got {got}")
            flat_expected.extend(reference)
            flat_outputs.extend(value)
        else:
            flat_expected.append(reference)
            flat_outputs.append(value)
    if len(expected) != len(outputs):
        raise AssertionError(f"expected {len(expected)} outputs, got {len(outputs)}")
    return flat_expected, flat_outputs


def _first_line(text: str, limit: int = 200) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    line = line.replace("\t", " ")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _worker(force_dynamic: bool) -> int:
    """Worker process: reads case names from stdin, writes one JSON result per line."""
    cases = all_cases()
    print("ready", flush=True)
    for line in sys.stdin:
        name = line.strip()
        result = run_case(cases[name], force_dynamic)
        print(json.dumps(result.__dict__), flush=True)
    return 0


# ------------------------------------------------------------------------------- the pool


WORKER_COMMAND = (sys.executable, "-m", "onnxc.tools.conformance", "--worker")


class _Worker:
    """One worker process, restarted after a crash or a timeout."""

    def __init__(self, command: Sequence[str], env: dict[str, str]):
        self.command = list(command)
        self.env = env
        self.process: subprocess.Popen | None = None

    def run(self, name: str, timeout: float) -> Result:
        if self.process is None or self.process.poll() is not None:
            self._start()
        assert self.process and self.process.stdin
        self.process.stdin.write(name + "\n")
        self.process.stdin.flush()
        line = self._read_line(timeout)
        if line is None:
            self.stop()
            return Result(name, "TIMEOUT", f"no result after {timeout:.0f} s")
        if not line:
            code = self.process.wait()
            self.process = None
            return Result(name, "CRASH", f"worker died with exit status {code}")
        return Result(**json.loads(line))

    def _start(self) -> None:
        self.process = subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=self.env,
        )
        if self._read_line(600) != "ready":
            raise RuntimeError("a conformance worker failed to start")

    def _read_line(self, timeout: float) -> str | None:
        """The next line ("" at end of file), or None after `timeout` seconds."""
        assert self.process and self.process.stdout
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready:
            return None
        return self.process.stdout.readline().strip()

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


def run_cases(
    names: Sequence[str],
    jobs: int = 2,
    timeout: float = DEFAULT_TIMEOUT,
    on_result: Callable[[Result], None] | None = None,
    command: Sequence[str] = WORKER_COMMAND,
) -> dict[str, Result]:
    """Run the named cases on `jobs` worker processes (`command` speaks the
    worker protocol: "ready", then one JSON result line per name); name -> Result."""
    env = dict(os.environ)
    env.setdefault("ONNXC_NUM_THREADS", "1")  # the pool provides the parallelism
    pending = list(reversed(names))
    results: dict[str, Result] = {}
    lock = threading.Lock()

    def drain() -> None:
        worker = _Worker(command, env)
        try:
            while True:
                with lock:
                    if not pending:
                        return
                    name = pending.pop()
                result = worker.run(name, timeout)
                with lock:
                    results[name] = result
                    if on_result:
                        on_result(result)
        finally:
            worker.stop()

    threads = [threading.Thread(target=drain) for _ in range(max(1, min(jobs, len(names))))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


# ------------------------------------------------------------------------ expectations


def read_expectations(path: Path = EXPECTATIONS) -> dict[str, Result]:
    expected = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            name, status, *reason = line.split("\t")
            expected[name] = Result(name, status, reason[0] if reason else "")
    return expected


def write_expectations(results: Iterable[Result], path: Path = EXPECTATIONS) -> None:
    results = sorted(results, key=lambda r: r.name)
    # No totals in the header: branches that each update their own ops' lines then merge cleanly.
    header = (
        "# ONNX backend node tests under onnxc: name<TAB>status<TAB>reason.\n"
        "# Regenerate with `python -m onnxc.tools.conformance --update`; the totals are in docs/supported-ops.md.\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + "".join(r.line() + "\n" for r in results))


def differences(results: dict[str, Result], expected: dict[str, Result]) -> list[str]:
    """Cases whose pass/fail outcome differs from the expectation file."""
    problems = []
    for name, result in sorted(results.items()):
        want = expected.get(name)
        if want is None:
            problems.append(f"{name}: {result.status}, but the expectation file does not list it")
        elif (want.status == PASS) != (result.status == PASS):
            kind = "regression" if want.status == PASS else "now passes (update the expectation file)"
            problems.append(f"{name}: {kind}: expected {want.status}, got {result.status} {result.reason}".rstrip())
    return problems


# -------------------------------------------------------------------------------- docs


def _op_of_case(case, cases: dict) -> tuple[str, str]:
    """The op a case tests, (op type, domain): its single node's op, or for an
    `_expanded` case (the op's function body) the op of the case it expands."""
    base = re.sub(r"_expanded(_ver\d+)?$", "", case.name)
    if base != case.name and base in cases:
        return _op_of_case(cases[base], cases)
    counts = Counter((n.op_type, n.domain) for n in case.model.graph.node if n.op_type != "Constant")
    return counts.most_common(1)[0][0] if counts else ("Constant", "")


def _dtypes_of_case(case) -> set[str]:
    import onnx
    from onnx import helper

    names = set()
    for value in list(case.model.graph.input) + list(case.model.graph.output):
        if value.type.HasField("tensor_type"):
            elem_type = value.type.tensor_type.elem_type
            names.add(
                "string" if elem_type == onnx.TensorProto.STRING else helper.tensor_dtype_to_np_dtype(elem_type).name
            )
    return names


def _opset_of_case(case, domain: str) -> int:
    """The case's opset of `domain` (ai.onnx for "")."""
    names = {domain, "ai.onnx"} if domain in ("", "ai.onnx") else {domain}
    return next((o.version for o in case.model.opset_import if (o.domain or "") in names), 0)


def supported_ops_markdown(expected: dict[str, Result], cases: dict) -> str:
    """docs/supported-ops.md: per op, passing tests, opsets and dtypes seen passing,
    limitations, the file that compiles it and the lit test of its lowering."""
    from onnxc.tools.support import op_support

    by_op: dict[tuple[str, str], list] = defaultdict(list)
    for name, case in cases.items():
        by_op[_op_of_case(case, cases)].append(case)
    total = sum(1 for n in cases if n in expected)
    passed = sum(1 for n in cases if n in expected and expected[n].status == PASS)
    lit_tests = {path: path.read_text() for path in sorted(LOWERING_LIT_TESTS.glob("*.mlir"))}
    lit_texts = {path: text for path, text in lit_tests.items() if "RUN: not " not in text}  # not refusals
    lines = [
        "# Supported ONNX operators",
        "",
        f"**{passed} of {total}** ONNX backend node tests pass (onnx {_onnx_version()}), "
        "measured by `python -m onnxc.tools.conformance --check`; this file is generated by "
        "`python -m onnxc.tools.conformance --docs` from `tests/conformance/expected.txt`.",
        "",
        "An op listed with 0 passing tests is not supported: compiling it fails with an error naming "
        "the node, op and opset. Opsets and dtypes are those of the passing tests. *Compiled by* is the "
        "file that lowers the op to krnl, or that decomposes, inlines or rewrites it into ops that are "
        "lowered (`onnxc.tools.support.op_support` says which); *lit test* is the "
        "`convert-onnx-to-krnl` test of its lowering.",
        "",
        "| op | tests passing | opsets | dtypes | limitations (why other tests fail) | compiled by | lit test |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for op, domain in sorted(by_op):
        op_cases = by_op[(op, domain)]
        good = [c for c in op_cases if expected.get(c.name, Result(c.name, "")).status == PASS]
        opsets = sorted({_opset_of_case(c, domain) for c in good})
        types = sorted(set().union(*(_dtypes_of_case(c) for c in good))) if good else []
        reasons = Counter(
            _plain_reason(expected[c.name]) for c in op_cases if c.name in expected and expected[c.name].status != PASS
        )
        limits = "; ".join(f"{reason} ({count})" for reason, count in reasons.most_common(3))
        source = op_support(op, domain, max(_opset_of_case(c, domain) for c in op_cases) or None).source
        lit_test = _lit_test(op, source, lit_texts) if source else None
        lines.append(
            f"| {op} | {len(good)}/{len(op_cases)} | {', '.join(map(str, opsets))} | "
            f"{', '.join(types)} | {limits.replace('|', '/')} | {_doc_link(source and ROOT / source)} | "
            f"{_doc_link(lit_test)} |"
        )
    return "\n".join(lines + _microsoft_ops_markdown()) + "\n"


def _microsoft_ops_markdown() -> list[str]:
    """The com.microsoft section: the contrib ops of onnxruntime's quantizer the importer
    expands, and the Tokenizer fused into a TfIdfVectorizer."""
    from onnxc.frontend.microsoft import EXPANSIONS, MICROSOFT_DOMAIN

    lines = [
        "",
        f"## {MICROSOFT_DOMAIN}",
        "",
        "The onnxruntime contrib ops that `onnxruntime.quantization` emits in QOperator models, "
        "imported as their float op between DequantizeLinear and QuantizeLinear "
        "([microsoft.py](../onnxc/frontend/microsoft.py)); `fuse-qdq` then gives them integer kernels "
        "where it applies. Results agree with onnxruntime to within one quantization step (onnxruntime "
        "computes some with float lookup tables or scale ratios). Any other op of the domain is refused "
        "with an error naming the domain, node and op. Tested against onnxruntime in "
        "[test_microsoft_ops.py](../tests/test_microsoft_ops.py).",
        "",
        "| op | imported as |",
        "| --- | --- |",
    ]
    lines += [f"| {op} | {becomes} |" for op, (_, becomes) in sorted(EXPANSIONS.items())]
    return lines + [
        "",
        "`Tokenizer` (of skl2onnx's text vectorizers) is compiled as the input of a TfIdfVectorizer, "
        "through Flatten or not: [fuse_tokenizer.py](../passes/fuse_tokenizer.py) fuses it, and a "
        "StringNormalizer without stopwords before it, into that op "
        "([tokenize.py](../passes/onnx_to_krnl/tokenize.py)). Forms: `tokenexp` one character class "
        "repeated (`[a-zA-Z0-9_]+`, `\\w+`, `[^...]+`; ASCII items), or `separators` of one ASCII "
        "character each; `mark`, `mincharnum` and `pad_value` as onnxruntime. Any other form, or a "
        "Tokenizer feeding another op, is refused naming the node. Tested against onnxruntime in "
        "[test_tokenizer.py](../tests/test_tokenizer.py).",
    ]


def _lit_test(op: str, source: str, texts: dict[Path, str]) -> Path | None:
    """The lit test that lowers `op`: of those naming it, the one named after its lowering
    file (elementwise.py: elementwise.mlir), else the one naming it most often."""
    mentions = {path: text.count(f'"onnx.{op}"') for path, text in texts.items()}
    named_after = Path(source).stem.replace("_", "-")
    ranked = sorted(
        (path for path, count in mentions.items() if count),
        key=lambda path: (path.stem != named_after, -mentions[path], path.name),
    )
    return ranked[0] if ranked else None


def _doc_link(path: Path | None) -> str:
    """A link from docs/ to a file of the repository, or "—"."""
    return f"[{path.name}]({Path('..', path.relative_to(ROOT)).as_posix()})" if path else "—"


def _plain_reason(result: Result) -> str:
    """A failure reason without per-model detail (names, numbers), so that equal causes group."""
    reason = re.sub(r"\(model [^)]*\)|node '[^']*'|'[^']*'", "", result.reason)
    reason = re.sub(r"\s+", " ", reason).strip(" :,")
    return f"{result.status.lower()}: {reason[:90]}" if reason else result.status.lower()


def _onnx_version() -> str:
    import onnx

    return onnx.__version__


# --------------------------------------------------------------------------------- CLI


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m onnxc.tools.conformance", description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", "--filter", help="only cases whose name matches this regular expression")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per case")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="fail if results differ from the expectation file")
    mode.add_argument("--update", action="store_true", help="record the results in the expectation file")
    parser.add_argument(
        "--docs",
        action="store_true",
        help="regenerate docs/supported-ops.md from the expectation file (alone: without running any case)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print every case, not only failures")
    parser.add_argument(
        "--force-dynamic",
        action="store_true",
        help=f"make every graph-input dim symbolic, one compile per case (expectations: {DYNAMIC_EXPECTATIONS.name})",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return _worker(args.force_dynamic)

    cases = all_cases()
    names = [n for n in cases if not args.filter or re.search(args.filter, n)]
    run = args.check or args.update or args.filter or not args.docs
    status = _run_and_report(names, args) if run and names else 0
    if args.docs:
        SUPPORTED_OPS_DOC.write_text(supported_ops_markdown(read_expectations(), cases))
        print(f"wrote {SUPPORTED_OPS_DOC}")
    return status


def _run_and_report(names: list[str], args) -> int:
    start = time.perf_counter()

    def report(result: Result) -> None:
        if args.verbose or result.status != PASS:
            print(f"{result.status:<11} {result.name}  {result.reason}", flush=True)

    command = (*WORKER_COMMAND, "--force-dynamic") if args.force_dynamic else WORKER_COMMAND
    expectations = DYNAMIC_EXPECTATIONS if args.force_dynamic else EXPECTATIONS
    results = run_cases(names, jobs=args.jobs, timeout=args.timeout, on_result=report, command=command)
    counts = Counter(r.status for r in results.values())
    summary = ", ".join(f"{counts[s]} {s.lower()}" for s in STATUSES if counts[s])
    print(f"{counts[PASS]} of {len(results)} pass ({summary}) in {time.perf_counter() - start:.0f} s")
    if args.update:
        merged = read_expectations(expectations) if expectations.exists() else {}
        merged.update(results)
        write_expectations(merged.values(), expectations)
        print(f"wrote {expectations}")
    if args.check:
        problems = differences(results, read_expectations(expectations))
        for problem in problems:
            print(problem)
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
