"""The cookie tests share cookie_util.py, which this folder's place on sys.path makes
importable (the suite runs with --import-mode=importlib)."""
import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
