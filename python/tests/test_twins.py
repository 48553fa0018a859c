"""Python's copies of the C++ limits and idle strategy, and of the Java reader's progress timeout,
pinned to the sources they copy, so a bound changed in one language and not the other fails here
(docs/architecture.md, "Segment": "Both sides idle alike")."""

import re

import pytest

from sluice import limits, progress, segment

from conftest import ROOT

LIMITS_H = ROOT / "native" / "include" / "sluice" / "limits.h"
IDLE_STRATEGY_H = ROOT / "native" / "include" / "sluice" / "idle_strategy.h"


def cpp_constant(path, name):
    """The integer literal of `constexpr <type> name = <literal>;` in a C++ file."""
    found = re.findall(rf"constexpr\s+\w+\s+{name}\s*=\s*(\d+)u?\s*;", path.read_text())
    assert len(found) == 1, f"{path} defines {name} {len(found)} times, expected once"
    return int(found[0])


@pytest.mark.parametrize("python_name, cpp_name", [
    ("MAX_LANES", "kMaxLanes"),
    ("MAX_SLOTS", "kMaxSlots"),
    ("MIN_SLOT_SIZE", "kMinSlotSize"),
    ("MAX_NAME_LENGTH", "kMaxNameLength"),
    ("MAX_TOPIC_LENGTH", "kMaxTopicLength"),
    ("MAX_SEGMENT_NAME_LENGTH", "kMaxSegmentNameLength"),
    ("MAX_GROUP_ID_LENGTH", "kMaxGroupIdLength"),
])
def test_a_limit_is_the_one_of_the_cpp_side(python_name, cpp_name):
    assert getattr(limits, python_name) == cpp_constant(LIMITS_H, cpp_name)


def test_the_largest_slot_is_the_one_the_cpp_segment_checks():
    bound = re.search(r"kMaxSlotSize = \(uint64_t\{1\} << (\d+)\) - kSlotAlignment;",
                      LIMITS_H.read_text())
    assert bound, f"{LIMITS_H} no longer bounds a slot as (1 << N) - kSlotAlignment"
    alignment = cpp_constant(LIMITS_H, "kSlotAlignment")
    assert limits.MAX_SLOT_SIZE == (1 << int(bound[1])) - alignment


def test_the_name_alphabet_is_the_one_the_daemon_checks():
    alphabet = re.search(r'kNameAlphabet = "([^"]+)";', LIMITS_H.read_text())
    assert alphabet, f"{LIMITS_H} no longer defines kNameAlphabet"
    assert limits.NAME_ALPHABET == alphabet[1]
    allowed = {chr(c) for c in range(128) if limits.NAME.match(chr(c))}
    assert allowed == set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def test_the_idle_strategy_is_the_one_of_the_cpp_side():
    text = IDLE_STRATEGY_H.read_text()

    def option(name, unit):
        found = re.search(rf"{name} = (?:std::chrono::{unit}\()?(\d+)\)?;", text)
        assert found, f"{IDLE_STRATEGY_H} no longer sets {name}"
        return int(found[1])

    assert segment.SPINS == option("spins", "")
    assert segment.YIELDS == option("yields", "")
    assert segment.MIN_BACKOFF_S == pytest.approx(option("min_backoff", "microseconds") * 1e-6)
    assert segment.MAX_BACKOFF_S == pytest.approx(option("max_backoff", "milliseconds") * 1e-3)


def test_the_progress_request_timeout_is_the_one_of_the_java_reader():
    java = (ROOT / "client" / "src" / "main" / "java" / "dev" / "sluice" / "client" / "progress"
            / "BrokerLossTimeouts.java").read_text()
    found = re.search(r"REQUEST_TIMEOUT = Duration\.ofSeconds\((\d+)\);", java)
    assert found, "BrokerLossTimeouts.java no longer sets REQUEST_TIMEOUT in seconds"
    assert progress.REQUEST_TIMEOUT_MS == int(found[1]) * 1000


def test_the_wait_for_a_sent_end_of_stream_is_the_one_of_the_java_reader():
    java = (ROOT / "client" / "src" / "main" / "java" / "dev" / "sluice" / "client" / "progress"
            / "ProgressReporter.java").read_text()
    found = re.search(r"END_TIMEOUT = Duration\.ofSeconds\((\d+)\);", java)
    assert found, "ProgressReporter.java no longer sets END_TIMEOUT in seconds"
    assert progress.END_TIMEOUT_S == int(found[1])
