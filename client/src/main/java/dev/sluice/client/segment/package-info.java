/**
 * The shared-memory segment of {@code docs/formats.md} in pure Java: one {@link
 * dev.sluice.client.segment.SegmentWriter} and up to 31 {@link
 * dev.sluice.client.segment.SegmentReader}s on one host exchange Arrow IPC record batches through
 * fixed-size slots of a file in {@code /dev/shm}, byte-compatible with the C++ {@code libsluice}.
 *
 * <p>Every hand-over is an atomic on the mapped file ({@link java.lang.invoke.VarHandle}s over the
 * mapping); a Unix-socket doorbell is rung only when the other side has said it is parked. Readers
 * see objects in place: {@link dev.sluice.client.segment.ArrowBatchReader} points Arrow vectors at
 * the slot without copying.
 *
 * <p>Start with {@code SegmentWriter.builder(...)}, {@code SegmentReader.open(...)} and, for tools
 * and tests, {@link dev.sluice.client.segment.SegmentInspector}. Types marked {@code Internal} are
 * the format's machinery: {@code SegmentLayout} (offsets), {@code MappedSegment} (typed atomic
 * access), {@code IdleStrategy}, the two doorbell ends and {@code Heartbeat}.
 */
package dev.sluice.client.segment;
