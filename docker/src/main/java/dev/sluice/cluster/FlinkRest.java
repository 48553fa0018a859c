package dev.sluice.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The few calls of Flink's REST API that submit and watch a job the way users do on a session
 * cluster: upload its jar ({@code POST /jars/upload}), run it ({@code POST /jars/:id/run}), read
 * its state, where its subtasks run and its accumulators.
 */
final class FlinkRest {
    private static final ObjectMapper JSON = JsonHttp.JSON;

    private final URI base;
    private final JsonHttp http = new JsonHttp();

    FlinkRest(URI base) {
        this.base = base;
    }

    /** Uploads a job jar; returns its id on the cluster. */
    String upload(Path jar) throws IOException, InterruptedException {
        String boundary = "sluice-" + UUID.randomUUID();
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(
                ("--"
                                + boundary
                                + "\r\n"
                                + "Content-Disposition: form-data; name=\"jarfile\"; filename=\""
                                + jar.getFileName()
                                + "\"\r\nContent-Type: application/x-java-archive\r\n\r\n")
                        .getBytes(StandardCharsets.UTF_8));
        body.writeBytes(Files.readAllBytes(jar));
        body.writeBytes(("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8));
        JsonNode answer =
                http.send(
                        HttpRequest.newBuilder(base.resolve("/jars/upload"))
                                .header("Content-Type", "multipart/form-data; boundary=" + boundary)
                                .POST(HttpRequest.BodyPublishers.ofByteArray(body.toByteArray())));
        String file = answer.path("filename").asText();
        if (file.isEmpty()) {
            throw new IOException("jar upload answered without a file name: " + answer);
        }
        return Path.of(file).getFileName().toString();
    }

    /** Runs {@code entryClass} of an uploaded jar; returns the job id. */
    String run(String jarId, String entryClass, List<String> args, int parallelism)
            throws IOException, InterruptedException {
        ObjectNode request = JSON.createObjectNode();
        request.put("entryClass", entryClass);
        request.putPOJO("programArgsList", args);
        if (parallelism > 0) {
            request.put("parallelism", parallelism);
        }
        JsonNode answer =
                http.send(
                        HttpRequest.newBuilder(base.resolve("/jars/" + jarId + "/run"))
                                .header("Content-Type", "application/json")
                                .POST(
                                        HttpRequest.BodyPublishers.ofString(
                                                JSON.writeValueAsString(request))));
        return answer.path("jobid").asText();
    }

    /** The job's state: CREATED, RUNNING, FINISHED, FAILED... */
    String state(String jobId) throws IOException, InterruptedException {
        return get("/jobs/" + jobId).path("state").asText();
    }

    /** Whether the job and every subtask of it run. */
    boolean fullyRunning(String jobId) throws IOException, InterruptedException {
        JsonNode job = get("/jobs/" + jobId);
        if (!"RUNNING".equals(job.path("state").asText())) {
            return false;
        }
        for (JsonNode vertex : job.path("vertices")) {
            if (!"RUNNING".equals(vertex.path("status").asText())) {
                return false;
            }
        }
        return true;
    }

    /** How many TaskManagers are registered with the JobManager. */
    int taskManagers() throws IOException, InterruptedException {
        return get("/taskmanagers").path("taskmanagers").size();
    }

    /** Ids of the jobs named {@code name} in the given state. */
    List<String> jobs(String name, String state) throws IOException, InterruptedException {
        List<String> ids = new java.util.ArrayList<>();
        for (JsonNode job : get("/jobs/overview").path("jobs")) {
            if (name.equals(job.path("name").asText())
                    && state.equals(job.path("state").asText())) {
                ids.add(job.path("jid").asText());
            }
        }
        return ids;
    }

    /** The hosts the subtasks of the job's vertices run on, a list per vertex name. */
    Map<String, List<String>> subtaskHosts(String jobId) throws IOException, InterruptedException {
        Map<String, List<String>> hosts = new HashMap<>();
        for (JsonNode vertex : get("/jobs/" + jobId).path("vertices")) {
            List<String> names = new java.util.ArrayList<>();
            for (JsonNode subtask :
                    get("/jobs/" + jobId + "/vertices/" + vertex.path("id").asText())
                            .path("subtasks")) {
                String endpoint = subtask.path("endpoint").asText(subtask.path("host").asText());
                names.add(endpoint.replaceFirst(":\\d+$", ""));
            }
            hosts.put(vertex.path("name").asText(), names);
        }
        return hosts;
    }

    /**
     * How many times the job failed, each failure followed by a restart, and whether there were
     * more than Flink keeps ({@code web.exception-history-size}, 16 by default).
     */
    record Failures(int count, boolean more) {
        @Override
        public String toString() {
            return (more ? "at least " : "") + count;
        }
    }

    /**
     * The job's failures, from its exception history: the JobManager's own record, read on request.
     * Not the {@code numRestarts} metric: the metric store behind it was seen to stay frozen for
     * minutes after a TaskManager's network was cut, showing 0 restarts where the JobManager's log
     * had 7.
     */
    Failures failures(String jobId) throws IOException, InterruptedException {
        JsonNode history = get("/jobs/" + jobId + "/exceptions").path("exceptionHistory");
        if (!history.has("entries")) {
            throw new IOException("job " + jobId + " has no exception history");
        }
        return new Failures(history.path("entries").size(), history.path("truncated").asBoolean());
    }

    /** The job's user accumulators, by name. */
    Map<String, String> accumulators(String jobId) throws IOException, InterruptedException {
        Map<String, String> values = new HashMap<>();
        for (JsonNode accumulator :
                get("/jobs/" + jobId + "/accumulators").path("user-task-accumulators")) {
            values.put(accumulator.path("name").asText(), accumulator.path("value").asText());
        }
        return values;
    }

    private JsonNode get(String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(base.resolve(path)).GET());
    }
}
