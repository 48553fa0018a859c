"""The reader maps only its writer's segment: the file itself (a link is refused, not followed),
a regular file, owned by the writer's uid, the daemon's when it came in SUBSCRIBED; refused before
anything is mapped (python/README.md, "Trust")."""

import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import List

import pytest

from cluster import BROKERD
from content import value
from eventually import eventually
from segment_tool import SegmentToolWriter
from sluice import BrokerdClient, SegmentRefused
from sluice.segment import MappedSegment, SegmentReader

VECTOR = Path(__file__).resolve().parents[2] / "testdata" / "segment" / "records-ok.seg"
# A uid no file of the tests' belongs to.
OTHER_UID = 4242

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file or a process another "
                                "uid takes root (the tests run as root in CI)")


@pytest.fixture
def writer():
    started = SegmentToolWriter("records", count=10, size=10, batch=10, slots=2)
    yield started
    started.stop()


@pytest.fixture
def own_segment(tmp_path) -> Path:
    """A valid segment (a testdata vector) of this process's uid."""
    copy = tmp_path / "records.seg"
    shutil.copyfile(VECTOR, copy)
    return copy


def test_a_link_to_a_segment_is_refused_and_takes_no_lane(writer, tmp_path):
    link = tmp_path / "segment-link"
    link.symlink_to(writer.path)
    with pytest.raises(SegmentRefused, match=f"^{link}: a symbolic link, not the segment itself"):
        SegmentReader(link)
    # Nothing was mapped through the link: the segment's one reader attaches and reads to the end.
    reader = SegmentReader(writer.path)
    try:
        while reader.poll(5.0) is not None:
            pass
        assert reader.end_of_stream
    finally:
        reader.close()
    assert int(writer.totals()["records"]) == 10


@pytest.mark.parametrize("writable", [True, False], ids=["read-write", "read-only"])
def test_a_directory_is_refused_as_not_a_regular_file(tmp_path, writable):
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(SegmentRefused, match=f"^{folder}: a directory, not a regular file"):
        MappedSegment(folder, writable)


@pytest.mark.parametrize("writable", [True, False], ids=["read-write", "read-only"])
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path, writable):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    outcome = []
    opening = threading.Thread(target=lambda: outcome.append(_refusal(fifo, writable)),
                               daemon=True)
    opening.start()
    opening.join(5)
    if opening.is_alive():
        # Lets the blocked open go: a writer comes.
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        opening.join(5)
        pytest.fail(f"opening {fifo} waited for a writer")
    assert isinstance(outcome[0], SegmentRefused), outcome[0]
    assert str(outcome[0]) == f"{fifo}: a FIFO, not a regular file"


def _refusal(path: Path, writable: bool) -> BaseException:
    try:
        MappedSegment(path, writable)
    except BaseException as e:
        return e
    return AssertionError(f"{path} was mapped")


@needs_root
def test_a_segment_of_another_uid_is_refused_unless_that_uid_is_the_writers(own_segment):
    os.chown(own_segment, OTHER_UID, -1)
    with pytest.raises(SegmentRefused, match=f"^{own_segment}: owned by uid {OTHER_UID}, "
                       f"not by the writer's uid {os.geteuid()}$"):
        MappedSegment(own_segment, writable=False)
    segment = MappedSegment(own_segment, writable=False, owner_uid=OTHER_UID)
    assert segment.header.slot_count > 0


@pytest.fixture
def brokerd_of_other_uid(cluster):
    """The real sluice-brokerd, run as uid and gid OTHER_UID against the session's broker and
    granting this process's uid the topics py.*: its socket's path. Its socket and segment folder
    are in a folder of OTHER_UID's, short enough for doorbell paths (docs/brokerd.md, "Configuration");
    it is killed and its files removed at the end."""
    folder = Path(tempfile.mkdtemp(prefix="sl.", dir="/dev/shm"))
    segments = folder / "seg"
    segments.mkdir()
    for owned in (folder, segments):
        os.chown(owned, OTHER_UID, OTHER_UID)
    socket_path = folder / "brokerd.sock"
    process = subprocess.Popen(
        [str(BROKERD), "--bootstrap-servers", cluster.bootstrap_servers,
         "--socket", str(socket_path), "--metrics", "off",
         "-X", f"sluice.segment.dir={segments}",
         "-X", f"sluice.allowed.topics=uid={os.geteuid()}:py.*"],
        user=OTHER_UID, group=OTHER_UID, extra_groups=[], stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # Its log (one logfmt line per event, on stderr) is read to its end, so that the daemon never
    # blocks on a full pipe; "event=ready" comes once its socket accepts connections.
    log: List[str] = []
    ready = threading.Event()

    def pump() -> None:
        for line in process.stderr:
            log.append(line.rstrip("\n"))
            if " event=ready " in line:
                ready.set()
        ready.set()  # the daemon ended

    pumping = threading.Thread(target=pump, daemon=True)
    pumping.start()
    try:
        if not ready.wait(30) or not any(" event=ready " in line for line in log):
            pytest.fail(f"sluice-brokerd as uid {OTHER_UID} did not get ready in 30 s "
                        f"(exit {process.poll()}):\n" + "\n".join(log))
        yield socket_path
    finally:
        process.kill()
        process.wait()
        pumping.join(5)
        shutil.rmtree(folder)


@needs_root
def test_a_subscription_maps_only_a_segment_of_the_daemons_uid(cluster, brokerd_of_other_uid):
    """The real daemon, run as uid OTHER_UID, makes the segment: a file of its uid, not of this
    process's (root). The client expects the owner its control socket's peer (SO_PEERCRED) names,
    the daemon's uid, so it maps the segment and reads its records to the end. A client that
    expected its own effective uid instead would refuse this segment (owned by uid 4242, not by
    the writer's uid 0); the refusals themselves are the tests above."""
    cluster.command("topic", "py.other-uid", 1)
    cluster.command("records", "py.other-uid", 0, 200, 100)
    client = BrokerdClient(brokerd_of_other_uid)
    with client.subscribe_records("py.other-uid", 1, slot_count=4, slot_size=4096) as orders:
        assert orders.connection.peer_uid == OTHER_UID
        segment = orders.reader.segment.path
        assert segment.parent == brokerd_of_other_uid.parent / "seg"
        assert segment.stat().st_uid == OTHER_UID
        rows = []

        def read_one() -> bool:
            if len(rows) >= 200:
                return True
            batch = orders.poll(1.0)
            if batch is not None:
                with batch:
                    rows.extend(batch.record_batch.select(["offset", "value"]).to_pylist())
            return False

        eventually(read_one, 30, lambda: f"{len(rows)} of 200 rows")
    assert [r["offset"] for r in rows] == list(range(200))
    assert [r["value"] for r in rows] == [value(i, 100) for i in range(200)]
