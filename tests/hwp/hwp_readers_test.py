#!/usr/bin/python3
"""Opens lighten's HWP outputs with an independent reader, as users would.

Every HWP 5.0 document of the corpus is optimised by the lighten CLI in lossless and in
visually-lossless mode; the npm reader @ohah/hwpjs (a Rust parser, sharing no code with
lighten) must then extract the same text (as Markdown) and the same list of images from the
output as from the input, and every image of the output must decode (PIL) with the same size
(and, lossless, the same pixels). Documents hwpjs cannot read must fail the same way after.
A truncated output must be rejected, so a passing read means something.

Usage: hwp_readers_test.py LIGHTEN_BINARY SHARED_DIR READERS_DIR
Skips (exit 77) when the corpus, node, PIL or @ohah/hwpjs is missing.
"""
import base64, io, json, shutil, subprocess, sys, tempfile
from pathlib import Path

SKIP = 77
MODES = ("lossless", "visually-lossless")


def extract(node, readers, files):
    script = Path(__file__).with_name("hwpjs_extract.js")
    out = subprocess.run([node, str(script), str(readers)] + [str(f) for f in files],
                         capture_output=True, text=True, timeout=600, check=False)
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    if len(rows) != len(files):
        raise RuntimeError(f"hwpjs_extract.js failed: {out.stderr[-2000:]}")
    return {Path(r["file"]).name: r for r in rows}


def decode(image):
    from PIL import Image
    im = Image.open(io.BytesIO(base64.b64decode(image["data"])))
    im.load()
    return im


def compare(name, mode, before, after):
    """Returns a list of problems with `after` against `before`."""
    if "error" in before:
        if after.get("error") != before["error"]:
            return [f"input fails to read ({before['error']}) but output gives {after.get('error')}"]
        return []
    if "error" in after:
        return [f"output does not read: {after['error']}"]
    problems = []
    if after["markdown"] != before["markdown"]:
        problems.append("text differs")
    ids = lambda r: [(i["id"], i["format"]) for i in r["images"]]
    if ids(after) != ids(before):
        problems.append(f"images differ: {ids(before)} -> {ids(after)}")
        return problems
    for x, y in zip(before["images"], after["images"]):
        if x["data"] == y["data"]:
            continue
        try:
            a, b = decode(x), decode(y)
        except Exception as e:  # an undecodable output image is a failure
            problems.append(f"image {y['id']} does not decode: {e}")
            continue
        if a.size != b.size:
            problems.append(f"image {y['id']} changed size {a.size} -> {b.size}")
        elif mode == "lossless" and a.convert("RGBA").tobytes() != b.convert("RGBA").tobytes():
            problems.append(f"image {y['id']} changed pixels in lossless mode")
    return problems


def main():
    lighten, shared, readers = map(Path, sys.argv[1:4])
    corpus = shared / "corpus" / "hwp"
    if not corpus.is_dir():
        print(f"SKIP: {corpus} not found")
        return SKIP
    node = shutil.which("node")
    try:
        import PIL  # noqa: F401
    except ImportError:
        node = None
    if not node or not (readers / "node_modules/@ohah/hwpjs/dist/index.js").exists():
        print("SKIP: node, PIL or @ohah/hwpjs missing (run scripts/install-deps)")
        return SKIP
    docs = sorted(corpus.glob("*.hwp"))
    failed = optimised = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src = tmp / "in"
        src.mkdir()
        for d in docs:
            shutil.copy(d, src / d.name)
        before = extract(node, readers, [src / d.name for d in docs])
        for mode in MODES:
            out = tmp / mode
            run = subprocess.run([str(lighten), "optimize", "--no-journal", "-q", "-j", "1",
                                  "--mode", mode, "-o", str(out), str(src)],
                                 capture_output=True, text=True, timeout=900, check=False)
            if not out.is_dir():
                print(f"FAIL: lighten optimize wrote no mirror: {run.stderr[-2000:]}")
                return 1
            after = extract(node, readers, [out / d.name for d in docs])
            for d in docs:
                size_in, size_out = d.stat().st_size, (out / d.name).stat().st_size
                optimised += size_out < size_in
                problems = compare(d.name, mode, before[d.name], after[d.name])
                status = "ok" if not problems else "FAIL " + "; ".join(problems)
                print(f"{mode:18} {d.name:22} {size_in:8} -> {size_out:8}  {status}")
                failed += bool(problems)
        # The reader is strict: half an output is refused.
        probe = next((tmp / "lossless" / d.name for d in docs if "error" not in before[d.name]))
        cut = tmp / "truncated.hwp"
        cut.write_bytes(probe.read_bytes()[: probe.stat().st_size // 2])
        if "error" not in extract(node, readers, [cut])[cut.name]:
            print("FAIL: hwpjs read a truncated file; its reads prove nothing")
            failed += 1
    if optimised == 0:
        print("FAIL: no HWP document was optimised (is Kind::kHwp in the registry?)")
        return 1
    print(f"{failed} failures")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
