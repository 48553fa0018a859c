"""The reader maps only its writer's segment: the file itself (a link is refused, not followed),
a regular file, owned by the writer's uid, the daemon's when it came in SUBSCRIBED; refused before
anything is mapped (python/README.md, "Trust")."""

import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from segment_tool import SegmentToolWriter
from sluice import BrokerdClient, SegmentRefused
from sluice.segment import MappedSegment, SegmentReader

VECTOR = Path(__file__).resolve().parents[2] / "testdata" / "segment" / "records-ok.seg"
FAKE_BROKERD = Path(__file__).resolve().parent / "fake_brokerd.py"
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
def fake_brokerd(tmp_path, own_segment):
    """A daemon of uid OTHER_UID whose SUBSCRIBED names ``own_segment``; its socket's path."""
    header = MappedSegment(own_segment, writable=False)
    path = tmp_path / "brokerd.sock"
    bound = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    bound.bind(str(path))
    src = Path(__file__).resolve().parents[1] / "src"
    process = subprocess.Popen(
        [sys.executable, str(FAKE_BROKERD), str(OTHER_UID), str(bound.fileno()),
         str(own_segment.parent), own_segment.name, str(header.header.object_kind),
         header.schema_message().hex()],
        pass_fds=[bound.fileno()], env={**os.environ, "PYTHONPATH": str(src)},
        stdout=subprocess.PIPE, text=True)
    bound.close()
    assert process.stdout.readline() == "listening\n", f"fake_brokerd.py ended: {process.wait()}"
    yield path
    process.kill()
    process.wait()


@needs_root
def test_a_subscription_maps_only_a_segment_of_the_daemons_uid(fake_brokerd, own_segment):
    client = BrokerdClient(fake_brokerd)
    # The segment is this process's, not the daemon's (the peer of the control socket).
    with pytest.raises(SegmentRefused, match=f"^{own_segment}: owned by uid {os.geteuid()}, "
                       f"not by the writer's uid {OTHER_UID}$"):
        client.subscribe_records("orders", 1)
    # Nothing is lost: the same client subscribes again once the daemon's file is there.
    os.chown(own_segment, OTHER_UID, -1)
    with client.subscribe_records("orders", 1) as orders:
        assert orders.reader.segment.path == own_segment
        assert orders.connection.peer_uid == OTHER_UID
