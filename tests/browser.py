"""Drive headless Chromium over the DevTools protocol: load a page, wait in real time, evaluate JavaScript."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1400,1000", "--remote-allow-origins=*",
]  # fmt: skip


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def count_when_ready(page: Path, selector: str, timeout_s: float = 90.0) -> int:
    """Open `page` and poll `document.querySelectorAll(selector).length` until it is non-zero (or time runs out)."""
    import websocket  # from the test extras

    exe = chromium()
    assert exe is not None
    profile = tempfile.mkdtemp(prefix="pypto-egg-chromium-")
    proc = subprocess.Popen(
        [exe, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0", page.resolve().as_uri()],
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
        n, msg_id = 0, 0
        while time.monotonic() < deadline:
            msg_id += 1
            ws.send(json.dumps({"id": msg_id, "method": "Runtime.evaluate",
                                "params": {"expression": f"document.querySelectorAll({selector!r}).length"}}))  # fmt: skip
            reply: dict[str, Any] = {}
            while reply.get("id") != msg_id:
                reply = json.loads(ws.recv())
            n = int(reply.get("result", {}).get("result", {}).get("value", 0) or 0)
            if n:
                break
            time.sleep(0.5)
        ws.close()
        return n
    finally:  # the browser's helper processes share its session: stop them all, then drop the profile
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


def must_run_browser_tests() -> bool:
    return os.environ.get("CI", "").lower() == "true"
