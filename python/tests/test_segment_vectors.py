"""The segment files the C++ side writes under testdata/segment/ (docs/formats.md, "Validation"):
``ok`` files decode to the manifest's objects, records and checksum, checked row by row against
the content rule; ``error`` files are refused naming the manifest's field (as SegmentVectorsTest)."""

from pathlib import Path

import pyarrow as pa
import pytest

from content import Checker
from sluice.segment import (MappedSegment, SegmentFormatError, decode_batch, parse_schema,
                            published_objects)

VECTORS = Path(__file__).resolve().parents[2] / "testdata" / "segment"


def manifest():
    columns, entries = None, []
    for line in (VECTORS / "manifest.tsv").read_text().splitlines():
        if not line.strip():
            continue
        if line.startswith("#"):
            columns = line[1:].strip().split("\t")
            continue
        values = {c: v for c, v in zip(columns, line.split("\t")) if v != "-"}
        entries.append(values)
    return entries


def decode(path: Path) -> Checker:
    segment = MappedSegment(path, writable=False)
    schema = parse_schema(segment.schema_message())
    objects = published_objects(segment)
    checker = Checker(sum(o.record_count for o in objects))
    for obj in objects:
        batch = decode_batch(obj, schema, pa.py_buffer(obj.message), full=True)
        checker.check(segment.header.object_kind, batch)
    return checker


def test_the_manifest_has_ok_and_error_vectors():
    assert {e["result"] for e in manifest()} == {"ok", "error"}


@pytest.mark.parametrize("entry", manifest(), ids=[e["file"] for e in manifest()])
def test_every_vector_as_the_manifest_says(entry):
    path = VECTORS / entry["file"]
    if entry["result"] == "error":
        with pytest.raises(SegmentFormatError) as refused:
            decode(path)
        assert refused.value.field == entry["field"], str(refused.value)
        return
    checker = decode(path)
    assert checker.objects == int(entry["objects"])
    assert checker.next == int(entry["records"])
    assert checker.checksum == int(entry["checksum"], 16)
