#!/usr/bin/python3
"""Renders the HTML report of a real run over ../shared/corpus in headless Chromium, as a reader
would open it from disk, and checks what they would see.

1. `lighten optimize CORPUS -o OUT --mode high --report-html run.html`, `lighten probe` on the
   JPEGs before/after, then `lighten report JOURNAL --probe probe.json -o report.html --csv ...`.
2. Chromium (Debian's /usr/bin/chromium, driven over the DevTools protocol on a pipe: no
   websocket, no downloaded browser) opens both pages from file:// and the test checks: every
   section is present; the totals on the page equal the journal's (summed here with sqlite3);
   every table row count and reason count matches; sorting a table works; no console error or
   exception; no network request (only the file itself); every chart canvas has drawn pixels.
3. A full-page screenshot is saved (ARTEFACTS/report.png) and, decoded here, every chart's area
   in it must hold non-background pixels.

Usage: report_browser_test.py LIGHTEN_BINARY SHARED_DIR ARTEFACTS_DIR [--reuse DIR]
  --reuse DIR: take DIR/journal.sqlite and DIR/out from an earlier run instead of optimising.
Skips (exit 77) when chromium or the corpus is absent.
"""
import csv, io, json, os, shutil, sqlite3, struct, subprocess, sys, tempfile, time, zlib
from pathlib import Path

SKIP = 77
SECTIONS = ["totals", "kinds", "histogram", "quality", "left-alone", "slowest", "probe", "runs"]
CHARTS = ["chart-kinds", "chart-histogram", "chart-scatter", "chart-probe"]
FAILURES = {8, 12, 14}  # verify-failed, internal-error, io-error


def run(cmd, timeout=3600):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(map(str, cmd))} exited {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


class Chromium:
    """The DevTools protocol over --remote-debugging-pipe: JSON messages ending in NUL on fds 3/4."""

    def __init__(self, binary, profile):
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        def give_fds():
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self.process = subprocess.Popen(
            [binary, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
             "--hide-scrollbars", "--no-first-run", "--disable-extensions",
             "--disable-background-networking", "--disable-component-update", "--mute-audio",
             f"--user-data-dir={profile}", "--window-size=1280,900", "about:blank"],
            # 3 and 4 too: the child closes every fd not listed after give_fds has run.
            pass_fds=(to_browser_r, from_browser_w, 3, 4), preexec_fn=give_fds,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            if time.time() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=True, timeout=60):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method, timeout=60):
        deadline = time.time() + timeout
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return self.events.pop(i)
        while True:
            e = self._read_message(deadline)
            if e.get("method") == method:
                return e
            self.events.append(e)

    def evaluate(self, expression):
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                           "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"page script failed: {r['exceptionDetails']}")
        return r["result"].get("value")

    def close(self):
        try:
            self.send("Browser.close", session=False, timeout=10)
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def open_page(chromium, url):
    """Opens url in a fresh tab with the console, log and network watched; returns the tab."""
    target = chromium.send("Target.createTarget", {"url": "about:blank"}, session=False)
    chromium.session = chromium.send("Target.attachToTarget",
                                     {"targetId": target["targetId"], "flatten": True},
                                     session=False)["sessionId"]
    for domain in ["Page", "Runtime", "Log", "Network"]:
        chromium.send(domain + ".enable")
    chromium.events.clear()
    chromium.send("Page.navigate", {"url": url})
    chromium.wait_for("Page.loadEventFired")
    for _ in range(100):
        if chromium.evaluate("document.documentElement.dataset.ready") == "yes":
            return
        time.sleep(0.1)
    sys.exit(f"FAIL: {url} never finished drawing")


