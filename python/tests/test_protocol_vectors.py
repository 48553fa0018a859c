"""The frames the C++ side writes under testdata/protocol/ (docs/formats.md, "Test vectors"):
each decodes as manifest.txt says or is refused naming its field, and each good frame encodes back
to the same bytes, as the C++ and Java tests (ProtocolVectorsTest) check."""

from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from sluice import protocol
from sluice.protocol import (Close, Error, Heartbeat, Produce, Producing, Release, StreamGap,
                             Subscribe, Subscribed)

VECTORS = Path(__file__).resolve().parents[2] / "testdata" / "protocol"


def manifest() -> List[Tuple[str, Dict[str, str]]]:
    entries: List[Tuple[str, Dict[str, str]]] = []
    for line in (VECTORS / "manifest.txt").read_text("utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            entries.append((line[1:-1], {}))
            continue
        key, sep, value = line.partition("=")
        assert sep and entries, f"key=value after an entry: {line}"
        entries[-1][1][key] = value
    return entries


def describe(frame: protocol.Frame) -> Dict[str, str]:
    """A frame as the manifest spells it (the C++ generator's Describe)."""
    m = frame.message
    out = {"version": str(frame.version), "type": m.type.name, "request_id": str(frame.request_id)}
    if isinstance(m, Subscribe):
        out.update(
            slot_count=str(m.slot_count), local_leaders=str(m.local_leaders).lower(),
            read_uncommitted=str(m.read_uncommitted).lower(), slot_size=str(m.slot_size),
            reorder_window_bytes=str(m.reorder_window_bytes), mode=m.mode.name,
            default_start=m.default_start.name,
            partitions=",".join(f"{p.partition}:{p.start.name}:{p.offset}" for p in m.partitions),
            topic=m.topic, group_id=m.group_id, job_filter=m.job_filter,
            streams=",".join(f"{s.job}/{s.stream}:{s.next_seq}" for s in m.streams))
    elif isinstance(m, Subscribed):
        out.update(
            subscription_id=str(m.subscription_id), object_kind=m.object_kind.name,
            lane_hint=str(m.lane_hint), partitions=",".join(map(str, m.partitions)),
            segment_name=m.segment_name, schema=m.schema.hex(), segment_dir=m.segment_dir)
    elif isinstance(m, Release):
        out.update(subscription_id=str(m.subscription_id),
                   processed_through=str(m.processed_through))
    elif isinstance(m, Heartbeat):
        out.update(time_ns=str(m.time_ns), timeout_ns=str(m.timeout_ns))
    elif isinstance(m, Error):
        out.update(subscription_id=str(m.subscription_id), code=m.code.name,
                   min_version=str(m.min_version), max_version=str(m.max_version),
                   message=m.message)
    elif isinstance(m, Close):
        out.update(subscription_id=str(m.subscription_id))
    elif isinstance(m, StreamGap):
        out.update(subscription_id=str(m.subscription_id), missing_from=str(m.missing_from),
                   missing_to=str(m.missing_to), waited_ns=str(m.waited_ns), job=m.job,
                   stream=m.stream)
    elif isinstance(m, Produce):
        out.update(topic=m.topic, segment_path=m.segment_path)
    elif isinstance(m, Producing):
        out.update(producer_id=str(m.producer_id))
    return out


def test_the_manifest_covers_every_message_in_every_version():
    types: Dict[str, set] = {}
    for _, values in manifest():
        if values["result"] == "ok":
            types.setdefault(values["version"], set()).add(values["type"])
    of_version = {
        str(v): {t.name for t in protocol.MessageType if protocol.first_version(t) <= v}
        for v in range(protocol.MIN_VERSION, protocol.VERSION + 1)
    }
    assert of_version["3"] | {"PRODUCE", "PRODUCING"} == of_version["4"]
    assert types == of_version


@pytest.mark.parametrize("name,values", manifest(), ids=[e[0] for e in manifest()])
def test_every_vector_as_the_manifest_says(name, values):
    data = (VECTORS / name).read_bytes()
    if values["result"] == "error":
        with pytest.raises(protocol.ProtocolError) as refused:
            protocol.decode(data)
        assert refused.value.field == values["field"], str(refused.value)
        return
    assert values["result"] == "ok"
    frame = protocol.decode(data)
    assert {"result": "ok", **describe(frame)} == values
    assert protocol.encode(frame) == data


def test_an_encoder_refuses_what_the_decoder_would():
    bad = Subscribe(topic="orders", mode=protocol.Mode.RECORDS, slot_count=0, slot_size=4096,
                    partitions=(protocol.PartitionStart(0),))
    with pytest.raises(protocol.ProtocolError) as refused:
        protocol.encode(protocol.Frame(1, bad))
    assert refused.value.field == "slot_count"
    assert "expected 1 to 65536" in str(refused.value)
