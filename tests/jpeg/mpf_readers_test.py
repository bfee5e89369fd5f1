#!/usr/bin/python3
"""Opens lighten's outputs of Multi-Picture files (MPF: camera previews, stereo pairs, gain
maps) with PIL, an independent MPF reader, as users would.

Every JPEG and MPO of corpus/jpeg that PIL reads as MPO with more than one image goes through
`lighten optimize` into a mirror. In each output PIL must find as many images, each where the
output's MPF index says (PIL's own parse) and of the same size and mode as the input's. Lossless
mode: every image decodes to the same pixels. A perceptual mode (--mode): the primary image and
every view (large thumbnail, panorama, disparity, multi-angle) score at least the mode's
SSIMULACRA2 floor against the input's (`lighten compare`), every other image (a gain map, an
image of undefined use) decodes to the same pixels. At least one secondary image must have
become smaller. Where the XMP lists the images after the primary with their lengths (Google's
container directory of Ultra HDR gain maps: Item:Length), each recorded length must be the size
of the secondary image in its place, in order, as readers that go by it would find them.

Usage: mpf_readers_test.py LIGHTEN_BINARY SHARED_DIR [--mode visually-lossless|high|compact]
Skips (exit 77) when the corpus or PIL is missing, or the corpus holds no MPF file.
"""
import io, re, subprocess, sys, tempfile, warnings
from pathlib import Path

from corpus_script import SKIP, arguments

warnings.simplefilter("ignore")  # PIL warns of each malformed MPO of the corpus as it opens it

FLOORS = {"visually-lossless": 85.0, "high": 80.0, "compact": 70.0}
VIEWS = {"Large Thumbnail (VGA Equivalent)", "Large Thumbnail (Full HD Equivalent)",
         "Multi-Frame Image (Panorama)", "Multi-Frame Image: (Disparity)",
         "Multi-Frame Image: (Multi-Angle)"}


def images(path):
    """[(MP type, bytes)] of every image PIL's MPF parse locates in the file."""
    from PIL import Image
    data = path.read_bytes()
    try:
        im = Image.open(path)
    except OSError:  # a JPEG variant PIL cannot open (12-bit, arithmetic) holds no MPF for it
        return None
    with im:
        if im.format != "MPO" or getattr(im, "n_frames", 1) < 2:
            return None
        offsets = im._MpoImageFile__mpoffsets
        entries = im.mpinfo[0xB002]
    return [(e["Attribute"]["MPType"], data[o:o + e["Size"]]) for o, e in zip(offsets, entries)]


def recorded_lengths(path):
    """The Item:Length values of the XMP container directory, in order (empty without one)."""
    data = path.read_bytes()
    if b"http://ns.google.com/photos/1.0/container/" not in data:
        return []
    return [int(n) for n in re.findall(rb'Item:Length="(\d+)"', data)]


def decoded(jpeg, name):
    from PIL import Image
    with Image.open(io.BytesIO(jpeg)) as im:
        if im.format not in ("JPEG", "MPO"):
            raise AssertionError(f"{name}: PIL reads {im.format}, not a JPEG")
        im.load()
        return im.convert("RGB") if im.mode not in ("L", "RGB") else im.copy()


def score(lighten, a, b, tmp):
    pa, pb = tmp / "a.png", tmp / "b.png"
    a.save(pa)
    b.save(pb)
    out = subprocess.run([lighten, "compare", str(pa), str(pb)], capture_output=True, text=True,
                         check=True).stdout
    return float(out.split("ssimulacra2:")[1].split()[0])


def main():
    args = arguments(__doc__)
    if isinstance(args, int):
        return args
    lighten, mode, corpus = args
    inputs = [p for p in sorted(corpus.iterdir())
              if p.suffix.lower() in (".jpg", ".jpeg", ".mpo") and images(p)]
    if not inputs:
        print("SKIP: no MPF file in the corpus")
        return SKIP
    failures, smaller = [], 0
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for src in inputs:
            (tmp / "in").mkdir(exist_ok=True)
            (tmp / "in" / src.name).write_bytes(src.read_bytes())
        subprocess.run([lighten, "optimize", "--quiet", "--no-journal", "--mode", mode, "-o",
                        str(tmp / "out"), str(tmp / "in")], check=True)
        for src in inputs:
            before, after = images(src), images(tmp / "out" / src.name)
            name = src.name
            if after is None or len(after) != len(before):
                failures.append(f"{name}: PIL finds {0 if after is None else len(after)} images, "
                                f"not {len(before)}")
                continue
            for k, ((kind, a), (kind_b, b)) in enumerate(zip(before, after)):
                what = f"{name} image {k + 1} ({kind})"
                if kind != kind_b:
                    failures.append(f"{what}: MP type became {kind_b}")
                    continue
                if k > 0 and len(b) < len(a):
                    smaller += 1
                x, y = decoded(a, what), decoded(b, what)
                if (x.size, x.mode) != (y.size, y.mode):
                    failures.append(f"{what}: {y.size} {y.mode}, not {x.size} {x.mode}")
                elif mode == "lossless" or (k > 0 and kind not in VIEWS):
                    if x.tobytes() != y.tobytes():
                        failures.append(f"{what}: pixels differ")
                else:
                    s = score(lighten, x.convert("RGB"), y.convert("RGB"), tmp)
                    if s < FLOORS[mode]:
                        failures.append(f"{what}: SSIMULACRA2 {s:.2f} under {FLOORS[mode]}")
                print(f"{what}: {len(a)} -> {len(b)} bytes")
            lengths = recorded_lengths(tmp / "out" / src.name)
            sizes = [len(b) for _, b in after[1:len(lengths) + 1]]
            if lengths and lengths != sizes:
                failures.append(f"{name}: the XMP records lengths {lengths}, the images are {sizes}")
    if smaller == 0:
        failures.append("no secondary image became smaller")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
