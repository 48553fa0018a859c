package dev.sluice.client.job;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.client.annotation.PublicEvolving;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;

/**
 * The JSON form of a {@link JobSpec}, as in {@code docs/formats.md}, "Job commands and statuses".
 *
 * <p>Parsing is strict: unknown fields, {@code null}s, wrong types, out-of-range values and broken
 * model rules are refused with a {@link JobSpecException} naming the JSON path. Writing puts every
 * field, defaults included but for an {@code auto} transport, in one fixed order, so the text of a
 * spec is stable.
 */
@PublicEvolving
public final class JobSpecJson {

    private static final Set<String> JOB_FIELDS =
            Set.of(
                    "id",
                    "inputs",
                    "generator",
                    "taskSizeBytes",
                    "streams",
                    "weight",
                    "transport",
                    "survivesProducerLoss");
    private static final Set<String> GENERATOR_FIELDS = Set.of("className", "parameters");
    private static final Set<String> STREAM_FIELDS =
            Set.of(
                    "name",
                    "outputLocation",
                    "split",
                    "sizeBytes",
                    "rateBytesPerSecond",
                    "chunkSizeBytes");
    private static final Set<String> WHOLE_FIELDS = Set.of("type");
    private static final Set<String> CHANNEL_FIELDS = Set.of("type", "channel");

    private JobSpecJson() {}

    public static JobSpec parse(String json) {
        return parse(json.getBytes(StandardCharsets.UTF_8));
    }

    public static JobSpec parse(byte[] json) {
        return fromTree(StrictJson.parse(json), "");
    }

    public static String write(JobSpec spec) {
        return StrictJson.write(toTree(spec));
    }

    /** Reads a spec embedded in a larger document at {@code path}. */
    static JobSpec fromTree(JsonNode value, String path) {
        StrictJson job = StrictJson.object(value, path, JOB_FIELDS);
        String id = job.text("id");
        List<String> inputs = new ArrayList<>();
        if (job.optional("inputs").isPresent()) {
            List<JsonNode> items = job.array("inputs");
            for (int i = 0; i < items.size(); i++) {
                inputs.add(StrictJson.asText(items.get(i), job.path("inputs") + "[" + i + "]"));
            }
        }
        GeneratorSpec generator = generator(job.required("generator"), job.path("generator"));
        long taskSize = job.optionalLong("taskSizeBytes").orElse(JobSpec.DEFAULT_TASK_SIZE_BYTES);
        List<StreamSpec> streams = new ArrayList<>();
        List<JsonNode> items = job.array("streams");
        for (int i = 0; i < items.size(); i++) {
            streams.add(stream(items.get(i), job.path("streams") + "[" + i + "]"));
        }
        long weight = job.optionalLong("weight").orElse(JobSpec.DEFAULT_WEIGHT);
        Transport transport =
                job.optional("transport").isPresent()
                        ? Transport.fromJson(job.text("transport"), job.path("transport"))
                        : Transport.AUTO;
        boolean survivesProducerLoss = job.optionalBoolean("survivesProducerLoss").orElse(false);
        try {
            JobSpec.checkWeight(weight);
            return new JobSpec(
                    id,
                    inputs,
                    generator,
                    taskSize,
                    streams,
                    (int) weight,
                    transport,
                    survivesProducerLoss);
        } catch (JobSpecException e) {
            throw e.under(path);
        }
    }

