#!/usr/bin/python3
"""Every JPEG of the corpus through `lighten optimize` in one mode, each output opened by PIL
(an independent reader) and checked against the promises, then optimised a second time.

For every input: no run may end in verify-failed or internal-error (a file lighten cannot
handle is left alone with a reason). For every output that replaced its input: PIL opens it
with the input's size and mode; lossless mode decodes to the same pixels; a perceptual mode
either decodes to the same pixels or scores at least the mode's floor by `lighten compare` on
PIL's decodes (floor_score: under 256 px a side, the stricter mirrored score; CMYK with a CMYK
ICC profile, which PNG cannot hold, on the files, read through the profile), with butteraugli
reported beside it for images up to 2 MP; every metadata segment (APPn, COM, before the first
scan or between scans; in order, wherever it ends up) is kept byte for byte except lighten's own
quality marker, a rewritten MPF index, the Adobe segment's transform byte of an RGB-coded image
re-encoded as YCbCr (0 to 1, perceptual modes only) and an EXIF thumbnail (IFD1's
JPEGInterchangeFormat, read by PIL's EXIF parser): that one may be replaced by a smaller JPEG of
the same size and mode (same pixels in lossless mode, at the floor in the others), with nothing
else in its segment changed but its length value; the bytes after the image are kept unless an
MPF index points into them. The outputs, optimised again under the same mode, come back with the
same pixels (no generation loss) and no file grows.

Usage: jpeg_readers_test.py LIGHTEN_BINARY SHARED_DIR
                            [--mode lossless|visually-lossless|high|compact]
Skips (exit 77) when the corpus or PIL is missing.
"""
import io, json, shutil, subprocess, sys, tempfile, warnings
from pathlib import Path

from corpus_script import arguments

warnings.simplefilter("ignore")  # PIL warns of the corpus's malformed files as it opens them

FLOORS = {"visually-lossless": 85.0, "high": 80.0, "compact": 70.0}
QUALITY_MARKER = b"LIGHTEN\0"
OUR_BUGS = {"verify-failed", "internal-error"}
BUTTERAUGLI_PIXELS = 2_000_000


def segments(data):
    """(metadata segments [(marker, payload)] of the primary image, between its scans too, has
    MPF, offset after its EOI)."""
    meta, mpf, i = [], False, 2
    if data[:2] != b"\xff\xd8":
        return None
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            return None
        m = data[i + 1]
        if m == 0xFF:
            i += 1
            continue
        if m == 0xD9:
            return meta, mpf, i + 2
        size = int.from_bytes(data[i + 2:i + 4], "big")
        payload = data[i + 4:i + 2 + size]
        if 0xE0 <= m <= 0xEF or m == 0xFE:
            if m == 0xE2 and payload.startswith(b"MPF\0"):
                mpf = True
            elif not (m == 0xEF and payload.startswith(QUALITY_MARKER)):
                meta.append((m, payload))
        i += 2 + size
        if m == 0xDA:  # past the scan's coded data: to the next marker but RSTn
            while True:
                i = data.find(b"\xff", i)
                if i < 0 or i + 1 >= len(data):
                    return meta, mpf, len(data)
                if data[i + 1] not in (0x00, 0xFF) and not 0xD0 <= data[i + 1] <= 0xD7:
                    break
                i += 1 if data[i + 1] == 0xFF else 2
    return meta, mpf, len(data)


def decoded(data):
    from PIL import Image
    try:
        with Image.open(io.BytesIO(data)) as im:
            im.load()
            return im.copy()
    except Exception:  # a variant PIL cannot read (12-bit, lossless, broken)
        return None


def compared(lighten, pa, pb, pixels):
    """(floor_score, butteraugli or None) of `lighten compare` on two files: butteraugli,
    reported beside the floor, only for images up to BUTTERAUGLI_PIXELS (it takes seconds and
    gigabytes on large photos)."""
    small = pixels <= BUTTERAUGLI_PIXELS
    out = subprocess.run([lighten, "compare", "--json"] + ([] if small else ["--no-butteraugli"]) +
                         [str(pa), str(pb)], capture_output=True, text=True, check=True).stdout
    j = json.loads(out)
    return j["floor_score"], j.get("butteraugli")