def page_problems(chromium, url):
    """Console errors, exceptions and requests other than the page itself, seen so far."""
    problems = []
    for e in chromium.events:
        method, params = e.get("method"), e.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            problems.append("console error: " + " ".join(
                str(a.get("value", a.get("description"))) for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            problems.append("exception: " + json.dumps(params.get("exceptionDetails"))[:500])
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            problems.append("log error: " + params["entry"].get("text", ""))
        elif method == "Network.requestWillBeSent":
            request_url = params["request"]["url"]
            if request_url != url and not request_url.startswith("data:"):
                problems.append("network request: " + request_url)
    return problems


def decode_png(data):
    """Width, height, rows of RGB(A) bytes: enough of PNG for Chromium's 8-bit screenshots."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), "unexpected PNG format"
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b, c = prev[x], prev[x - channels] if x >= channels else 0
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + b) & 255
            elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, channels, rows


def journal_truth(journal):
    db = sqlite3.connect(journal)
    files, optimized, before, after = db.execute(
        "SELECT count(*), sum(action = 'replaced'), sum(bytes_before), sum(bytes_after) "
        "FROM files").fetchone()
    reasons = dict(db.execute("SELECT reason, count(*) FROM files WHERE action = 'kept' "
                              "GROUP BY reason").fetchall())
    kinds = dict(db.execute("SELECT kind, count(*) FROM files GROUP BY kind").fetchall())
    return {"files": files, "optimized": optimized, "bytes_before": before,
            "bytes_after": after, "left_alone": files - optimized,
            "failed": sum(n for r, n in reasons.items() if r in FAILURES),
            "reasons": reasons, "kinds": kinds}


DOM_FACTS = """(() => {
  const value = (id) => { const e = document.getElementById(id); return e ? Number(e.dataset.value) : null; };
  const rows = (id) => document.querySelectorAll('#' + id + ' tbody tr').length;
  const canvases = {};
  for (const c of document.querySelectorAll('canvas')) {
    const r = c.getBoundingClientRect();
    const ctx = c.getContext('2d');
    const px = ctx.getImageData(0, 0, c.width, c.height).data;
    let drawn = 0;
    for (let i = 3; i < px.length; i += 4) if (px[i] > 0) ++drawn;
    canvases[c.id] = {drawn, area: c.width * c.height, visible: r.width > 0 && r.height > 0,
                      x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height};
  }
  return {
    sections: Array.from(document.querySelectorAll('main > section')).map((s) => s.id),
    totals: {files: value('total-files'), optimized: value('total-optimized'),
             bytes_before: value('total-bytes-before'), bytes_after: value('total-bytes-after'),
             left_alone: value('total-left-alone'), saved_percent: value('total-saved-percent')},
    text: {before: document.querySelector('#total-bytes-before .value').textContent,
           saved: document.querySelector('#total-saved-percent .value').textContent},
    reasons: Object.fromEntries(Array.from(document.querySelectorAll('#table-reasons tbody tr'))
               .map((tr) => [tr.cells[0].textContent, Number(tr.cells[1].dataset.sort)])),
    kinds: Object.fromEntries(Array.from(document.querySelectorAll('#table-kinds tbody tr'))
               .map((tr) => [tr.cells[0].textContent, Number(tr.cells[1].dataset.sort)])),
    examples: document.querySelectorAll('#reason-examples details').length,
    slowest: rows('table-slowest'), probe_rows: rows('table-probe'),
    canvases, height: document.documentElement.scrollHeight,
    http_in_dom: /https?:\\/\\//.test(document.querySelector('main').innerHTML),
  };
})()"""

# Sorting the kinds table by files and by quality (numbers, not text: 9.5 below 85), and the
# slowest files by result (saved 10 % above saved 9 %), orders each both ways.
SORT_CHECK = """(() => {
  const sorted = (a, f) => a.every((v, i) => i === 0 || f(a[i - 1], v));
  const orders = (table, column) => {
    const th = document.querySelectorAll('#' + table + ' th')[column];
    const values = () => Array.from(document.querySelectorAll('#' + table + ' tbody tr'))
                          .map((tr) => Number(tr.cells[column].dataset.sort));
    th.click();
    const up = values();
    th.click();
    const down = values();
    return sorted(up, (a, b) => a <= b) && sorted(down, (a, b) => a >= b);
  };
  return orders('table-kinds', 1) && orders('table-kinds', 6) && orders('table-slowest', 5);
})()"""


def format_bytes(n):
    units, v, u = ["B", "kB", "MB", "GB", "TB", "PB"], float(n), 0
    while v >= 1000 and u + 1 < len(units):
        v, u = v / 1000, u + 1
    return f"{n} B" if u == 0 else f"{v:.2f} {units[u]}"


def check_page(chromium, html, truth, errors, with_probe, screenshot=None):
    url = html.resolve().as_uri()
    open_page(chromium, url)
    facts = chromium.evaluate(DOM_FACTS)
    if not chromium.evaluate(SORT_CHECK):
        errors.append(f"{html.name}: sorting the kinds table (files, quality) or the slowest "
                      "files (result) does not order them")
    errors += [f"{html.name}: {p}" for p in page_problems(chromium, url)]
    missing = [s for s in SECTIONS if s not in facts["sections"]]
    if missing:
        errors.append(f"{html.name}: sections missing: {missing}")
    for key in ["files", "optimized", "bytes_before", "bytes_after", "left_alone"]:
        if facts["totals"][key] != truth[key]:
            errors.append(f"{html.name}: total {key} is {facts['totals'][key]}, journal says "
                          f"{truth[key]}")
    saved = 100 * (truth["bytes_before"] - truth["bytes_after"]) / truth["bytes_before"]
    if abs(facts["totals"]["saved_percent"] - saved) > 1e-6:
        errors.append(f"{html.name}: saved {facts['totals']['saved_percent']} %, journal {saved} %")
    if facts["text"]["before"] != format_bytes(truth["bytes_before"]):
        errors.append(f"{html.name}: shows {facts['text']['before']} before")
    if facts["text"]["saved"] != f"{saved:.1f} %":
        errors.append(f"{html.name}: shows {facts['text']['saved']} saved, journal {saved:.1f} %")
    names = {0: "optimized", 1: "no-gain", 2: "unsupported-kind", 3: "unsupported-variant",
             4: "corrupt", 5: "truncated", 6: "encrypted", 7: "signed", 8: "verify-failed",
             9: "limit-exceeded", 10: "already-optimized", 11: "mode-not-available",
             12: "internal-error", 13: "empty", 14: "io-error", 15: "skipped", 16: "misnamed"}
    expected_reasons = {names[r]: n for r, n in truth["reasons"].items()}
    if facts["reasons"] != expected_reasons:
        errors.append(f"{html.name}: reasons {facts['reasons']}, journal {expected_reasons}")
    if facts["kinds"] != truth["kinds"]:
        errors.append(f"{html.name}: kinds {facts['kinds']}, journal {truth['kinds']}")
    if facts["examples"] != len(expected_reasons):
        errors.append(f"{html.name}: {facts['examples']} example lists for "
                      f"{len(expected_reasons)} reasons")
    if facts["slowest"] == 0:
        errors.append(f"{html.name}: the slowest-files table is empty")
    if facts["http_in_dom"]:
        errors.append(f"{html.name}: the page's content links to the web")
    charts = CHARTS if with_probe else CHARTS[:-1]
    for name in charts:
        c = facts["canvases"].get(name)
        if not c or not c["visible"] or c["drawn"] < 0.005 * c["area"]:
            errors.append(f"{html.name}: chart {name} is empty or hidden: {c}")
    if with_probe and facts["probe_rows"] != 2:
        errors.append(f"{html.name}: the probe table has {facts['probe_rows']} rows, expected 2")
    if screenshot:
        chromium.send("Emulation.setDeviceMetricsOverride",
                      {"width": 1280, "height": facts["height"], "deviceScaleFactor": 1,
                       "mobile": False})
        shot = chromium.send("Page.captureScreenshot", {"format": "png",
                                                        "captureBeyondViewport": True})
        import base64
        png = base64.b64decode(shot["data"])
        screenshot.write_bytes(png)
        width, height, channels, rows = decode_png(png)
        facts = chromium.evaluate(DOM_FACTS)  # positions at the screenshot's size
        for name in charts:
            c = facts["canvases"][name]
            x0, y0 = int(c["x"]), int(c["y"])
            x1, y1 = min(width, int(c["x"] + c["w"])), min(height, int(c["y"] + c["h"]))
            inked = sum(1 for y in range(y0, y1, 2) for x in range(x0, x1, 2)
                        if any(v < 235 for v in rows[y][x * channels:x * channels + 3]))
            sampled = max(1, ((y1 - y0) // 2) * ((x1 - x0) // 2))
            print(f"  screenshot: {name} has {100 * inked / sampled:.1f} % inked pixels")
            if inked < 0.01 * sampled:
                errors.append(f"{html.name}: chart {name} is blank in the screenshot")
    return facts


NOTES = """[document.getElementById("totals-note").textContent,
            document.getElementById("quality-note").textContent]"""


def perceptual_documents_page(chromium, lighten, corpus, tmp):
    """A compact run whose only lossy changes are pictures inside a document: the document has
    its worst picture's score (the engine gives it in the detail, where the journal keeps it), so
    the page plots it, and must not call the run lossless."""
    docx = corpus / "office" / "inline_png.docx"
    if not docx.exists():
        return []
    page = tmp / "documents.html"
    run([lighten, "optimize", docx, "-o", tmp / "documents", "--mode", "compact", "--no-journal",
         "--report-html", page, "--quiet"])
    open_page(chromium, page.resolve().as_uri())
    problems = []
    notes = chromium.evaluate(NOTES)
    for note in notes:
        if "decoded pixels" in note:
            problems.append(f"{page.name}: a perceptual run of documents reads: {note!r}")
    if "SSIMULACRA2 of each perceptual output" not in notes[1] or "1 files" not in notes[1]:
        problems.append(f"{page.name}: the document's score is not plotted: {notes[1]!r}")
    return problems


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    lighten, shared, artefacts = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    reuse = Path(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--reuse" else None
    chromium_binary = shutil.which("chromium") or "/usr/bin/chromium"
    corpus = shared / "corpus"
    if not Path(chromium_binary).exists():
        print("SKIP: chromium not found (scripts/install-deps installs Debian's chromium)")
        return SKIP
    if not (corpus / "jpeg").is_dir():
        print(f"SKIP: shared corpus not found at {corpus} (clone ../shared beside the repository)")
        return SKIP
    artefacts.mkdir(parents=True, exist_ok=True)
    errors = []
    with tempfile.TemporaryDirectory(prefix="lighten-report-") as tmp:
        tmp = Path(tmp)
        journal, out = (reuse / "journal.sqlite", reuse / "out") if reuse else \
            (tmp / "journal.sqlite", tmp / "out")
        run_html = tmp / "run.html"
        if not reuse:
            start = time.time()
            run([lighten, "optimize", corpus, "-o", out, "--mode", "high", "--journal", journal,
                 "--report-html", run_html, "--quiet"])
            print(f"optimised the corpus in {time.time() - start:.0f} s")
        probe = tmp / "probe.json"
        run([lighten, "probe", corpus / "jpeg", "--compare", out / "jpeg", "--sample", "16",
             "--workers", "2", "--batch", "4", "--step-ms", "150", "--passes", "2",
             "--bandwidth", "200mbit", "--latency", "2", "--json", probe, "--quiet"])
        report, kinds_csv, files_csv = tmp / "report.html", tmp / "kinds.csv", tmp / "files.csv"
        start = time.time()
        run([lighten, "report", journal, "--probe", probe, "-o", report, "--csv", kinds_csv,
             "--csv-files", files_csv])
        print(f"report written in {time.time() - start:.2f} s, {report.stat().st_size} bytes")
        shutil.copy(report, artefacts / "report.html")

        truth = journal_truth(journal)
        kinds = list(csv.DictReader(kinds_csv.open()))
        total = kinds[-1]
        if (total["kind"], int(total["files"]), int(total["bytes_before"]),
                int(total["bytes_after"])) != ("total", truth["files"], truth["bytes_before"],
                                               truth["bytes_after"]):
            errors.append(f"kinds CSV total row {total} disagrees with the journal")
        file_rows = list(csv.DictReader(files_csv.open()))
        if len(file_rows) != truth["files"] or \
                sum(int(r["bytes_after"]) for r in file_rows) != truth["bytes_after"]:
            errors.append("files CSV does not have the journal's rows")

        chromium = Chromium(chromium_binary, tmp / "profile")
        try:
            check_page(chromium, report, truth, errors, True, artefacts / "report.png")
            if run_html.exists():
                check_page(chromium, run_html, truth, errors, False)
            errors += perceptual_documents_page(chromium, lighten, corpus, tmp)
        finally:
            chromium.close()
    for e in errors:
        print("FAIL:", e)
    print(f"screenshot: {artefacts / 'report.png'}")
    print("OK" if not errors else f"{len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
