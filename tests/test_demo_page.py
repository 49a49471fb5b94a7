"""The draw-a-digit page (onnxc/examples/web) in headless Chromium: draw digits with the mouse, read the answers.

The page, the JavaScript loader and digits.wasm are served from a temporary
directory on localhost; Chromium runs headless and is driven over the Chrome
DevTools protocol on a pipe (`--remote-debugging-pipe`: NUL-separated JSON on
file descriptors 3 and 4, so no WebSocket client is needed). Mouse events go
through the page's own pointer handlers, as a user's would.

Skips only when Chromium is missing locally; under CI (`CI` set) it fails,
since .ci/run installs Debian's `chromium`.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import shutil
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from test_cross import assert_same_outputs

import onnxc
from onnxc.examples.digits import MODEL_PATH
from onnxc.examples.digits_web import site_server, write_site

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium() -> str:
    for name in CHROMIUM_NAMES:
        if path := shutil.which(name):
            return path
    if os.environ.get("CI"):
        pytest.fail("CI must install Chromium (apt-get install -y chromium)")
    pytest.skip("Chromium is not installed (apt-get install -y chromium)")


_ON_FDS_3_AND_4 = """import os, sys
os.dup2(int(sys.argv[1]), 3)
os.dup2(int(sys.argv[2]), 4)
os.execv(sys.argv[3], sys.argv[3:])"""
"""Run argv[3:] with file descriptors argv[1] and argv[2] as its 3 and 4 (where Chromium's pipe is)."""


def _pipe_above_4() -> tuple[int, int]:
    ends = []
    for end in os.pipe():
        ends.append(fcntl.fcntl(end, fcntl.F_DUPFD_CLOEXEC, 5))
        os.close(end)
    return ends[0], ends[1]


class DevTools:
    """A Chrome DevTools protocol client over Chromium's --remote-debugging-pipe."""

    def __init__(self, browser: str, profile: str):
        # The child's ends, numbered above 4 so that moving them to 3 and 4 clobbers neither.
        commands_read, self._commands = _pipe_above_4()
        self._replies, replies_write = _pipe_above_4()
        flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-pipe",
                 f"--user-data-dir={profile}", "about:blank"]  # fmt: skip
        self.process = subprocess.Popen(
            [sys.executable, "-c", _ON_FDS_3_AND_4, str(commands_read), str(replies_write), browser, *flags],
            pass_fds=(commands_read, replies_write),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(commands_read)
        os.close(replies_write)
        self._buffer = b""
        self._next_id = 0

    def call(self, method: str, session: str | None = None, **params) -> dict:
        """Send a command; its result (events in between are dropped)."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self._buffer:
                chunk = os.read(self._replies, 1 << 16)
                if not chunk:
                    raise RuntimeError(f"Chromium closed the DevTools pipe during {method}")
                self._buffer += chunk
            text, self._buffer = self._buffer.split(b"\0", 1)
            reply = json.loads(text)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def close(self) -> None:
        os.close(self._commands)
        os.close(self._replies)
        self.process.kill()
        self.process.wait()


class Page:
    """One tab of the browser."""

    def __init__(self, devtools: DevTools, url: str):
        self.devtools = devtools
        target = devtools.call("Target.createTarget", url=url)["targetId"]
        self.session = devtools.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

    def evaluate(self, expression: str):
        result = self.devtools.call("Runtime.evaluate", self.session, expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30.0):
        """Poll `expression` until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if value := self.evaluate(expression):
                return value
            time.sleep(0.05)
        raise TimeoutError(f"{expression} still false after {timeout} s: {self.evaluate('document.body.innerText')}")

    def mouse(self, kind: str, x: float, y: float) -> None:
        self.devtools.call(
            "Input.dispatchMouseEvent", self.session, type=kind, x=x, y=y, button="left",
            buttons=0 if kind == "mouseReleased" else 1, clickCount=1,
        )  # fmt: skip

    def drag(self, points: list[tuple[float, float]]) -> None:
        """One stroke through `points`, with intermediate moves every few pixels, as a hand makes."""
        self.mouse("mousePressed", *points[0])
        for (x0, y0), (x1, y1) in zip(points, points[1:]):
            steps = max(1, int(math.hypot(x1 - x0, y1 - y0) / 6))
            for step in range(1, steps + 1):
                self.mouse("mouseMoved", x0 + (x1 - x0) * step / steps, y0 + (y1 - y0) * step / steps)
        self.mouse("mouseReleased", *points[-1])


def ellipse(cx: float, cy: float, rx: float, ry: float) -> list[tuple[float, float]]:
    return [(cx + rx * math.sin(a * math.pi / 16), cy - ry * math.cos(a * math.pi / 16)) for a in range(33)]


# Strokes in the page's 280 x 280 drawing pad, as a person draws these digits.
DRAWINGS = {
    "0": [ellipse(140, 140, 60, 100)],
    "1": [[(120, 70), (150, 40), (150, 240)]],
    "2": [[(80, 80), (110, 45), (170, 45), (200, 90), (180, 140), (80, 240), (210, 240)]],
    "3": [[(80, 50), (190, 50), (130, 130), (200, 180), (160, 240), (80, 230)]],
    "4": [[(170, 240), (170, 40), (70, 170), (220, 170)]],
    "7": [[(80, 50), (200, 50), (130, 240)]],
}


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    browser = chromium()
    site = write_site(tmp_path_factory.mktemp("site"))
    server = site_server(site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    devtools = DevTools(browser, str(tmp_path_factory.mktemp("profile")))
    try:
        page = Page(devtools, f"http://127.0.0.1:{server.server_address[1]}/index.html")
        page.wait_for("['ready', 'failed'].includes(document.getElementById('prediction')?.dataset.state)")
        yield page
    finally:
        devtools.close()
        server.shutdown()
        server.server_close()


def test_page_loads_the_compiled_model(page):
    assert page.evaluate("document.getElementById('prediction').dataset.state") == "ready", page.evaluate(
        "document.getElementById('status').textContent"
    )
    assert "digits for wasm32-unknown-wasi: image float32[1,1,8,8]" in page.evaluate(
        "document.getElementById('status').textContent"
    )


@pytest.fixture(scope="module")
def host_session(tmp_path_factory) -> onnxc.Session:
    return onnxc.Session(onnxc.compile(MODEL_PATH, tmp_path_factory.mktemp("host") / "digits.so"))


@pytest.mark.parametrize("digit", list(DRAWINGS))
def test_page_names_the_drawn_digit(page, host_session, digit):
    page.evaluate("document.getElementById('clear').click()")
    left, top = page.evaluate("(({x, y}) => [x, y])(document.getElementById('pad').getBoundingClientRect())")
    for stroke in DRAWINGS[digit]:
        page.drag([(left + x, top + y) for x, y in stroke])
    page.wait_for("document.getElementById('prediction').dataset.state === 'predicted'")
    assert page.evaluate("document.getElementById('prediction').textContent") == digit
    # The browser's logits are the x86 build's for the same 8x8 image.
    image, logits = (
        np.array(json.loads(page.evaluate(f"document.getElementById('prediction').dataset.{field}")), np.float32)
        for field in ("image", "logits")
    )
    assert image.shape == (64,) and 0 == image.min() < image.max() <= 16 and int(logits.argmax()) == int(digit)
    host = host_session.run(None, {"image": image.reshape(1, 1, 8, 8)})[0]
    assert_same_outputs([logits.reshape(1, 10)], [host])
