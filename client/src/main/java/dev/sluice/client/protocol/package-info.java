/**
 * The control protocol between a reader and {@code sluice-brokerd} on its Unix socket, as {@code
 * docs/formats.md} "Control protocol" specifies it, byte-compatible with the C++ codec in {@code
 * broker-ext/src/protocol/}: the messages as records, {@link
 * dev.sluice.client.protocol.ControlCodec} to turn a {@link dev.sluice.client.protocol.Frame} into
 * bytes and back, and {@link dev.sluice.client.protocol.FrameReader} to read frames off a channel.
 *
 * <p>The wire types are {@code @Internal}: the client's {@code brokerd} package speaks the protocol
 * for applications. What applications see of it is {@code @PublicEvolving}: the {@link
 * dev.sluice.client.protocol.ErrorCode} of a refusal, the {@link dev.sluice.client.protocol.Mode}
 * and start positions ({@link dev.sluice.client.protocol.StartPosition}, {@link
 * dev.sluice.client.protocol.PartitionStart}) of a subscription request, and a {@link
 * dev.sluice.client.protocol.StreamGap}, the one type of a hole in a stream.
 *
 * <p>Only subscriptions and commit watermarks travel here; objects, their release and wakeups go
 * through the segment ({@code dev.sluice.client.segment}).
 */
package dev.sluice.client.protocol;
