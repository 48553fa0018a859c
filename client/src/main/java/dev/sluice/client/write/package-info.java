/**
 * What every writer of chunk records shares, the Flink sink and the plain {@code StreamWriter}: the
 * record itself and its partition ({@link dev.sluice.client.write.ChunkRecords}), the producer's
 * settings and limits ({@link dev.sluice.client.write.ChunkProducerSettings}), and the bound on
 * bytes in flight ({@link dev.sluice.client.write.InFlightAccounting}, fed by a {@link
 * dev.sluice.client.write.ProgressListener}). Internal: see docs/sluice-sink.md and
 * docs/stream-writer.md.
 */
package dev.sluice.client.write;
