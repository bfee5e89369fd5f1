#!/usr/bin/python3
"""Opens lighten's outputs with independent readers, as users would.

Office documents (docx/xlsx/pptx/odt/ods/odp) are converted to PDF by LibreOffice (headless)
before and after, and every page rendered by pdftoppm must be pixel-identical (lossless mode).
HWPX has no renderer in Debian: the npm reader @ssabrojs/hwpxjs must extract the same text and
the same structure from both, and every BinData image of the output must decode (PIL).

Usage: document_readers_test.py LIGHTEN_BINARY SHARED_DIR READERS_DIR
Skips (exit 77) when the corpus or a reader is missing.
"""
import json, shutil, subprocess, sys, tempfile, zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "support"))
from office_render import render_pages, run  # noqa: E402

OFFICE = {".docx", ".xlsx", ".pptx", ".pptm", ".odt", ".ods", ".odp"}
SKIP = 77


def hwpx_view(node, cli, path):
    text = run([node, str(cli), "txt", str(path)], timeout=120)
    inspect = run([node, str(cli), "inspect", str(path)], timeout=120)
    return text.returncode, text.stdout, inspect.returncode, inspect.stdout


def images_decode(path):
    from PIL import Image
    import io
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if not name.startswith("BinData/"):
                continue
            data = z.read(name)
            if data[:3] == b"\xff\xd8\xff" or data[:8] == b"\x89PNG\r\n\x1a\n":
                Image.open(io.BytesIO(data)).load()
    return True


def main():
    lighten, shared, readers = map(Path, sys.argv[1:4])
    corpus = shared / "corpus"
    if not corpus.is_dir():
        print(f"SKIP: {corpus} not found")
        return SKIP
    soffice = shutil.which("soffice")
    node = shutil.which("node")
    hwpx_cli = readers / "node_modules/@ssabrojs/hwpxjs/dist/cli.js"
    if not soffice or not node or not hwpx_cli.exists():
        print("SKIP: LibreOffice, node or @ssabrojs/hwpxjs missing (run scripts/install-deps)")
        return SKIP
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src = tmp / "in"
        src.mkdir()
        docs = [p for p in sorted((corpus / "office").iterdir()) if p.suffix in OFFICE]
        hwpx = sorted((corpus / "hwpx").glob("*.hwpx"))
        for p in docs + hwpx:
            shutil.copy(p, src / p.name)
        r = run([str(lighten), "optimize", str(src), "-o", str(tmp / "out"), "--no-journal", "-q"])
        if r.returncode != 0:
            print("lighten failed:", r.stderr.decode())
            return 1
        out = tmp / "out"
        changed = [p for p in docs if (out / p.name).read_bytes() != p.read_bytes()]
        before = render_pages(soffice, [src / p.name for p in changed], tmp / "before", tmp / "lo1", 40)
        after = render_pages(soffice, [out / p.name for p in changed], tmp / "after", tmp / "lo2", 40)
        for p in changed:
            ok = before[p.name] is not None and before[p.name] == after[p.name]
            pages = len(before[p.name] or [])
            print(f"{'ok  ' if ok else 'FAIL'} {p.name}: {pages} pages rendered by LibreOffice "
                  f"{'identical' if ok else 'differ or failed'}")
            passed, failed = passed + ok, failed + (not ok)
        for p in hwpx:
            original, optimised = hwpx_view(node, hwpx_cli, p), hwpx_view(node, hwpx_cli, out / p.name)
            ok = original == optimised and images_decode(out / p.name)
            print(f"{'ok  ' if ok else 'FAIL'} {p.name}: hwpxjs text and structure "
                  f"{'identical' if ok else 'differ'}, BinData images decode")
            passed, failed = passed + ok, failed + (not ok)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
