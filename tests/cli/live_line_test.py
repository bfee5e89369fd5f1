#!/usr/bin/python3
"""The live progress line in a real pseudo-terminal, as a user at a narrow terminal sees it.

Runs `lighten optimize --dry-run` over a few corpus photos in a 44-column pty: every redraw of
the line must be "\\r TEXT ESC[K" with TEXT shorter than the terminal (so it never wraps or
scrolls), and NO_COLOR must leave no colour codes. With TERM=dumb, which cannot erase a line,
lighten must write plain lines instead.

Usage: live_line_test.py LIGHTEN_BINARY SHARED_DIR. Skips (exit 77) without the corpus.
"""
import fcntl, os, re, shutil, struct, subprocess, sys, tempfile, termios
from pathlib import Path

COLUMNS = 44


def run_in_pty(cmd, env):
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, COLUMNS, 0, 0))
    p = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(), out.decode("utf-8", "replace")


def main():
    lighten, shared = sys.argv[1], Path(sys.argv[2])
    photos = sorted((shared / "corpus" / "jpeg").glob("*.jpg"))[:6]
    if not photos:
        print(f"SKIP: no corpus photos under {shared / 'corpus' / 'jpeg'}")
        return 77
    errors = []
    with tempfile.TemporaryDirectory(prefix="lighten-live-") as tmp:
        for p in photos:
            shutil.copy(p, tmp)
        env = dict(os.environ, TERM="xterm-256color", NO_COLOR="1")
        env.pop("COLUMNS", None)
        rc, out = run_in_pty([lighten, "optimize", "--dry-run", "--no-journal", "--jobs", "1",
                              tmp], env)
        if rc != 0:
            errors.append(f"exit {rc}: {out}")
        redraws = re.findall(r"\r([^\r\n\x1b]*)\x1b\[K", out)
        drawn = [t for t in redraws if t]
        if not drawn:
            errors.append(f"no live line was drawn: {out!r}")
        for text in drawn:
            if len(text) >= COLUMNS:
                errors.append(f"live line of {len(text)} columns on a {COLUMNS}-column terminal: "
                              f"{text!r}")
        if re.search(r"\x1b\[[0-9;]*m", out):
            errors.append("colour codes despite NO_COLOR")
        if "dry run" not in out:
            errors.append("no summary at the end")
        print(f"{len(drawn)} redraws, widest {max(map(len, drawn), default=0)} columns")

        rc, out = run_in_pty([lighten, "optimize", "--dry-run", "--no-journal", "--jobs", "1",
                              tmp], dict(env, TERM="dumb"))
        if "\x1b" in out or "\r" in out.replace("\r\n", "\n"):
            errors.append(f"TERM=dumb still got control codes: {out!r}")
        if "lighten: 6 files" not in out:
            errors.append(f"TERM=dumb: no plain log line: {out!r}")
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
