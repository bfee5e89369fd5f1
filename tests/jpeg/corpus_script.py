"""What the JPEG corpus scripts share: their command line and the checks that let them skip."""
import sys
from pathlib import Path

SKIP = 77


def arguments(doc):
    """(lighten binary, mode, corpus/jpeg folder) from `LIGHTEN SHARED_DIR [--mode M]`, or the exit
    status to return: 2 with the usage, SKIP when PIL or the corpus is missing."""
    if len(sys.argv) < 3:
        print(doc)
        return 2
    lighten, shared = sys.argv[1], Path(sys.argv[2])
    mode = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--mode" else "lossless"
    try:
        import PIL  # noqa: F401
    except ImportError:
        print("SKIP: PIL is not installed")
        return SKIP
    corpus = shared / "corpus" / "jpeg"
    if not corpus.is_dir():
        print(f"SKIP: {corpus} is absent")
        return SKIP
    return lighten, mode, corpus
