/**
 * Monotonic time for the parts that wait on it, the reader's pacing and the progress reporter:
 * {@link dev.sluice.client.time.NanoClock}, which tests replace with a clock they move.
 */
package dev.sluice.client.time;
