"""Renders documents as users see them: LibreOffice (headless) converts each to PDF, pdftoppm
turns every page into a PPM. Shared by the reader tests of ZIP and compound-file documents."""
import subprocess


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, check=False, **kw)


def render_pages(soffice, docs, outdir, profile, dpi):
    """Returns {name: [page bytes]}, or None for a document LibreOffice did not convert."""
    pdfdir = outdir / "pdf"
    pdfdir.mkdir(parents=True)
    if docs:
        run([soffice, f"-env:UserInstallation=file://{profile}", "--headless", "--convert-to",
             "pdf", "--outdir", str(pdfdir)] + [str(d) for d in docs], timeout=900)
    pages = {}
    for d in docs:
        pdf = pdfdir / (d.stem + ".pdf")
        if not pdf.exists():
            pages[d.name] = None
            continue
        prefix = outdir / "pages" / d.stem
        prefix.parent.mkdir(exist_ok=True)
        run(["pdftoppm", "-r", str(dpi), str(pdf), str(prefix)], timeout=300)
        pages[d.name] = [p.read_bytes() for p in sorted(prefix.parent.glob(d.stem + "-*.ppm"))]
    return pages