def scores(lighten, a, b, tmp):
    """compared() on PIL's decodes `a` and `b`, saved as PNG (with the ICC profile they carry)."""
    pa, pb = tmp / "a.png", tmp / "b.png"
    a.save(pa, compress_level=0)  # fast: 12 MP photos take seconds at the default level
    b.save(pb, compress_level=0)
    return compared(lighten, pa, pb, a.size[0] * a.size[1])


def cmyk_with_profile(image):
    """Whether PIL's decode holds CMYK samples that carry a CMYK ICC profile."""
    icc = image.info.get("icc_profile") or b""
    return image.mode == "CMYK" and icc[16:20] == b"CMYK"


def file_scores(lighten, before, after, pixels, tmp):
    """compared() on the JPEG files themselves: for CMYK read through its profile, which no PNG
    can hold and whose rendering to 8-bit sRGB would add rounding of its own (0.06 points on
    cmyk_multi_icc). libjpeg decodes them for lighten compare as it does for PIL."""
    pa, pb = tmp / "a.jpg", tmp / "b.jpg"
    pa.write_bytes(before)
    pb.write_bytes(after)
    return compared(lighten, pa, pb, pixels)


def optimise(lighten, mode, src, dst, report):
    subprocess.run([lighten, "optimize", "--quiet", "--no-journal", "--mode", mode, "--report",
                    str(report), "-o", str(dst), str(src)], check=True)
    rows = json.loads(report.read_text())["files"]
    return {Path(r["path"]).name: r for r in rows}


def metric_mode(image):
    """Grey and RGB as they are; CMYK and the rest as RGB, which `lighten compare` reads."""
    return image if image.mode in ("L", "RGB") else image.convert("RGB")


def exif_thumbnail(payload):
    """(thumbnail, offset in the TIFF data) of an EXIF payload by PIL's EXIF parser, or None."""
    from PIL import ExifTags, Image
    try:
        exif = Image.Exif()
        exif.load(payload)
        ifd1 = exif.get_ifd(ExifTags.IFD.IFD1)
    except Exception:
        return None
    offset, length = ifd1.get(0x201), ifd1.get(0x202)
    tiff = payload[6:]
    if not isinstance(offset, int) or not isinstance(length, int) or offset + length > len(tiff):
        return None
    return tiff[offset:offset + length], offset


def check_exif_thumbnail(lighten, mode, name, a, b, tmp):
    """Failures of an output's EXIF payload `b` that differs from the input's `a`."""
    ta, tb = exif_thumbnail(a), exif_thumbnail(b)
    if ta is None or tb is None or ta[1] != tb[1]:
        return [f"{name}: the EXIF segment differs"]
    (u, at), (v, _) = ta, tb
    head_a, head_b = a[6:6 + at], b[6:6 + at]
    differing = [i for i in range(len(head_a)) if head_a[i] != head_b[i]]
    # Before the thumbnail only its length value (at most 4 bytes of one field) may differ; the
    # bytes after it are the input's.
    if (len(head_a) != len(head_b) or (differing and differing[-1] - differing[0] > 3)
            or a[6 + at + len(u):] != b[6 + at + len(v):]):
        return [f"{name}: the EXIF segment differs outside its thumbnail"]
    x, y = decoded(u), decoded(v)
    if x is None or y is None:
        return [f"{name}: PIL cannot read the EXIF thumbnail"]
    if (x.size, x.mode) != (y.size, y.mode):
        return [f"{name}: EXIF thumbnail {y.size} {y.mode}, not {x.size} {x.mode}"]
    if x.tobytes() == y.tobytes():
        return []
    if mode == "lossless":
        return [f"{name}: the EXIF thumbnail's pixels differ in lossless mode"]
    score, _ = scores(lighten, metric_mode(x), metric_mode(y), tmp)
    if score < FLOORS[mode]:
        return [f"{name}: EXIF thumbnail SSIMULACRA2 {score:.2f} under {FLOORS[mode]}"]
    return []


def recoded_as_ycbcr(mode, a, b):
    """Whether Adobe segment payload `b` is `a` with its transform byte set from 0 (RGB) to 1
    (YCbCr) and nothing else changed: what a perceptual mode writes where it re-encodes an
    RGB-coded image as YCbCr 4:2:0."""
    return (mode != "lossless" and a.startswith(b"Adobe") and len(a) == len(b) == 12
            and a[:11] == b[:11] and a[11] == 0 and b[11] == 1)


