package dev.sluice.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The calls of Flink's SQL Gateway REST API (version 1) a SQL user's client makes: open a session
 * with its configuration ({@code POST /v1/sessions}), run a statement in it ({@code POST
 * /v1/sessions/:session/statements}), and fetch its result page by page, following {@code
 * nextResultUri} until {@code EOS}.
 */
final class SqlGatewayRest {
    private static final ObjectMapper JSON = JsonHttp.JSON;
    private static final Duration PAGE_WAIT = Duration.ofMillis(200);

    private final URI base;
    private final JsonHttp http = new JsonHttp();

    SqlGatewayRest(URI base) {
        this.base = base;
    }

    /** Opens a session whose statements run with {@code properties}; returns its handle. */
    String openSession(Map<String, String> properties) throws IOException, InterruptedException {
        ObjectNode request = JSON.createObjectNode();
        request.putPOJO("properties", properties);
        String session = post("/v1/sessions", request).path("sessionHandle").asText();
        if (session.isEmpty()) {
            throw new IOException("the SQL Gateway opened no session");
        }
        return session;
    }

    /**
     * Runs {@code statement} in the session and returns its rows, each the list of its fields as
     * JSON, once the result ends; an error of the statement or its job is thrown with the gateway's
     * message.
     */
    List<List<JsonNode>> execute(String session, String statement, Duration timeout)
            throws IOException, InterruptedException {
        ObjectNode request = JSON.createObjectNode();
        request.put("statement", statement);
        String operation =
                post("/v1/sessions/" + session + "/statements", request)
                        .path("operationHandle")
                        .asText();
        List<List<JsonNode>> rows = new ArrayList<>();
        String next = "/v1/sessions/" + session + "/operations/" + operation + "/result/0";
        long deadline = System.nanoTime() + timeout.toNanos();
        while (next != null) {
            if (System.nanoTime() > deadline) {
                throw new IOException(
                        "no end of the result of '" + statement + "' within " + timeout);
            }
            JsonNode page = get(next);
            String type = page.path("resultType").asText();
            for (JsonNode row : page.path("results").path("data")) {
                List<JsonNode> fields = new ArrayList<>();
                row.path("fields").forEach(fields::add);
                rows.add(fields);
            }
            if (type.equals("EOS")) {
                next = null;
            } else {
                if (type.equals("NOT_READY") || page.path("results").path("data").isEmpty()) {
                    Thread.sleep(PAGE_WAIT.toMillis());
                }
                next = page.path("nextResultUri").asText(null);
                if (next == null) {
                    throw new IOException("a " + type + " page without a next one: " + page);
                }
            }
        }
        return rows;
    }

    private JsonNode post(String path, JsonNode body) throws IOException, InterruptedException {
        return http.send(
                HttpRequest.newBuilder(base.resolve(path))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))));
    }

    private JsonNode get(String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(base.resolve(path)).GET());
    }
}
