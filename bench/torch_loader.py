#!/usr/bin/python3
"""A real loader over the same files as `lighten probe`: torch.utils.data.DataLoader with W worker
processes, each opening, reading and decoding (PIL, full-size RGB) whole batches, optionally
through the same emulated link: one token bucket shared by every worker process (a
multiprocessing value and lock), drawn in 256 KiB chunks, plus a delay per open.

Usage: bench/torch_loader.py PATH [--workers W] [--batch B] [--step-ms S] [--bandwidth 200mbit]
                             [--latency MS] [--passes P] [--cold] [--decoder pil|torchvision]
                             [--transfer] [--json]
Prints samples/s (and MB/s); with --json one JSON object instead. Needs python3-torch,
python3-torchvision and python3-pil (Debian packages). Samples are taken cyclically over the
sorted files, P passes, the same order as the probe's loader model.
"""
import argparse, io, json, multiprocessing, os, re, sys, time
from pathlib import Path

CHUNK = 256 << 10


def parse_bandwidth(text):
    """The same spellings as `lighten probe --bandwidth`: 1gbit, 200mbit, 50MB/s (decimal)."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*([kKmMgGtT]?)(bit|b|B|bps)?(/s|ps)?\s*", text)
    if not m or float(m.group(1)) <= 0 or (not m.group(2) and not m.group(3)):
        sys.exit(f"torch_loader: --bandwidth {text}: write it like 1gbit, 200mbit or 50MB/s")
    value = float(m.group(1)) * 1000 ** ("kmgt".index(m.group(2).lower()) + 1 if m.group(2) else 0)
    is_bytes = m.group(3) == "B"
    return value if is_bytes else value / 8


class SharedBucket:
    """The probe's token bucket across processes: reserve under a lock, sleep outside it."""

    def __init__(self, rate, burst):
        self.rate, self.burst = rate, burst
        self.lock = multiprocessing.Lock()
        self.tokens = multiprocessing.RawValue("d", burst)
        self.last = multiprocessing.RawValue("d", -1.0)

    def acquire(self, amount):
        with self.lock:
            now = time.monotonic()
            if self.last.value < 0:
                self.last.value = now
            if now > self.last.value:
                self.tokens.value = min(self.burst, self.tokens.value + (now - self.last.value) * self.rate)
                self.last.value = now
            self.tokens.value -= amount
            wait = 0.0 if self.tokens.value >= 0 else -self.tokens.value / self.rate
        if wait > 0:
            time.sleep(wait)


def make_dataset(files, passes, bucket, latency_ms, transfer, decoder):
    import numpy as np
    import torch
    from PIL import Image

    class Files(torch.utils.data.Dataset):
        def __len__(self):
            return len(files) * passes

        def __getitem__(self, i):
            path = files[i % len(files)]
            with open(path, "rb", buffering=0) as f:
                if latency_ms > 0:
                    time.sleep(latency_ms / 1000)
                size = os.fstat(f.fileno()).st_size
                parts, got = [], 0
                while got < size:
                    want = min(CHUNK, size - got)
                    if bucket:
                        bucket.acquire(want)
                    data = f.read(want)
                    if not data:
                        break
                    parts.append(data)
                    got += len(data)
            data = b"".join(parts)
            if decoder == "torchvision":  # libjpeg-turbo straight to RGB, as the probe decodes
                try:
                    from torchvision.io import ImageReadMode, decode_image
                    image = decode_image(torch.frombuffer(bytearray(data), dtype=torch.uint8),
                                         mode=ImageReadMode.RGB)
                    return (image if transfer else tuple(image.shape)), len(data)
                except Exception:
                    return None, len(data)
            try:
                image = Image.open(io.BytesIO(data))
                image.load()  # full-size decode; libjpeg-turbo gives RGB for YCbCr directly
                if image.mode != "RGB":
                    image = image.convert("RGB")
                if transfer:  # the full frame to the main process, as without a crop
                    return torch.from_numpy(np.array(image)), len(data)
                return image.size, len(data)
            except Exception:  # a file PIL cannot decode still cost its read, as in the probe
                return None, len(data)

    return Files()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--step-ms", type=float, default=0)
    ap.add_argument("--bandwidth", default="")
    ap.add_argument("--latency", type=float, default=0)
    ap.add_argument("--passes", type=int, default=8)
    ap.add_argument("--cold", action="store_true", help="evict files (posix_fadvise) first")
    ap.add_argument("--transfer", action="store_true",
                    help="send full-size tensors to the main process (default: only the size, as "
                         "after a crop to a training resolution)")
    ap.add_argument("--decoder", choices=["pil", "torchvision"], default="pil",
                    help="PIL (the common case) or torchvision.io (libjpeg-turbo and libpng "
                         "directly, as the probe decodes)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        sys.exit("torch_loader: python3-torch is not installed (apt-get install python3-torch "
                 "python3-torchvision)")
    root = Path(args.path)
    files = sorted(str(p) for p in root.rglob("*") if p.is_file()) if root.is_dir() else [str(root)]
    if not files:
        sys.exit(f"torch_loader: {root}: no files")
    for f in files:  # warm: the page cache holds every file; cold: none
        fd = os.open(f, os.O_RDONLY)
        try:
            if args.cold:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            else:
                while os.read(fd, 1 << 20):
                    pass
        finally:
            os.close(fd)
    bucket = None
    if args.bandwidth:
        rate = parse_bandwidth(args.bandwidth)
        bucket = SharedBucket(rate, min(CHUNK, rate * 0.010))
    torch.set_num_threads(1)
    dataset = make_dataset(files, args.passes, bucket, args.latency, args.transfer,
                           args.decoder)
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch, num_workers=args.workers,
                                         collate_fn=list, shuffle=False, prefetch_factor=2,
                                         multiprocessing_context="fork")
    samples = nbytes = 0
    start = time.perf_counter()
    for batch in loader:
        samples += len(batch)
        nbytes += sum(n for _, n in batch)
        if args.step_ms > 0:
            time.sleep(args.step_ms / 1000)
    seconds = time.perf_counter() - start
    result = {"files": len(files), "samples": samples, "seconds": seconds,
              "samples_per_s": samples / seconds, "mb_per_s": nbytes / 1e6 / seconds,
              "workers": args.workers, "batch": args.batch, "bandwidth": args.bandwidth or None}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{samples} samples in {seconds:.2f} s: {result['samples_per_s']:.1f} samples/s, "
              f"{result['mb_per_s']:.1f} MB/s ({args.workers} workers, batch {args.batch}"
              f"{', link ' + args.bandwidth if args.bandwidth else ''})")


if __name__ == "__main__":
    main()
