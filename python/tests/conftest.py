import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def cluster():
    """A real broker and sluice-brokerd; the daemon lets this uid read only the topics py.*, so
    that another topic is refused (docs/brokerd.md, "Security model")."""
    from cluster import ScriptedCluster

    started = ScriptedCluster({
        "sluice.allowed.topics": f"uid={os.getuid()}:py.*",
        # A hole in a stream is reported after half a second rather than 30 s.
        "sluice.gap.timeout.ms": "500",
    })
    yield started
    started.close()
