"""Sluice's Python reader: records and ordered stream chunks from ``sluice-brokerd``'s shared
memory as zero-copy ``pyarrow.RecordBatch``es (python/README.md)."""

from .batches import Batch, BatchReleased, ChunkBatch, RecordBatch
from .client import (BrokerdClient, BrokerdError, BrokerdUnavailable, SegmentFolderError,
                     Subscription)
from .protocol import ErrorCode, ProtocolError, StreamGap
from .segment import (ReaderEvicted, SegmentError, SegmentFormatError, SegmentReader,
                      SegmentRefused, WriterDead)
from .stream import (StreamChunk, StreamGapError, StreamOrderError, StreamReader,
                     StreamSilentError)

__all__ = [
    "Batch", "BatchReleased", "BrokerdClient", "BrokerdError", "BrokerdUnavailable", "ChunkBatch",
    "ErrorCode", "ProtocolError", "ReaderEvicted", "RecordBatch", "SegmentError",
    "SegmentFolderError", "SegmentFormatError", "SegmentReader", "SegmentRefused", "StreamChunk",
    "StreamGap", "StreamGapError", "StreamOrderError", "StreamReader", "StreamSilentError",
    "Subscription", "WriterDead",
]
