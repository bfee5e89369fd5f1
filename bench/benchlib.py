"""Shared parts of the side-by-side benchmarks: running tools on one core, sizing outputs,
printing tables. Each tool either leaves an output file per input, or none (kept the input).

Speeds are MB of input per second of CPU time (user + system) of the tool's processes, so they
hold on a shared, busy machine where wall-clock time would measure the neighbours."""
import os, resource, shutil, subprocess, sys, tempfile, time
from pathlib import Path


def child_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_measured(argv):
    """Runs argv to its end; exits with a reason if it fails. Returns wall seconds, CPU seconds
    (user + system) and peak resident MB of its process."""
    start = time.monotonic()
    process = subprocess.Popen(argv)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - start
    if status != 0:
        sys.exit(f"bench: {' '.join(map(str, argv))} failed (status {status})")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"

# The 16 camera photos of issue 3 (../shared/oracles/README.md), the JPEG benches' default files.
CAMERA_PHOTOS = ["canon_20d_vert", "canon_5d", "canon_lr_22mp", "dimage_ex_221212", "fuji_f40fd",
                 "galaxy_s7", "iphone6plus", "iphone_hdr", "jolla", "leica_t", "lumia800", "motog",
                 "nikon_d90", "nokia83", "noritsu_scan", "olympus_fe230"]


def camera_photos():
    """The camera photos' paths in ../shared/corpus/jpeg; exits with a reason when absent."""
    files = [SHARED / "corpus" / "jpeg" / f"{n}.jpg" for n in CAMERA_PHOTOS]
    missing = [f for f in files if not f.exists()]
    if missing:
        sys.exit(f"bench: {missing[0]} not found; give files or clone ../shared beside the repo")
    return files


def input_files(args):
    """The files named, and those under the directories named, as absolute paths."""
    files = []
    for a in map(Path, args):
        files += sorted(p for p in a.rglob("*") if p.is_file()) if a.is_dir() else [a]
    return [f.resolve() for f in files]


def run_per_file(command, files, outdir):
    """Runs command(src, dst) -> argv for every file, one at a time; returns CPU seconds."""
    start = child_cpu_seconds()
    for f in files:
        argv = command(f, outdir / f.name)
        if argv:
            subprocess.run(argv, check=False, capture_output=True)
    return child_cpu_seconds() - start


def copy_then(argv_for):
    """For tools that rewrite a file in place: copy the input to dst, then run on dst."""
    def command(src, dst):
        shutil.copyfile(src, dst)
        return argv_for(dst)
    return command


def lighten_tool(binary, *flags):
    """lighten over a staging directory of symlinks, one worker, into a mirror."""
    def run(files, outdir):
        staging = outdir / "_in"
        staging.mkdir()
        for f in files:
            os.symlink(f, staging / f.name)
        start = child_cpu_seconds()
        subprocess.run([binary, "optimize", str(staging), "-o", str(outdir / "_out"), "--jobs", "1",
                        "--no-journal", "--quiet", "--follow-symlinks", *flags], check=True)
        seconds = child_cpu_seconds() - start
        for f in files:
            shutil.move(outdir / "_out" / f.name, outdir / f.name)
        return seconds
    return run


def measure(tools, files, same_check=None, kept_check=None):
    """Runs every tool on the same files; prints a table of bytes saved and MB/s per core.
    A tool's output counts only when smaller than its input (every tool may keep the input).
    same_check(input, output) -> bool, when given, fills a column "same"; kept_check(input,
    output) -> bool (every metadata byte and trailing byte still there) a column "data kept"."""
    total_in = sum(f.stat().st_size for f in files)
    print(f"{len(files)} files, {total_in:,} bytes, one core per tool, MB/s per CPU second\n")
    header = f"{'tool':<46} {'bytes out':>12} {'saved':>7} {'MB/s/core':>10}"
    header += f" {'same':>10}" if same_check else ""
    print(header + (f" {'data kept':>10}" if kept_check else ""))
    results = {}
    for name, run in tools:
        with tempfile.TemporaryDirectory() as tmp:
            outdir = Path(tmp)
            seconds = run(files, outdir)
            total_out, same, intact = 0, 0, 0
            for f in files:
                out = outdir / f.name
                size_in = f.stat().st_size
                kept = not out.exists() or out.stat().st_size >= size_in or out.stat().st_size == 0
                total_out += size_in if kept else out.stat().st_size
                if same_check:
                    same += kept or same_check(f, out)
                if kept_check:
                    intact += kept or kept_check(f, out)
            saved = 100.0 * (total_in - total_out) / total_in
            line = (f"{name:<46} {total_out:>12,} {saved:>6.2f}% "
                    f"{total_in / 1e6 / max(seconds, 1e-9):>10.2f}")
            if same_check:
                line += f" {same:>4}/{len(files)}"
            if kept_check:
                line += f" {intact:>6}/{len(files)}"
            print(line, flush=True)
            results[name] = saved
    return results
