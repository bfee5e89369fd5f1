#!/usr/bin/python3
"""Opens lighten's video outputs with independent readers, as users would.

Every file of corpus/video and corpus/broken goes through `lighten optimize` into a mirror; for
every input ffprobe can read, the output must report the same streams (type, codec, width,
height, frame rate, duration, frames counted by decoding), `ffmpeg -v error -f null` must print
nothing new, every decoded frame of every stream must hash the same (framemd5: lossless), and
OpenCV must read the same number of frames of the same shape.

Usage: video_readers_test.py LIGHTEN_BINARY SHARED_DIR
Skips (exit 77) when the corpus, ffmpeg or OpenCV is missing.
"""
import json, shutil, subprocess, sys, tempfile
from pathlib import Path

SKIP = 77


def run(cmd, timeout=600):
    return subprocess.run(cmd, capture_output=True, check=False, timeout=timeout)


def probe(path):
    r = run(["ffprobe", "-v", "error", "-count_frames", "-show_entries",
             "stream=codec_type,codec_name,width,height,r_frame_rate,avg_frame_rate,"
             "nb_read_frames,duration,sample_rate,channels:format=duration,format_name",
             "-of", "json", str(path)])
    if r.returncode != 0:
        return None
    return json.loads(r.stdout)


def decode_errors(path):
    return run(["ffmpeg", "-nostdin", "-v", "error", "-i", str(path), "-map", "0", "-f", "null",
                "-"]).stderr


def frame_hashes(path):
    r = run(["ffmpeg", "-nostdin", "-v", "quiet", "-i", str(path), "-map", "0", "-f", "framemd5",
             "-"])
    return [l for l in r.stdout.decode(errors="replace").splitlines() if not l.startswith("#")]


def opencv_frames(path):
    import cv2
    cap = cv2.VideoCapture(str(path))
    shapes = []
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        shapes.append(frame.shape)
    cap.release()
    return len(shapes), sorted(set(shapes))


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    lighten, shared = Path(sys.argv[1]), Path(sys.argv[2])
    dirs = [shared / "corpus" / "video", shared / "corpus" / "broken"]
    if not dirs[0].is_dir() or not shutil.which("ffprobe") or not shutil.which("ffmpeg"):
        print("skipped: corpus or ffmpeg missing")
        return SKIP
    try:
        import cv2  # noqa: F401
    except ImportError:
        print("skipped: python3-opencv missing")
        return SKIP
    failures, replaced, checked = [], 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        staging, out = Path(tmp) / "in", Path(tmp) / "out"
        staging.mkdir()
        files = [f for d in dirs if d.is_dir() for f in sorted(d.iterdir()) if f.is_file()]
        for f in files:
            shutil.copyfile(f, staging / f"{f.parent.name}_{f.name}")
        # One made here by ffmpeg's muxer (OpenDML indx/ix00 and idx1, PCM audio, standard
        # Huffman tables as cameras write them), so the test does not rest on the corpus alone.
        run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
             "testsrc2=size=320x240:rate=25", "-f", "lavfi", "-i", "sine=f=440:r=16000", "-t", "2",
             "-map", "0", "-map", "1", "-c:a", "pcm_s16le", "-c:v", "mjpeg", "-q:v", "3",
             "-huffman", "default", str(staging / "synth_mjpeg_pcm.avi")])
        r = run([str(lighten), "optimize", str(staging), "-o", str(out), "--no-journal",
                 "--quiet"], timeout=1500)
        if r.returncode not in (0, 1, 2):
            print(r.stdout.decode(), r.stderr.decode())
            return 1
        for src in sorted(staging.iterdir()):
            dst = out / src.name
            before = probe(src)
            fmt = (before or {}).get("format", {}).get("format_name", "")
            if before is None or "pipe" in fmt or "image2" in fmt:
                continue  # not a video; images and broken files are checked by the C++ tests
            checked += 1
            if not dst.exists():
                failures.append(f"{src.name}: no output (mirror mode copies kept files)")
                continue
            changed = src.read_bytes() != dst.read_bytes()
            replaced += changed
            if not changed:
                continue
            problems = []
            if dst.stat().st_size >= src.stat().st_size:
                problems.append("output not smaller")
            if probe(dst) != before:
                problems.append(f"ffprobe differs: {before} vs {probe(dst)}")
            if decode_errors(dst) != decode_errors(src):
                problems.append("ffmpeg reports new decode errors: " +
                                decode_errors(dst).decode(errors="replace")[:300])
            if frame_hashes(dst) != frame_hashes(src):
                problems.append("decoded frames differ (framemd5)")
            a, b = opencv_frames(src), opencv_frames(dst)
            if a != b or a[0] == 0:
                problems.append(f"OpenCV reads {b} instead of {a}")
            status = "FAIL " + "; ".join(problems) if problems else "ok"
            print(f"{src.name}: {src.stat().st_size} -> {dst.stat().st_size} bytes, "
                  f"{a[0]} frames: {status}")
            if problems:
                failures.append(f"{src.name}: " + "; ".join(problems))
    print(f"{checked} videos checked, {replaced} replaced, {len(failures)} failures")
    for f in failures:
        print("FAIL", f)
    if replaced < 2:
        print("FAIL the Motion-JPEG AVIs were not optimised")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
