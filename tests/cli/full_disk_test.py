#!/usr/bin/python3
"""Runs on a disk that fills up, each on a tmpfs mounted in a private user and mount namespace
(`unshare -rm`), so the test needs no root:

1. A mirror of 40 files of 100 kB (no optimiser takes them; each is copied) on 1 MB: the run
   stops starting files at the first write that finds the disk full, says so once with the
   number of files not started, exits 1; the same command run after space is freed finishes the
   rest and skips what was done.
2. A mirror of 400 files of 2 kB on 1 MB, where the journal fills the disk too: the run still
   ends with its summary table and a message, exits 1, and the next run finishes.
3. In place on a disk with 40 kB free: a picture whose output does not fit there fails, and the
   run goes on, since each later picture it shrinks frees space.
4. A mirror with room, whose journal (--journal) is on a disk that fills during the run: the
   run says that rows were not written and exits 1.
5. A mirror of 60 symbolic links on a disk of 30 inodes: the first link that finds no room
   stops the run; the links after it are counted as not started, not failed one by one, and
   the same command after a remount makes them all.

Usage: full_disk_test.py LIGHTEN_BINARY. Skips (exit 77) where namespaces are not allowed.
"""
import os, shutil, subprocess, sys, tempfile
from pathlib import Path

FILES, FILE_BYTES = 40, 100_000


def in_namespace(script):
    """Runs a shell script in a new user and mount namespace; None, or why it could not."""
    shell = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True)
    if shell.returncode == 99:
        return "tmpfs cannot be mounted in the namespace: " + shell.stderr.decode().strip()
    return None


def random_inputs(tmp, count, size, prefix):
    """tmp/in holding `count` files of `size` random bytes (nothing optimises them)."""
    tmp.mkdir()
    inputs = tmp / "in"
    inputs.mkdir()
    for i in range(count):
        (inputs / f"{prefix}{i:03}.bin").write_bytes(os.urandom(size))
    return inputs


def two_runs(lighten, tmp, target_args, mount="size=1m", remount="size=16m", count="ls"):
    """The script of two runs of lighten on a tmpfs mounted with `mount`, remounted with
    `remount` in between; each run's stdout, stderr, exit status and the count of what the
    mirror holds (`count`: "ls" for its entries, "links" for its symbolic links) under tmp."""
    disk = tmp / "disk"
    disk.mkdir()
    listing = f"ls {disk}/out" if count == "ls" else f"find {disk}/out -type l"
    runs = ""
    for n in (1, 2):
        runs += f"""
            {lighten} optimize -j2 {target_args} >{tmp}/out{n} 2>{tmp}/err{n}
            echo $? >{tmp}/rc{n}
            {listing} | wc -l >{tmp}/count{n}
            mount -o remount,{remount} {disk} || exit 99"""
    return f"mount -t tmpfs -o {mount} tmpfs {disk} || exit 99" + runs


def mirror_fills_up(lighten, tmp, failures):
    inputs = random_inputs(tmp, FILES, FILE_BYTES, "f")
    why = in_namespace(two_runs(lighten, tmp, f"-o {tmp}/disk/out {inputs}"))
    if why:
        return why
    read = lambda name: (tmp / name).read_text()
    err1 = read("err1")
    if read("rc1").strip() != "1":
        failures.append(f"the first run exited {read('rc1').strip()}, not 1")
    if err1.count("stopped, the disk is full") != 1 or "No space left on device" not in err1:
        failures.append("the first run did not say once that it stopped on a full disk:\n" + err1)
    written = int(read("count1"))
    # About ten files fit; some start before the first failure, the rest must not.
    if not 0 < written < FILES // 2:
        failures.append(f"{written} of {FILES} files in the mirror after the first run")
    if err1.count("failed (io-error)") > 4:
        failures.append("files kept starting after the disk was full:\n" + err1)
    if read("rc2").strip() != "0" or int(read("count2")) != FILES:
        failures.append(f"the second run exited {read('rc2').strip()} with "
                        f"{read('count2').strip()} files:\n{read('err2')}{read('out2')}")
    if "already done by an earlier run" not in read("out2") + read("err2"):
        failures.append("the second run did not skip the files the first had finished")
    return None


def journal_fills_up(lighten, tmp, failures):
    count = 400
    inputs = random_inputs(tmp, count, 2000, "s")
    in_namespace(two_runs(lighten, tmp, f"-o {tmp}/disk/out {inputs}"))
    read = lambda name: (tmp / name).read_text()
    if read("rc1").strip() != "1":
        failures.append(f"small files: the first run exited {read('rc1').strip()}, not 1:\n"
                        + read("err1"))
    if "kind " not in read("out1"):
        failures.append("small files: the first run printed no summary:\n" + read("out1"))
    if "disk is full" not in read("err1") and "journal" not in read("err1"):
        failures.append("small files: the first run did not say why it ended:\n" + read("err1"))
    if read("rc2").strip() != "0" or int(read("count2")) != count:
        failures.append(f"small files: the second run exited {read('rc2').strip()} with "
                        f"{read('count2').strip()} files:\n{read('err2')}")


