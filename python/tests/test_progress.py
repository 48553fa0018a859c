"""The delivery progress record of docs/formats.md, "Delivery progress"."""

import re

import pytest

from sluice.progress import (DEFAULT_TOPIC, DeliveryProgress, ProgressFormatError,
                             ProgressReporter, decode, encode)

# docs/formats.md's example: reader 1 of 2 of job-1/cyan, done up to seq 41 with 43008 bytes.
EXAMPLE = bytes.fromhex("0100 0000 0100 0200 2900000000000000 00a8000000000000"
                        "0500 6a6f622d31 0400 6379616e".replace(" ", ""))


# docs/formats.md's version-2 example: the same reader, its daemon subscription renewed.
RESUBSCRIBED_EXAMPLE = bytes.fromhex("0200 0200") + EXAMPLE[4:]


def test_the_default_topic_is_the_java_readers(root):
    # A Python reader and a Java sink or scheduler left at their defaults must meet on one topic
    # (docs/formats.md, "Upgrading from sluice.progress"); found by name, wherever its package is.
    [java] = root.glob("client/src/main/java/**/DeliveryProgress.java")
    assert re.findall(r'DEFAULT_TOPIC = "([^"]+)"', java.read_text("utf-8")) == [DEFAULT_TOPIC]
    assert DEFAULT_TOPIC == "sluice-progress"


def test_the_documented_example_round_trips():
    progress = DeliveryProgress("job-1", "cyan", 1, 2, 41, 43008)
    assert encode(progress) == EXAMPLE
    assert decode(b"job-1/cyan", EXAMPLE) == progress


def test_only_a_resubscribed_record_is_written_as_version_2():
    progress = DeliveryProgress("job-1", "cyan", 1, 2, 41, 43008, resubscribed=True)
    assert encode(progress) == RESUBSCRIBED_EXAMPLE
    assert decode(b"job-1/cyan", RESUBSCRIBED_EXAMPLE) == progress
    end = DeliveryProgress("j", "s", 0, 1, 9, 10240, end_of_stream=True, resubscribed=True)
    assert encode(end)[:4] == bytes.fromhex("0200 0300")
    assert decode(b"j/s", encode(end)) == end


def test_a_version_2_record_without_version_2_flags_is_read():
    assert decode(b"job-1/cyan", b"\x02" + EXAMPLE[1:]) == DeliveryProgress(
        "job-1", "cyan", 1, 2, 41, 43008)


@pytest.mark.parametrize("value,field", [
    (EXAMPLE[:20], "value"),
    (b"\x03" + EXAMPLE[1:], "version"),
    (b"\x00" + EXAMPLE[1:], "version"),
    (EXAMPLE[:2] + b"\x02\x00" + EXAMPLE[4:], "flags"),  # RESUBSCRIBED in version 1
    (RESUBSCRIBED_EXAMPLE[:2] + b"\x04\x00" + EXAMPLE[4:], "flags"),
    (EXAMPLE[:4] + b"\x02\x00" + EXAMPLE[6:], "reader_index"),
    (EXAMPLE[:8] + (-2).to_bytes(8, "little", signed=True) + EXAMPLE[16:], "delivered_seq"),
    (EXAMPLE + b"x", "stream"),
    (EXAMPLE[:-1], "stream"),
])
def test_a_bad_record_is_refused_naming_the_field(value, field):
    with pytest.raises(ProgressFormatError) as refused:
        decode(b"job-1/cyan", value)
    assert refused.value.field == field


def test_a_key_other_than_the_values_job_and_stream_is_refused():
    with pytest.raises(ProgressFormatError, match="key"):
        decode(b"job-1/magenta", EXAMPLE)


def test_a_negative_task_length_is_refused_before_any_connection():
    with pytest.raises(ValueError, match=r"chunks_per_task = -1: must be 0 \(unknown\) or more"):
        ProgressReporter("127.0.0.1:9", chunks_per_task=-1)
