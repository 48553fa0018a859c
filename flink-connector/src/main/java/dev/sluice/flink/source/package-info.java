/**
 * {@link dev.sluice.flink.source.SluiceSource}: Kafka into Flink, pushed through the {@code
 * sluice-brokerd} on each TaskManager's host or pulled by a KafkaConsumer per reader.
 *
 * <p>The API is {@code KafkaSource}'s where the meaning is the same (docs/flink-source.md, "Coming
 * from KafkaSource"): {@link dev.sluice.flink.source.SluiceSourceBuilder} takes {@code setTopics},
 * {@code setTopicPattern} or {@code setPartitions}, {@code setStartingOffsets}, {@code setBounded}
 * and {@code setUnbounded} with {@link dev.sluice.flink.source.SluiceOffsets} (the factories of
 * {@code OffsetsInitializer}, with {@link dev.sluice.flink.source.OffsetResetStrategy}), {@code
 * setClientIdPrefix}, and a {@link dev.sluice.flink.source.SluiceDeserializationSchema}, which can
 * wrap a {@code KafkaRecordDeserializationSchema} or a Kafka {@code Deserializer} as it is. Both
 * modes hand the schema the same {@link dev.sluice.flink.source.SluiceRecord}.
 *
 * <p>The subpackages are internal: {@code enumerator} (discovery, offsets, placement), {@code
 * reader} (PUSH and PULL readers), {@code split} (splits and their serializers).
 */
package dev.sluice.flink.source;