def in_place_goes_on(lighten, tmp, failures):
    try:
        from PIL import Image
    except ImportError:
        print("in place: not run, PIL (python3-pil) is not installed")
        return
    tmp.mkdir()
    staging = tmp / "staging"
    staging.mkdir()
    # Noise of 16 levels, written without compression, packs to about half (more than the free
    # space holds); flat pictures written so shrink to almost nothing.
    noise = bytes(b & 0x0F for b in os.urandom(120000))
    Image.frombytes("RGB", (200, 200), noise).save(staging / "a_noise.png", compress_level=0)
    for i in range(12):
        Image.new("RGB", (160, 160), (10 * i, 80, 160)).save(staging / f"flat{i:02}.png",
                                                            compress_level=0)
    before = {p.name: p.stat().st_size for p in staging.iterdir()}
    disk = tmp / "disk"
    disk.mkdir()
    script = f"""
        mount -t tmpfs -o size=2m tmpfs {disk} || exit 99
        cp -r {staging} {disk}/in
        dd if=/dev/zero of={disk}/filler bs=4k 2>/dev/null
        truncate -s -40K {disk}/filler
        XDG_STATE_HOME={tmp}/state {lighten} optimize -j1 --in-place {disk}/in \
            >{tmp}/out1 2>{tmp}/err1
        echo $? >{tmp}/rc1
        ls -l {disk}/in >{tmp}/sizes
    """
    in_namespace(script)
    read = lambda name: (tmp / name).read_text()
    if "a_noise.png: failed (io-error)" not in read("err1") or "No space" not in read("err1"):
        failures.append("in place, the noise found room after all (the case tests nothing):\n"
                        + read("err1"))
    if "disk is full" in read("err1"):
        failures.append("in place, the run stopped on the first file that did not fit:\n"
                        + read("err1"))
    sizes = {line.split()[-1]: int(line.split()[4])
             for line in read("sizes").splitlines() if line.endswith(".png")}
    shrunk = sum(1 for name, size in sizes.items() if size < before[name])
    if sizes.get("a_noise.png") != before["a_noise.png"] or shrunk != 12:
        failures.append(f"in place: {shrunk} of the 12 flat pictures shrank, the noise is "
                        f"{sizes.get('a_noise.png')} of {before['a_noise.png']} bytes:\n"
                        + read("err1") + read("out1"))


def journal_alone_fills_up(lighten, tmp, failures):
    inputs = random_inputs(tmp, 400, 2000, "s")
    disk, small = tmp / "disk", tmp / "small"
    disk.mkdir()
    small.mkdir()
    script = f"""
        mount -t tmpfs -o size=16m tmpfs {disk} || exit 99
        mount -t tmpfs -o size=96k tmpfs {small} || exit 99
        {lighten} optimize -j2 -o {disk}/out --journal {small}/j.sqlite {inputs} \
            >{tmp}/out1 2>{tmp}/err1
        echo $? >{tmp}/rc1
    """
    in_namespace(script)
    read = lambda name: (tmp / name).read_text()
    if read("rc1").strip() != "1" or "rows were not written" not in read("err1"):
        failures.append(f"a journal that filled its disk: exit {read('rc1').strip()}, and no "
                        "word of it:\n" + read("err1"))


def links_fill_up(lighten, tmp, failures):
    inputs = random_inputs(tmp, 3, 2000, "f")
    links = 60
    for i in range(links):
        (inputs / f"l{i:02}").symlink_to(f"target-{i}")
    in_namespace(two_runs(lighten, tmp, f"-o {tmp}/disk/out {inputs}",
                          mount="size=4m,nr_inodes=30", remount="nr_inodes=1000", count="links"))
    read = lambda name: (tmp / name).read_text()
    err1 = read("err1")
    made = int(read("count1"))
    if read("rc1").strip() != "1" or "stopped, the disk is full" not in err1:
        failures.append(f"links: the first run exited {read('rc1').strip()} without saying the "
                        "disk is full:\n" + err1)
    if err1.count("symbolic link not made") != 1:
        failures.append("links: links were still tried after the disk was full:\n"
                        + err1[:1500])
    if f"{links - made - 1} symbolic links not started" not in err1:
        failures.append(f"links: {made} made, and the rest not counted as not started:\n"
                        + err1[-1500:])
    if read("rc2").strip() != "0" or int(read("count2")) != links:
        failures.append(f"links: the second run exited {read('rc2').strip()} with "
                        f"{read('count2').strip()} links:\n{read('err2')}")


def main():
    lighten = sys.argv[1]
    if shutil.which("unshare") is None:
        print("SKIP: unshare (util-linux) is not installed")
        return 77
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    if probe.returncode != 0:
        print("SKIP: user and mount namespaces are not allowed here:",
              probe.stderr.decode().strip())
        return 77
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        skip = mirror_fills_up(lighten, tmp / "a", failures)
        if skip:
            print("SKIP:", skip)
            return 77
        journal_fills_up(lighten, tmp / "b", failures)
        in_place_goes_on(lighten, tmp / "c", failures)
        journal_alone_fills_up(lighten, tmp / "d", failures)
        links_fill_up(lighten, tmp / "e", failures)
    for f in failures:
        print("FAIL:", f)
    print("OK" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