def check_metadata(lighten, mode, name, a, b, tmp):
    """Failures of the output's metadata segments `b` against the input's `a`."""
    if len(a) != len(b):
        return [f"{name}: metadata segments differ"]
    failures = []
    for (ma, pa), (mb, pb) in zip(a, b):
        if (ma, pa) == (mb, pb) or (ma == mb == 0xEE and recoded_as_ycbcr(mode, pa, pb)):
            continue
        if ma == mb == 0xE1 and pa.startswith(b"Exif\0\0") and pb.startswith(b"Exif\0\0"):
            failures += check_exif_thumbnail(lighten, mode, name, pa, pb, tmp)
        else:
            failures.append(f"{name}: metadata segments differ")
    return failures


def check_output(lighten, mode, name, before, after, tmp):
    """(failures of one replaced file as text, what was measured)."""
    x, y = decoded(before), decoded(after)
    if y is None:
        return ([] if x is None else [f"{name}: PIL cannot read the output"]), ""
    if x is None:
        return [], "PIL cannot read the input"  # lighten's own checks cover it
    if (x.size, x.mode) != (y.size, y.mode):
        return [f"{name}: {y.size} {y.mode}, not {x.size} {x.mode}"], ""
    failures, measured = [], "same pixels"
    if x.tobytes() != y.tobytes():
        if mode == "lossless":
            failures.append(f"{name}: pixels differ in lossless mode")
        else:
            if cmyk_with_profile(x) and cmyk_with_profile(y):
                s, ba = file_scores(lighten, before, after, x.size[0] * x.size[1], tmp)
            else:
                s, ba = scores(lighten, metric_mode(x), metric_mode(y), tmp)
            measured = f"SSIMULACRA2 {s:.2f}"
            if ba is not None:
                measured += f", butteraugli {ba:.2f}"
            if s < FLOORS[mode]:
                failures.append(f"{name}: SSIMULACRA2 {s:.2f} under {FLOORS[mode]}")
    sa, sb = segments(before), segments(after)
    if sa and sb:
        failures += check_metadata(lighten, mode, name, sa[0], sb[0], tmp)
        if not sa[1] and before[sa[2]:] != after[sb[2]:]:
            failures.append(f"{name}: the bytes after the image differ")
    return failures, measured


def check_folder(lighten, mode, folder):
    """Runs every check on the JPEGs of `folder`, prints what it measured and every failure, and
    returns the exit status."""
    failures, replaced = [], 0
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        shutil.copytree(folder, tmp / "in")
        first = optimise(lighten, mode, tmp / "in", tmp / "out", tmp / "first.json")
        for name, row in sorted(first.items()):
            if row["reason"] in OUR_BUGS:
                failures.append(f"{name}: {row['reason']}: {row['message']}")
            if row["action"] != "optimized":
                continue
            replaced += 1
            before, after = (tmp / "in" / name).read_bytes(), (tmp / "out" / name).read_bytes()
            found, measured = check_output(lighten, mode, name, before, after, tmp)
            failures += found
            print(f"{name}: {len(before)} -> {len(after)} bytes, {measured}"
                  f"{'' if found else ', checked'}")
        second = optimise(lighten, mode, tmp / "out", tmp / "again", tmp / "second.json")
        for name, row in sorted(second.items()):
            if row["reason"] in OUR_BUGS:
                failures.append(f"{name}, second run: {row['reason']}: {row['message']}")
            if (tmp / "again" / name).stat().st_size > (tmp / "out" / name).stat().st_size:
                failures.append(f"{name}: the second run made it larger")
            if row["action"] != "optimized":
                continue
            a, b = decoded((tmp / "out" / name).read_bytes()), decoded(
                (tmp / "again" / name).read_bytes())
            if a is not None and (b is None or a.tobytes() != b.tobytes()):
                failures.append(f"{name}: the second run changed pixels ({row['detail']})")
    if replaced == 0:
        failures.append("no file was optimised")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(first)} files, {replaced} optimised, {len(failures)} failures ({mode})")
    return 1 if failures else 0


def main():
    args = arguments(__doc__)
    if isinstance(args, int):
        return args
    lighten, mode, corpus = args
    return check_folder(lighten, mode, corpus)


if __name__ == "__main__":
    sys.exit(main())