    static ObjectNode toTree(JobSpec spec) {
        ObjectNode job = StrictJson.MAPPER.createObjectNode();
        job.put("id", spec.id());
        ArrayNode inputs = job.putArray("inputs");
        spec.inputs().forEach(inputs::add);
        ObjectNode generator = job.putObject("generator");
        generator.put("className", spec.generator().className());
        ObjectNode parameters = generator.putObject("parameters");
        new TreeMap<>(spec.generator().parameters()).forEach(parameters::put);
        job.put("taskSizeBytes", spec.taskSizeBytes());
        ArrayNode streams = job.putArray("streams");
        for (StreamSpec stream : spec.streams()) {
            ObjectNode node = streams.addObject();
            node.put("name", stream.name());
            node.put("outputLocation", stream.outputLocation());
            ObjectNode split = node.putObject("split");
            if (stream.split() instanceof SplitRule.Channel channel) {
                split.put("type", "channel");
                split.put("channel", channel.channel());
            } else {
                split.put("type", "whole");
            }
            node.put("sizeBytes", stream.sizeBytes());
            stream.rateBytesPerSecond().ifPresent(rate -> node.put("rateBytesPerSecond", rate));
            node.put("chunkSizeBytes", stream.chunkSizeBytes());
        }
        job.put("weight", spec.weight());
        // Left out when auto, the default, unlike the other defaults: a reader older than the field
        // then still reads every spec that asks nothing new of it (docs/formats.md, "Job spec").
        if (spec.transport() != Transport.AUTO) {
            job.put("transport", spec.transport().json());
        }
        // Left out when false, for the same reason.
        if (spec.survivesProducerLoss()) {
            job.put("survivesProducerLoss", true);
        }
        return job;
    }

    private static GeneratorSpec generator(JsonNode value, String path) {
        StrictJson generator = StrictJson.object(value, path, GENERATOR_FIELDS);
        String className = generator.text("className");
        Map<String, String> parameters = new LinkedHashMap<>();
        if (generator.optional("parameters").isPresent()) {
            JsonNode node = generator.required("parameters");
            String parametersPath = generator.path("parameters");
            if (!node.isObject()) {
                throw new JobSpecException(
                        parametersPath, "must be an object, got " + StrictJson.typeOf(node));
            }
            node.fields()
                    .forEachRemaining(
                            field -> {
                                String fieldPath = StrictJson.join(parametersPath, field.getKey());
                                parameters.put(
                                        field.getKey(),
                                        StrictJson.asText(field.getValue(), fieldPath));
                            });
        }
        try {
            return new GeneratorSpec(className, parameters);
        } catch (JobSpecException e) {
            throw e.under(path);
        }
    }

    private static StreamSpec stream(JsonNode value, String path) {
        StrictJson stream = StrictJson.object(value, path, STREAM_FIELDS);
        String name = stream.text("name");
        String outputLocation = stream.text("outputLocation");
        SplitRule split = split(stream.required("split"), stream.path("split"));
        long size = stream.requiredLong("sizeBytes");
        OptionalLong rate = stream.optionalLong("rateBytesPerSecond");
        long chunkSize =
                stream.optionalLong("chunkSizeBytes").orElse(StreamSpec.DEFAULT_CHUNK_SIZE_BYTES);
        if (chunkSize != (int) chunkSize) {
            throw new JobSpecException(
                    stream.path("chunkSizeBytes"),
                    "must be between "
                            + StreamSpec.MIN_CHUNK_SIZE_BYTES
                            + " and "
                            + StreamSpec.MAX_CHUNK_SIZE_BYTES
                            + ", got "
                            + chunkSize);
        }
        try {
            return new StreamSpec(name, outputLocation, split, size, rate, (int) chunkSize);
        } catch (JobSpecException e) {
            throw e.under(path);
        }
    }

    private static SplitRule split(JsonNode value, String path) {
        String type = StrictJson.object(value, path, CHANNEL_FIELDS).text("type");
        switch (type) {
            case "whole":
                StrictJson.object(value, path, WHOLE_FIELDS);
                return new SplitRule.Whole();
            case "channel":
                String channel = StrictJson.object(value, path, CHANNEL_FIELDS).text("channel");
                try {
                    return new SplitRule.Channel(channel);
                } catch (JobSpecException e) {
                    throw e.under(path);
                }
            default:
                throw new JobSpecException(
                        StrictJson.join(path, "type"),
                        "must be 'whole' or 'channel', got '" + type + "'");
        }
    }
}
