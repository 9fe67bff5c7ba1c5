"""Drive headless Chromium over the DevTools protocol: load a page, wait in real time, evaluate JavaScript,
take a screenshot."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1400,1000", "--remote-allow-origins=*",
]  # fmt: skip


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Page:
    """One page of a headless Chromium, driven over its DevTools websocket."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.msg_id = 0

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.msg_id += 1
        self.ws.send(json.dumps({"id": self.msg_id, "method": method, "params": params}))
        reply: dict[str, Any] = {}
        while reply.get("id") != self.msg_id:
            reply = json.loads(self.ws.recv())
        return reply.get("result", {})

    def eval(self, expression: str) -> Any:
        return (
            self.call("Runtime.evaluate", expression=expression, returnByValue=True)
            .get("result", {})
            .get("value")
        )

    def wait_for(self, expression: str, timeout_s: float = 90.0) -> Any:
        """Poll `expression` in real time until it is truthy (or time runs out); returns its last value."""
        deadline = time.monotonic() + timeout_s
        value = self.eval(expression)
        while not value and time.monotonic() < deadline:
            time.sleep(0.5)
            value = self.eval(expression)
        return value

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path


@contextlib.contextmanager
def open_page(page: Path, timeout_s: float = 90.0, fragment: str = "") -> Iterator[Page]:
    """The page open in a fresh headless Chromium (1,400 x 1,000 pixels), at `fragment` (`#line=27`) if given."""
    import websocket  # from the test extras

    exe = chromium()
    assert exe is not None
    profile = tempfile.mkdtemp(prefix="pypto-egg-chromium-")
    proc = subprocess.Popen(
        [exe, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0", page.resolve().as_uri() + fragment],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        port_file = Path(profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout_s
        words: list[str] = []
        while not words and time.monotonic() < deadline:  # the file appears before its contents do
            time.sleep(0.1)
            words = port_file.read_text().split() if port_file.exists() else []
        port = words[0]
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json"))
        url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        ws = websocket.create_connection(url, timeout=30)
        try:
            yield Page(ws)
        finally:
            ws.close()
    finally:  # the browser's helper processes share its session: stop them all, then drop the profile
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


def count_when_ready(page: Path, selector: str, timeout_s: float = 90.0) -> int:
    """Open `page` and poll `document.querySelectorAll(selector).length` until it is non-zero."""
    with open_page(page, timeout_s) as p:
        return int(p.wait_for(f"document.querySelectorAll({selector!r}).length", timeout_s) or 0)


def must_run_browser_tests() -> bool:
    return os.environ.get("CI", "").lower() == "true"
