"""The real parts for the tests: an embedded Kafka broker and the real sluice-brokerd, started by
embedded/'s ScriptedCluster (the KafkaBroker and BrokerdProcess the Java integration tests use),
driven over its stdin and stopped by closing it."""

import subprocess
import threading
from pathlib import Path
from typing import List, Optional

ROOT = Path(__file__).resolve().parents[2]
BROKERD = ROOT / "broker-ext" / "target" / "cmake" / "sluice-brokerd"
EMBEDDED = ROOT / "embedded"
CLASSPATH = EMBEDDED / "target" / "classpath.txt"


def embedded_classpath() -> str:
    """embedded/'s runtime class path, resolved by Maven (offline) when missing."""
    classes = EMBEDDED / "target" / "classes"
    assert (classes / "dev" / "sluice" / "embedded" / "ScriptedCluster.class").exists(), (
        f"{classes} has no ScriptedCluster: build it first (mvn -pl embedded install -DskipTests)")
    if not CLASSPATH.exists() or CLASSPATH.stat().st_mtime < (EMBEDDED / "pom.xml").stat().st_mtime:
        subprocess.run(
            ["mvn", "-B", "-ntp", "-q", "-o", "-f", str(ROOT / "pom.xml"), "-pl", "embedded",
             "dependency:build-classpath", f"-Dmdep.outputFile={CLASSPATH}"],
            check=True, stdout=subprocess.DEVNULL)
    return f"{classes}:{CLASSPATH.read_text().strip()}"


class ScriptedCluster:
    """A broker and a daemon; :meth:`command` sends one line and waits for its ``ok``."""

    def __init__(self, settings: Optional[dict] = None, timeout: float = 120):
        assert BROKERD.exists(), f"{BROKERD} is missing: build broker-ext first (./sluice build)"
        args = ["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp",
                embedded_classpath(), "dev.sluice.embedded.ScriptedCluster", "--brokerd",
                str(BROKERD)]
        for key, value in (settings or {}).items():
            args += ["-X", f"{key}={value}"]
        self.process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, bufsize=1)
        self.lock = threading.Lock()
        fields = {}
        for line in self._lines(timeout, until="ready"):
            key, _, value = line.partition("=")
            fields[key] = value
        self.bootstrap_servers = fields["bootstrap.servers"]
        self.socket = fields["socket"]
        self.log = fields["log"]

    def _lines(self, timeout: float, until: str) -> List[str]:
        """stdout lines up to ``until`` (exclusive); a watchdog ends a launcher that hangs."""
        watchdog = threading.Timer(timeout, self.process.kill)
        watchdog.start()
        try:
            lines = []
            for line in self.process.stdout:
                line = line.rstrip("\n")
                if line == until or line.startswith("error: "):
                    if line.startswith("error: "):
                        raise AssertionError(f"ScriptedCluster: {line}")
                    return lines
                lines.append(line)
            raise AssertionError(
                f"ScriptedCluster ended (exit {self.process.wait()}) before '{until}'")
        finally:
            watchdog.cancel()

    def command(self, *words, timeout: float = 300) -> None:
        with self.lock:
            self.process.stdin.write(" ".join(str(w) for w in words) + "\n")
            self.process.stdin.flush()
            self._lines(timeout, until="ok")

    def close(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
