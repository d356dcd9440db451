"""Screenshot MLflow's runs table with a sweep's parent run expanded: the picture in README.md and docs/tracking.md.

Usage (run by hand; needs Chromium and ``pip install websocket-client``)::

    mlflow ui --backend-store-uri sqlite:///outputs/mlflow.db --port 5077 &
    python -m tools.mlflow_screenshot http://127.0.0.1:5077/#/experiments/1/runs SWEEP docs/images/mlflow-sweep.png

Headless Chromium loads the page (MLflow's UI is a JavaScript app: a plain ``--screenshot`` shows it before it
can be clicked), closes MLflow's assistant panel, expands the row of the run named SWEEP and captures the page,
through the DevTools protocol.
"""

from __future__ import annotations

import argparse
import base64
import json
import subprocess
import time
import urllib.request
from typing import Any

PORT = 9333
EXPAND = """(() => {
  document.querySelectorAll('button[aria-label="Close"]').forEach(button => button.click());
  const link = Array.from(document.querySelectorAll('a')).find(a => a.innerText.trim() === %s);
  link.closest('[role=gridcell]').querySelector('button').click();
})()"""


class Page:
    """One Chromium tab, driven over its DevTools websocket."""

    def __init__(self, url: str) -> None:
        import websocket  # websocket-client: only for this tool

        self.socket = websocket.create_connection(url, timeout=60)
        self.count = 0

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.count += 1
        self.socket.send(json.dumps({"id": self.count, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self.count:
                return dict(message.get("result", {}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="MLflow's runs page of the experiment")
    parser.add_argument("sweep", help="the name of the sweep's run, whose row is expanded")
    parser.add_argument("out", help="the PNG file to write")
    parser.add_argument("--wait", type=float, default=12.0, help="seconds the page is given to load")
    args = parser.parse_args()
    chrome = subprocess.Popen(
        ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1500,620"]
        + [f"--remote-debugging-port={PORT}", "--remote-allow-origins=*", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/json") as answer:
                    tabs = json.load(answer)
                break
            except OSError:
                time.sleep(0.3)
        page = Page(next(tab for tab in tabs if tab["type"] == "page")["webSocketDebuggerUrl"])
        page.call("Page.enable")
        page.call("Page.navigate", url=args.url)
        time.sleep(args.wait)
        page.call("Runtime.evaluate", expression=EXPAND % json.dumps(args.sweep))
        time.sleep(3)
        shot = page.call("Page.captureScreenshot", format="png")
        with open(args.out, "wb") as file:
            file.write(base64.b64decode(shot["data"]))
    finally:
        chrome.terminate()
        chrome.wait()


if __name__ == "__main__":
    main()
