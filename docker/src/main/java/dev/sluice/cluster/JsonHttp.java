package dev.sluice.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * JSON over HTTP for the REST APIs the cluster's driver and checks call, Flink's ({@link
 * FlinkRest}), its SQL Gateway's ({@link SqlGatewayRest}) and Prometheus' ({@link Dashboard}): an
 * answer other than 2xx is an {@link IOException} naming the request and quoting the body, where
 * Flink puts its errors.
 */
final class JsonHttp {
    static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    /** Sends the request, with a 60 s timeout, and returns the answer's JSON. */
    JsonNode send(HttpRequest.Builder request) throws IOException, InterruptedException {
        HttpResponse<String> response =
                http.send(
                        request.timeout(Duration.ofSeconds(60)).build(),
                        HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() / 100 != 2) {
            throw new IOException(
                    response.request().method()
                            + " "
                            + response.uri()
                            + ": HTTP "
                            + response.statusCode()
                            + " "
                            + response.body());
        }
        return JSON.readTree(response.body());
    }
}
