#!/usr/bin/python3
"""Opens lighten's PPT/XLS/DOC outputs with LibreOffice, as users would.

Each .ppt/.xls/.doc of ../shared/corpus/office (and broken/ppt_corrupted.ppt) is optimised in
lossless and in visually-lossless mode. LibreOffice (headless) converts every changed document
to PDF before and after, and pdftoppm renders the pages: in lossless mode every page must be
pixel-identical; in visually-lossless mode the page count must match and every page must render.

Usage: render_test.py LIGHTEN_BINARY SHARED_DIR
Skips (exit 77) when the corpus or LibreOffice/pdftoppm is missing.
"""
import shutil, subprocess, sys, tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "support"))
from office_render import render_pages, run  # noqa: E402

KINDS = {".ppt", ".xls", ".doc"}
SKIP = 77


def main():
    lighten, shared = map(Path, sys.argv[1:3])
    corpus = shared / "corpus"
    if not (corpus / "office").is_dir():
        print(f"SKIP: {corpus}/office not found")
        return SKIP
    soffice = shutil.which("soffice")
    if not soffice or not shutil.which("pdftoppm"):
        print("SKIP: LibreOffice or pdftoppm missing (run scripts/install-deps)")
        return SKIP
    docs = [p for p in sorted((corpus / "office").iterdir()) if p.suffix in KINDS]
    docs += [p for p in [corpus / "broken" / "ppt_corrupted.ppt"] if p.exists()]
    if not docs:
        print("SKIP: no .ppt/.xls/.doc in the corpus")
        return SKIP
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src = tmp / "in"
        src.mkdir()
        for p in docs:
            shutil.copy(p, src / p.name)
        before = render_pages(soffice, [src / p.name for p in docs], tmp / "before", tmp / "lo0", 72)
        changed_any = False
        for mode in ("lossless", "visually-lossless"):
            out = tmp / mode
            r = run([str(lighten), "optimize", str(src), "-o", str(out), "--mode", mode,
                     "--no-journal", "-q"])
            if r.returncode not in (0, 1):
                print("lighten failed:", r.stderr.decode())
                return 1
            changed = [p for p in docs if (out / p.name).read_bytes() != p.read_bytes()]
            changed_any = changed_any or bool(changed)
            after = render_pages(soffice, [out / p.name for p in changed], tmp / ("after-" + mode),
                                 tmp / ("lo-" + mode), 72)
            for p in docs:
                size_in, size_out = p.stat().st_size, (out / p.name).stat().st_size
                if p not in changed:
                    print(f"same {mode:17} {p.name}: {size_in} bytes, left alone")
                    continue
                a, b = before[p.name], after[p.name]
                if mode == "lossless":
                    ok = a is not None and a == b
                    what = "pixel-identical" if ok else "differ or failed"
                else:
                    ok = a is not None and b is not None and len(a) == len(b) and len(b) > 0
                    what = "render, same page count" if ok else "page count differs or failed"
                print(f"{'ok  ' if ok else 'FAIL'} {mode:17} {p.name}: {size_in} -> {size_out} "
                      f"bytes, {len(a or [])} pages rendered by LibreOffice, {what}")
                passed, failed = passed + ok, failed + (not ok)
        if not changed_any:
            r = run([str(lighten), "info", str(docs[0])])
            if b"unsupported-kind" in r.stdout + r.stderr or b"no optimiser" in r.stdout + r.stderr:
                print("SKIP: PPT/XLS/DOC are not in src/engine/registry.cpp yet")
                return SKIP
            print("FAIL: lighten changed none of the .ppt/.xls files")
            return 1
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
