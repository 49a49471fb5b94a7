"""Links after the first run zig's linker on the line `zig cc -v` printed (onnxc/codegen/direct_link.py)."""

from __future__ import annotations

import json

from helpers import parse
from test_codegen import FLOAT_MODEL, FLOAT_WEIGHT

from onnxc.codegen import emit_library, link
from onnxc.codegen.direct_link import record_command, recorded_command

FLAGS = ["-shared", "-lm"]
TARGET = "x86_64-linux-gnu.2.17"


def _verbose(tmp_path, inputs: list[str], output: str) -> str:
    """What `zig cc -v` prints: a glibc stub's link, then ours, with a library of zig's cache."""
    stub = tmp_path / "libc.so.6"
    stub.write_bytes(b"stub")
    return "\n".join([
        f"ld.lld -shared -o {stub} --soname libc.so.6",
        f"ar rcs {tmp_path}/libc_nonshared.a",
        f"ld.lld --error-limit=0 -shared -o {output} {' '.join(inputs)} {stub} --as-needed",
    ])  # fmt: skip


def test_line_recorded_with_placeholders_and_copies(tmp_path):
    cache = tmp_path / "cache"
    inputs, output = ["/work/a/model.o", "/work/a/weights.o", "/cache/support.o"], "/work/a/model.so"
    record_command(cache, TARGET, FLAGS, inputs, output, _verbose(tmp_path, inputs, output))
    (record,) = cache.iterdir()
    copy = record / "6-libc.so.6"  # zig rewrites its own in place on every zig cc run
    assert copy.read_bytes() == b"stub"
    assert json.loads((record / "line.json").read_text()) == [
        "ld.lld", "--error-limit=0", "-shared", "-o", "{output}", "{inputs}", str(copy), "--as-needed",
    ]  # fmt: skip
    (tmp_path / "libc.so.6").unlink()
    command = recorded_command(cache, TARGET, FLAGS, ["/b/model.o", "/s.o"], "/b/m.so")
    assert command == ["ld.lld", "--error-limit=0", "-shared", "-o", "/b/m.so", "/b/model.o", "/s.o",
                       str(copy), "--as-needed"]  # fmt: skip
    # Another target or other flags have no line yet.
    assert recorded_command(cache, "s390x-linux-gnu.2.17", FLAGS, inputs, output) is None
    assert recorded_command(cache, TARGET, ["-shared"], inputs, output) is None


def test_no_line_used_when_stale_or_not_understood(tmp_path):
    cache = tmp_path / "cache"
    inputs, output = ["/w/model.o", "/c/support.o"], "/w/model.so"
    # wasm32's weights are assembly, which zig cc assembles first: never linked directly.
    record_command(cache, TARGET, FLAGS, ["/w/model.o", "/w/weights.s"], output, _verbose(tmp_path, inputs, output))
    assert not cache.exists()
    # A line without our inputs is not ours.
    record_command(cache, TARGET, FLAGS, inputs, output, _verbose(tmp_path, ["/other.o"], output))
    assert not cache.exists()
    record_command(cache, TARGET, FLAGS, inputs, output, _verbose(tmp_path, inputs, output))
    assert recorded_command(cache, TARGET, FLAGS, inputs, output) is not None
    assert recorded_command(cache, TARGET, FLAGS, ["/w/model.o", "/w/weights.s"], output) is None
    (record,) = cache.iterdir()
    (record / "6-libc.so.6").unlink()  # the cache directory was cleaned
    assert recorded_command(cache, TARGET, FLAGS, inputs, output) is None
    (record / "line.json").write_text("{not json")
    assert recorded_command(cache, TARGET, FLAGS, inputs, output) is None


def test_direct_link_writes_the_same_library(tmp_path, monkeypatch):
    """The first link goes through zig cc and records its line; the second runs ld.lld on it;
    after the record is damaged, the third goes through zig cc again and records anew."""
    monkeypatch.setattr(link, "cache_directory", lambda: tmp_path / "cache")
    commands = []
    original = link.recorded_command
    monkeypatch.setattr(link, "recorded_command", lambda *args: commands.append(original(*args)) or commands[-1])
    module = parse(FLOAT_MODEL, w=FLOAT_WEIGHT)
    emit_library(module, tmp_path / "first.so")
    (record,) = (tmp_path / "cache").glob("link-*")
    assert json.loads((record / "line.json").read_text())[0] == "ld.lld"
    emit_library(module, tmp_path / "second.so")
    assert commands[0] is None and commands[1][0] == "ld.lld"
    assert (tmp_path / "first.so").read_bytes() == (tmp_path / "second.so").read_bytes()
    archives = list(record.glob("*.a"))  # libcompiler_rt.a, libc_nonshared.a...
    assert archives
    for copy in archives:
        copy.write_bytes(b"not an archive")
    emit_library(module, tmp_path / "third.so")
    assert (tmp_path / "third.so").read_bytes() == (tmp_path / "first.so").read_bytes()
    assert all(copy.read_bytes().startswith(b"!<arch>") for copy in record.glob("*.a"))
