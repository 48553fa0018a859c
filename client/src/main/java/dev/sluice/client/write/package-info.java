/**
 * Writing a job's streams: {@link dev.sluice.client.write.StreamWriter}, the plain Java writer of
 * one stream (docs/stream-writer.md), and what every writer of chunk records shares with the Flink
 * sink: the record itself and its partition ({@link dev.sluice.client.write.ChunkRecords}), the
 * producer's settings and limits ({@link dev.sluice.client.write.ChunkProducerSettings}), the bound
 * on bytes in flight ({@link dev.sluice.client.write.InFlightAccounting}) and the local way to this
 * host's daemon ({@link dev.sluice.client.write.LocalChunkChannel}). See docs/sluice-sink.md.
 */
package dev.sluice.client.write;
