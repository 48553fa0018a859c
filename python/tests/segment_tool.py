"""Runs native/'s sluice-segment-tool as the writer of a segment in /dev/shm: the C++ writer of
libsluice, so the Python reader is checked against the real cycle without a daemon."""

import os
import subprocess
import uuid
from pathlib import Path

from eventually import eventually

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "native" / "target" / "cmake" / "sluice-segment-tool"


class SegmentToolWriter:
    """``sluice-segment-tool write`` waiting for one reader; ``path`` once the segment exists."""

    def __init__(self, kind: str, count: int, size: int, *, batch: int = 64, slots: int = 8,
                 slot_size: int = 1 << 20, checksums: bool = True, timeout_ms: int = 20000):
        assert TOOL.exists(), f"{TOOL} is missing: build native/ first (mvn -pl native install)"
        self.name = f"sluice-py-{uuid.uuid4().hex[:12]}"
        self.path = Path("/dev/shm") / self.name
        args = [str(TOOL), "write", "--segment", self.name, "--kind", kind, "--count", str(count),
                "--size", str(size), "--batch", str(batch), "--slots", str(slots), "--slot-size",
                str(slot_size), "--timeout-ms", str(timeout_ms)]
        if not checksums:
            args.append("--no-checksums")
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)

        def appeared() -> bool:
            assert self.process.poll() is None, self.process.stderr.read()
            return self.path.exists()

        eventually(appeared, 10, lambda: f"{self.path} did not appear", pause=0.005)

    def totals(self) -> dict:
        """The writer's printed totals (objects, records, bytes, checksum), once it has ended."""
        out, err = self.process.communicate(timeout=30)
        assert self.process.returncode == 0, err
        return dict(item.split("=") for item in out.split())

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for leftover in (self.path, Path(str(self.path) + ".bell")):
            try:
                os.unlink(leftover)
            except FileNotFoundError:
                pass
