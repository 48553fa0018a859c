"""A subscription request is checked before anything is connected: a bad one says what to set."""

import pytest

from sluice import BrokerdClient

# Never connected to: the requests below are refused before.
CLIENT = BrokerdClient("/nonexistent/brokerd.sock")


def test_a_topic_that_is_not_a_name_is_refused_naming_the_field():
    with pytest.raises(ValueError, match=r'topic = "orders 2": only \[A-Za-z0-9._-\]'):
        CLIENT.subscribe_records("orders 2", 1)


def test_no_partitions_without_local_leaders_says_what_to_pass():
    with pytest.raises(ValueError, match="local_leaders=True"):
        CLIENT.subscribe_records("orders")


def test_a_slot_size_outside_the_segments_bounds_is_refused():
    with pytest.raises(ValueError, match="slot_size = 100: expected a multiple of 64"):
        CLIENT.subscribe_chunks("chunks", "job-1", 1, slot_size=100)


def test_an_unknown_start_names_the_choices():
    with pytest.raises(ValueError, match="'earliest' or 'latest'"):
        CLIENT.subscribe_records("orders", 1, start="middle")


def test_a_heartbeat_timeout_below_40_ms_is_refused():
    with pytest.raises(ValueError, match="heartbeat_timeout = 0.01: at least 0.04 s"):
        BrokerdClient("/run/sluice/brokerd.sock", heartbeat_timeout=0.01)
