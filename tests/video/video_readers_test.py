#!/usr/bin/python3
"""Opens lighten's video outputs with independent readers, as users would.

Every file of corpus/video and corpus/broken goes through `lighten optimize` into a mirror; for
every input ffprobe can read, the output must report the same streams (type, codec, width,
height, frame rate, duration, frames counted by decoding), `ffmpeg -v error -f null` must print
nothing new, and OpenCV must read the same number of frames of the same shape. Lossless mode:
every decoded frame of every stream hashes the same (framemd5). Perceptual modes (--mode): every
non-video stream still hashes the same, and every video frame's JPEG image as stored (extracted
with -c copy) scores at least the mode's SSIMULACRA2 floor against the input's (`lighten
compare`, libjpeg-turbo decode, as the JPEG optimiser's gate measures), and so does every frame
as ffmpeg decodes it to RGB (what OpenCV and decord show; lighten's reader gate).

MP4/MOV re-encoded in a perceptual mode are held to the same checks, durations within a frame,
and every frame as ffmpeg decodes it at or above the floor.

Usage: video_readers_test.py LIGHTEN_BINARY SHARED_DIR [--mode visually-lossless|high|compact]
Skips (exit 77) when the corpus, ffmpeg or OpenCV is missing.
"""
import json, shutil, subprocess, sys, tempfile
from pathlib import Path

SKIP = 77
FLOORS = {"visually-lossless": 85.0, "high": 80.0, "compact": 70.0}


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


def video_codec(probed):
    return next((s.get("codec_name") for s in probed.get("streams", [])
                 if s.get("codec_type") == "video"), None)


def same_probe(before, after):
    """Equal, but for durations, which may move by one frame's length (a re-encode's muxer
    rounds the last frame), and r_frame_rate; Motion-JPEG AVIs must match exactly."""
    if before == after or after is None or video_codec(before) == "mjpeg":
        return before == after
    frames = max([int(s.get("nb_read_frames", 0) or 0) for s in before["streams"]] + [1])
    slack = float(before["format"].get("duration", 0)) / frames + 0.002

    def strip(p):
        q = json.loads(json.dumps(p))
        for item in q["streams"] + [q["format"]]:
            item.pop("duration", None)
            # ffprobe's guess from the container's sample durations: `ffmpeg -c copy` moves it
            # too (gps.mp4: 30/1 -> 45000/1499); every frame's time is compared by lighten.
            item.pop("r_frame_rate", None)
        return q

    durations = [(float(x.get("duration", 0)), float(y.get("duration", 0)))
                 for x, y in zip(before["streams"] + [before["format"]],
                                 after["streams"] + [after["format"]])]
    return strip(before) == strip(after) and all(abs(x - y) <= slack for x, y in durations)


def decode_errors(path):
    return run(["ffmpeg", "-nostdin", "-v", "error", "-i", str(path), "-map", "0", "-f", "null",
                "-"]).stderr


def frame_hashes(path, streams="0"):
    r = run(["ffmpeg", "-nostdin", "-v", "quiet", "-i", str(path), "-map", streams, "-f",
             "framemd5", "-"])
    return [l for l in r.stdout.decode(errors="replace").splitlines() if not l.startswith("#")]


def frame_files(path, workdir, how):
    """Every frame of the first video stream: its JPEG image as stored, or as ffmpeg decodes it."""
    workdir.mkdir(parents=True)
    if how == "jpeg":
        args = ["-c:v", "copy", "-bsf:v", "mjpeg2jpeg", str(workdir / "%06d.jpg")]
    else:
        args = ["-vsync", "passthrough", str(workdir / "%06d.png")]
    run(["ffmpeg", "-nostdin", "-v", "error", "-i", str(path), "-map", "0:v:0", *args])
    return sorted(workdir.iterdir())


def frame_scores(lighten, src, dst, workdir, how):
    """SSIMULACRA2 of every frame of dst against the same frame of src (None: counts differ)."""
    a = frame_files(src, workdir / f"{how}_a", how)
    b = frame_files(dst, workdir / f"{how}_b", how)
    if len(a) != len(b) or not a:
        return None
    scores = []
    for x, y in zip(a, b):
        r = run([str(lighten), "compare", "--no-butteraugli", "--json", str(x), str(y)])
        scores.append(json.loads(r.stdout)["ssimulacra2"] if r.returncode == 0 else -1.0)
    return scores


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
    args = sys.argv[1:]
    mode = "lossless"
    if len(args) == 4 and args[2] == "--mode" and args[3] in FLOORS:
        mode, args = args[3], args[:2]
    if len(args) != 2:
        print(__doc__)
        return 2
    lighten, shared = Path(args[0]), Path(args[1])
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
                 "--quiet", "--mode", mode], timeout=1500)
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
            after = probe(dst)
            if not same_probe(before, after):
                problems.append(f"ffprobe differs: {before} vs {after}")
            if decode_errors(dst) != decode_errors(src):
                problems.append("ffmpeg reports new decode errors: " +
                                decode_errors(dst).decode(errors="replace")[:300])
            note = ""
            if mode == "lossless":
                if frame_hashes(dst) != frame_hashes(src):
                    problems.append("decoded frames differ (framemd5)")
            else:
                if frame_hashes(dst, "0:a?") != frame_hashes(src, "0:a?"):
                    problems.append("an audio stream changed (framemd5)")
                work = Path(tmp) / "frames" / src.name
                mjpeg = video_codec(before) == "mjpeg"
                decoded = frame_scores(lighten, src, dst, work, "ffmpeg")
                # Motion-JPEG frames are gated both as their JPEG images decode and as ffmpeg
                # decodes them; other codecs as ffmpeg decodes them.
                views = [("as ffmpeg decodes them", decoded)]
                if mjpeg:
                    views.insert(0, ("as JPEG images", frame_scores(lighten, src, dst, work, "jpeg")))
                for view, scores in views:
                    if scores is None:
                        problems.append(f"the frames could not be extracted alike {view}")
                        continue
                    worst = min(scores)
                    below = sum(s < FLOORS[mode] for s in scores)
                    if below:
                        problems.append(f"{below} of {len(scores)} frames {view} score under "
                                        f"{FLOORS[mode]} (worst {worst:.2f})")
                    note += f", SSIMULACRA2 of {len(scores)} frames {view} min {worst:.2f}"
                shutil.rmtree(work, ignore_errors=True)
            a, b = opencv_frames(src), opencv_frames(dst)
            if a != b or a[0] == 0:
                problems.append(f"OpenCV reads {b} instead of {a}")
            status = "FAIL " + "; ".join(problems) if problems else "ok"
            print(f"{src.name}: {src.stat().st_size} -> {dst.stat().st_size} bytes, "
                  f"{a[0]} frames{note}: {status}")
            if problems:
                failures.append(f"{src.name}: " + "; ".join(problems))
    print(f"{mode}: {checked} videos checked, {replaced} replaced, {len(failures)} failures")
    for f in failures:
        print("FAIL", f)
    if replaced < 2:
        print("FAIL the Motion-JPEG AVIs (and, in compact mode, the H.264 videos) were not "
              "optimised")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
