#!/usr/bin/python3
"""A mirror on a disk that fills up: the run stops starting files at the first write that finds
the disk full, says so once with the number of files not started, exits 1, and the same command
run again after space is freed finishes the rest and skips what was done.

The disk is a 1 MB tmpfs mounted in a private user and mount namespace (`unshare -rm`), so the
test needs no root. The inputs are 40 files of 100 kB that no optimiser takes, each copied into
the mirror as it is.

Usage: full_disk_test.py LIGHTEN_BINARY. Skips (exit 77) where namespaces are not allowed.
"""
import os, shutil, subprocess, sys, tempfile
from pathlib import Path

FILES, FILE_BYTES = 40, 100_000


def main():
    lighten = sys.argv[1]
    if shutil.which("unshare") is None:
        print("SKIP: unshare (util-linux) is not installed")
        return 77
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    if probe.returncode != 0:
        print("SKIP: user and mount namespaces are not allowed here:", probe.stderr.decode().strip())
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        inputs, disk = tmp / "in", tmp / "disk"
        inputs.mkdir()
        disk.mkdir()
        for i in range(FILES):
            (inputs / f"f{i:02}.bin").write_bytes(os.urandom(FILE_BYTES))
        # Both runs in one namespace: the mount lives as long as the shell.
        script = f"""
            mount -t tmpfs -o size=1m tmpfs {disk} || exit 99
            {lighten} optimize -j2 -o {disk}/out {inputs} >{tmp}/out1 2>{tmp}/err1
            echo $? >{tmp}/rc1
            ls {disk}/out | wc -l >{tmp}/count1
            mount -o remount,size=16m {disk} || exit 99
            {lighten} optimize -j2 -o {disk}/out {inputs} >{tmp}/out2 2>{tmp}/err2
            echo $? >{tmp}/rc2
            ls {disk}/out | wc -l >{tmp}/count2
        """
        shell = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True)
        if shell.returncode == 99:
            print("SKIP: tmpfs cannot be mounted in the namespace:", shell.stderr.decode().strip())
            return 77
        read = lambda name: (tmp / name).read_text()
        failures = []
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
                            f"{read('count2').strip()} entries:\n{read('err2')}{read('out2')}")
        if "already done by an earlier run" not in read("out2") + read("err2"):
            failures.append("the second run did not skip the files the first had finished")
    for f in failures:
        print("FAIL:", f)
    print("OK" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
