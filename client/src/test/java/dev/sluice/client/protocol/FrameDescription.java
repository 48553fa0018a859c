package dev.sluice.client.protocol;

import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A frame as {@code testdata/protocol/manifest.txt} spells it, the way the C++ generator's {@code
 * Describe} writes it: unsigned integers in decimal, enumerations by name, byte arrays in lowercase
 * hex, lists comma-separated (a partition entry as {@code partition:START:offset}).
 */
final class FrameDescription {
    private FrameDescription() {}

    static Map<String, String> of(Frame frame) {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("version", Integer.toString(frame.version()));
        fields.put("type", frame.message().type().name());
        fields.put("request_id", Long.toUnsignedString(frame.requestId()));
        ControlMessage message = frame.message();
        if (message instanceof Subscribe m) {
            fields.put("slot_count", Integer.toString(m.slotCount()));
            fields.put("local_leaders", Boolean.toString(m.localLeaders()));
            fields.put("read_uncommitted", Boolean.toString(m.readUncommitted()));
            fields.put("slot_size", Long.toUnsignedString(m.slotSize()));
            fields.put("reorder_window_bytes", Long.toUnsignedString(m.reorderWindowBytes()));
            fields.put("mode", m.mode().name());
            fields.put("default_start", m.defaultStart().name());
            fields.put(
                    "partitions",
                    m.partitions().stream()
                            .map(p -> p.partition() + ":" + p.start() + ":" + p.offset())
                            .collect(Collectors.joining(",")));
            fields.put("topic", m.topic());
            fields.put("group_id", m.groupId());
            fields.put("job_filter", m.jobFilter());
            fields.put(
                    "streams",
                    m.streams().stream()
                            .map(s -> s.job() + "/" + s.stream() + ":" + s.nextSeq())
                            .collect(Collectors.joining(",")));
        } else if (message instanceof Subscribed m) {
            fields.put("subscription_id", Long.toUnsignedString(m.subscriptionId()));
            fields.put("object_kind", m.objectKind().name());
            fields.put("lane_hint", Integer.toString(m.laneHint()));
            fields.put(
                    "partitions",
                    m.partitions().stream().map(String::valueOf).collect(Collectors.joining(",")));
            fields.put("segment_name", m.segmentName());
            fields.put("schema", HexFormat.of().formatHex(m.schema()));
            fields.put("segment_dir", m.segmentDir());
        } else if (message instanceof Release m) {
            fields.put("subscription_id", Long.toUnsignedString(m.subscriptionId()));
            fields.put("processed_through", Long.toUnsignedString(m.processedThrough()));
        } else if (message instanceof Heartbeat m) {
            fields.put("time_ns", Long.toUnsignedString(m.timeNs()));
            fields.put("timeout_ns", Long.toUnsignedString(m.timeoutNs()));
        } else if (message instanceof ErrorMessage m) {
            fields.put("subscription_id", Long.toUnsignedString(m.subscriptionId()));
            fields.put("code", m.code().name());
            fields.put("min_version", Integer.toString(m.minVersion()));
            fields.put("max_version", Integer.toString(m.maxVersion()));
            fields.put("message", m.message());
        } else if (message instanceof Close m) {
            fields.put("subscription_id", Long.toUnsignedString(m.subscriptionId()));
        } else if (message instanceof StreamGap m) {
            fields.put("subscription_id", Long.toUnsignedString(m.subscriptionId()));
            fields.put("missing_from", Long.toUnsignedString(m.missingFrom()));
            fields.put("missing_to", Long.toUnsignedString(m.missingTo()));
            fields.put("waited_ns", Long.toUnsignedString(m.waitedNanos()));
            fields.put("job", m.job());
            fields.put("stream", m.stream());
        } else if (message instanceof Produce m) {
            fields.put("topic", m.topic());
            fields.put("segment_path", m.segmentPath());
        } else if (message instanceof Producing m) {
            fields.put("producer_id", Long.toUnsignedString(m.producerId()));
        }
        return fields;
    }
}
