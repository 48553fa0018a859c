/**
 * Delivery progress, how far a stream's readers have delivered it (docs/formats.md, "Delivery
 * progress"): the record ({@link dev.sluice.client.progress.DeliveryProgress}) and its wire format
 * ({@link dev.sluice.client.progress.DeliveryProgressCodec}), the reader's side that sends it
 * ({@link dev.sluice.client.progress.ProgressReporter}), and the writers' and scheduler's side that
 * reads it ({@link dev.sluice.client.progress.ProgressListener}) and follows each stream by it
 * ({@link dev.sluice.client.progress.StreamDeliveryState}).
 */
package dev.sluice.client.progress;
