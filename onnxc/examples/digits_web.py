"""The draw-a-digit web page: the quick start's classifier compiled to WebAssembly, in a browser.

    python -m onnxc.examples.digits_web site             # writes site/{index.html,onnxc.mjs,digits.wasm}
    python -m onnxc.examples.digits_web site --serve 8000  # ... and serves it at http://localhost:8000

The page (web/index.html) takes the strokes drawn on a canvas to the 8x8
intensities the model reads, runs digits.wasm with the JavaScript loader
(runtime/js/onnxc.mjs) and shows the digit it names. Browsers load ES modules
and WebAssembly only over http(s), hence the server; any static file server
does.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import shutil
from pathlib import Path

import onnxc
from onnxc.examples.digits import MODEL_PATH
from onnxc.runtime import library as runtime_library

PAGE = Path(__file__).with_name("web") / "index.html"
LOADER = Path(runtime_library.__file__).parent / "js" / "onnxc.mjs"


def write_site(directory: str | Path) -> Path:
    """Compile the digits model for wasm32 into `directory` beside the page and the loader."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    onnxc.compile(MODEL_PATH, directory / "digits.wasm", target="wasm32")
    for source in (PAGE, LOADER):
        shutil.copyfile(source, directory / source.name)
    return directory


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files, with the MIME types browsers insist on for modules and WebAssembly; quiet."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript",
        ".wasm": "application/wasm",
    }

    def log_message(self, format: str, *args) -> None:
        pass


def site_server(directory: str | Path, port: int = 0) -> http.server.ThreadingHTTPServer:
    """A server of `directory` on localhost (`port` 0: any free port), not yet serving."""
    handler = functools.partial(SiteHandler, directory=str(directory))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m onnxc.examples.digits_web", description=__doc__.split("\n")[0])
    parser.add_argument("directory", help="where to write the page, the loader and digits.wasm")
    parser.add_argument("--serve", type=int, metavar="PORT", help="then serve them on localhost:PORT")
    args = parser.parse_args(argv)
    directory = write_site(args.directory)
    print(f"wrote {directory / 'index.html'}, {directory / 'onnxc.mjs'}, {directory / 'digits.wasm'}")
    if args.serve is not None:
        with site_server(directory, args.serve) as server:
            print(f"serving http://localhost:{server.server_address[1]}/ (Ctrl-C stops)")
            try:
                server.serve_forever()
            except KeyboardInterrupt:
                pass


if __name__ == "__main__":
    main()
