package dev.sluice.flink.source.enumerator;

import org.apache.flink.annotation.Internal;
import org.apache.kafka.common.TopicPartition;

/** A partition and the host of its leader ("" when it has none right now). */
@Internal
public record PartitionLeader(TopicPartition partition, String host) {}
