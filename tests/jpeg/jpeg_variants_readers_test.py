#!/usr/bin/python3
"""JPEGs the corpus does not hold, made here from two of its camera photos by PIL and by cjpeg
(libjpeg-turbo's encoder), through the same checks as jpeg_readers_test.py: no run fails
verification, every output opens in PIL with the input's size and mode, lossless outputs keep
every pixel, perceptual ones meet the mode's floor by `lighten compare`, metadata is kept, and a
second run loses nothing.

The variants are the encodings and shapes other encoders and pipelines write and the corpus's
camera photos do not: 4:4:4, 4:2:2, 4:4:0 and 4:1:1 sampling, chroma sampled finer than luma,
progressive, grey, CMYK, RGB-coded, arithmetic-coded, 16-bit quantisation tables (extended
sequential), a restart marker after every MCU, smoothed, strips of 3 and 16 pixels (scored
mirrored out to 256 px) and images of 1x1 to 9x9 (too small for the metric); and by jpegtran's
scan scripts, one sequential scan per component and a progressive file of spectral bands alone,
and a progressive file with a comment between its last two scans.

Usage: jpeg_variants_readers_test.py LIGHTEN_BINARY SHARED_DIR
                                     [--mode lossless|visually-lossless|high|compact]
Skips (exit 77) when the corpus, PIL, cjpeg or jpegtran is missing.
"""
import shutil, subprocess, sys, tempfile
from pathlib import Path

from corpus_script import SKIP, arguments
from jpeg_readers_test import check_folder

SOURCES = ("jolla.jpg", "nikon_d90.jpg")


def pil_variants(photos, out):
    """The variants PIL writes, from the photos (PIL images, about 1 MP)."""
    a, b = photos
    a.save(out / "pil_444_q95.jpg", quality=95, subsampling=0)
    b.save(out / "pil_422_q97.jpg", quality=97, subsampling=1)
    a.save(out / "pil_progressive_q93.jpg", quality=93, progressive=True)
    b.convert("L").save(out / "pil_grey_q97.jpg", quality=97)
    a.convert("CMYK").save(out / "pil_cmyk_q95.jpg", quality=95)
    for width, height in ((4097, 3), (8000, 16), (16, 6000), (1, 1), (3, 5), (9, 9)):
        a.resize((width, height)).save(out / f"pil_{width}x{height}_q95.jpg", quality=95)


def cjpeg_variants(photos, out, tmp):
    """The variants cjpeg writes with options PIL does not offer."""
    settings = (("cjpeg_440_q94", "-quality", "94", "-sample", "1x2"),
                ("cjpeg_411_q94", "-quality", "94", "-sample", "4x1"),
                ("cjpeg_restart1_q90", "-quality", "90", "-restart", "1"),
                ("cjpeg_arithmetic_q90", "-quality", "90", "-arithmetic"),
                ("cjpeg_rgb_q88", "-quality", "88", "-rgb"),
                ("cjpeg_smooth_q90", "-quality", "90", "-smooth", "30", "-optimize"),
                ("cjpeg_extended_q3", "-quality", "3"),
                ("cjpeg_chroma_finer_q93", "-quality", "93", "-sample", "1x1,2x2,2x2"))
    ppm = []
    for i, photo in enumerate(photos):
        ppm.append(tmp / f"source{i}.ppm")
        photo.save(ppm[-1])
    for i, (name, *options) in enumerate(settings):
        with open(out / f"{name}.jpg", "wb") as f:
            subprocess.run(["cjpeg", *options, str(ppm[i % 2])], stdout=f, check=True)


def scan_variants(out, tmp):
    """Scan layouts only jpegtran's scripts write, from PIL's 4:2:2 variant, and PIL's
    progressive variant with a comment inserted before its last scan."""
    scripts = {"jpegtran_one_scan_per_component": "0: 0 63 0 0; 1: 0 63 0 0; 2: 0 63 0 0;",
               "jpegtran_spectral_bands": "0: 0 0 0 0; 1 2: 0 0 0 0; 0: 1 5 0 0; 0: 6 63 0 0;"
                                          " 1: 1 63 0 0; 2: 1 63 0 0;"}
    for name, script in scripts.items():
        (tmp / f"{name}.txt").write_text(script)
        with open(out / f"{name}.jpg", "wb") as f:
            subprocess.run(["jpegtran", "-scans", str(tmp / f"{name}.txt"), "-copy", "all",
                            str(out / "pil_422_q97.jpg")], stdout=f, check=True)
    data = (out / "pil_progressive_q93.jpg").read_bytes()
    last_scan = data.rfind(b"\xff\xda")  # coded data holds no FF DA: the last SOS marker
    comment = b"a comment between scans"
    (out / "commented_between_scans.jpg").write_bytes(
        data[:last_scan] + b"\xff\xfe" + (len(comment) + 2).to_bytes(2, "big") + comment +
        data[last_scan:])


def main():
    args = arguments(__doc__)
    if isinstance(args, int):
        return args
    lighten, mode, corpus = args
    if shutil.which("cjpeg") is None or shutil.which("jpegtran") is None:
        print("SKIP: cjpeg and jpegtran (libjpeg-turbo-progs) are not installed")
        return SKIP
    from PIL import Image
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        variants = tmp / "variants"
        variants.mkdir()
        photos = []
        for name in SOURCES:
            with Image.open(corpus / name) as im:
                scale = (1_000_000 / (im.width * im.height)) ** 0.5
                photos.append(im.resize((round(im.width * scale), round(im.height * scale)),
                                        Image.LANCZOS))
        pil_variants(photos, variants)
        cjpeg_variants(photos, variants, tmp)
        scan_variants(variants, tmp)
        return check_folder(lighten, mode, variants)


if __name__ == "__main__":
    sys.exit(main())
