/**
 * One daemon subscription shared by the readers of a process: {@link
 * dev.sluice.client.shared.SharedSubscription} (the registry, the dispatcher thread, the routing)
 * and {@link dev.sluice.client.shared.SharedBatch} (a batch held by counted holders). The stream
 * reader's chunk path ({@code SharedChunkSubscription}) and the Flink connector's PUSH path ({@code
 * SharedRecordsSubscription}) are its two users (docs/stream-reader.md, "One subscription per job
 * and topic in a process"; docs/flink-source.md, "One subscription per TaskManager, shared").
 */
package dev.sluice.client.shared;
