"""The bounds and the name alphabet that the segment, the control protocol and delivery progress
share (docs/formats.md, "Segment" and "Control protocol"), kept once for Python. Their C++ home
is native/include/sluice/limits.h, which says why each is what it is; tests/test_twins.py pins
each value here to it."""

import re

MAX_LANES = 31  # readers of one segment: a lane bit each in a 32-bit word, one bit the writer's
MAX_SLOTS = 65536
MIN_SLOT_SIZE = 256  # room for the smallest Arrow IPC message, a multiple of the 64-byte alignment
MAX_SLOT_SIZE = (1 << 31) - 64  # the largest multiple of 64 whose offsets fit 31 bits
MAX_NAME_LENGTH = 128  # a job or stream name, in bytes
MAX_TOPIC_LENGTH = 249  # Kafka's own limit
MAX_SEGMENT_NAME_LENGTH = 255  # a file name in the segment folder
MAX_GROUP_ID_LENGTH = 255

# Names travel into file names and topic names: only these bytes, no separator, no "..".
NAME_ALPHABET = "A-Za-z0-9._-"
NAME = re.compile(f"[{NAME_ALPHABET}]*\\Z")
