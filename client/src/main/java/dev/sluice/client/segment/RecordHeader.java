package dev.sluice.client.segment;

import dev.sluice.client.annotation.PublicEvolving;

/** One Kafka record header: a UTF-8 key and a binary value. */
@PublicEvolving
public record RecordHeader(String key, byte[] value) {}
