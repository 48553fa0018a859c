"""`./sluice release X.Y.Z` refuses, before building anything, a version that is not three numbers:
a SNAPSHOT, a missing one, or one Maven and Debian would order differently (docs/quickstart.md,
"What is built")."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("version", ["", "1.0", "1.0.0-SNAPSHOT", "v1.0.0", "1.0.0.1", "1.0.x"])
def test_a_version_that_is_not_x_y_z_is_refused_and_nothing_is_built(version):
    args = [str(ROOT / "sluice"), "release"] + ([version] if version else [])
    done = subprocess.run(args, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert done.stderr == (
        "usage: ./sluice release X.Y.Z (a version that is not a SNAPSHOT, not '%s')\n" % version)
    if version:
        assert not (ROOT / "target" / "release" / version).exists()
