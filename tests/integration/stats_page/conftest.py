"""Fixtures of the stats page tests: the HTTP origin, headless Chromium and promtool (each test
skips with the package to install when its tool is missing)."""
import shutil
import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from stats_browser import Chromium, chromium_bin  # noqa: E402
from stats_layout import start_layout  # noqa: E402


@pytest.fixture
def chromium(tmp_path):
    """A Chromium launcher whose browsers (and their process groups) die at teardown."""
    binary = chromium_bin()
    if binary is None:
        pytest.skip("chromium not installed: apt-get install chromium "
                    "(scripts/setup.sh installs it when it can)")
    c = Chromium(binary, tmp_path / "chromium")
    yield c
    c.kill()


@pytest.fixture
def promtool():
    path = shutil.which("promtool")
    if path is None:
        pytest.skip("promtool not installed: apt-get install prometheus")
    return path


@pytest.fixture
def layout(tmp_path, short_tmp, origin):
    """Starts the stats layout; layout(stats_lines=...) -> a running Layout, killed at teardown."""
    started = []

    def start(stats_lines: str = ""):
        lay = start_layout(tmp_path / f"layout{len(started)}", short_tmp, origin,
                           stats_lines=stats_lines)
        started.append(lay)
        return lay

    yield start
    for lay in started:
        lay.proc.kill()
