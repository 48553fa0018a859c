package dev.sluice.client.job;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.client.annotation.PublicEvolving;
import java.nio.charset.StandardCharsets;
import java.util.Set;

/**
 * The JSON envelope of a {@link JobCommand}: {@code {"type": "SUBMIT", "job": {...}}}, {@code
 * {"type": "CANCEL", "jobId": "..."}} or {@code {"type": "FAIL", "jobId": "...", "reason": "..."}}.
 * Parsing is as strict as {@link JobSpecJson}'s.
 */
@PublicEvolving
public final class JobCommandJson {

    private static final Set<String> SUBMIT_FIELDS = Set.of("type", "job");
    private static final Set<String> CANCEL_FIELDS = Set.of("type", "jobId");
    private static final Set<String> FAIL_FIELDS = Set.of("type", "jobId", "reason");
    private static final Set<String> ANY_FIELDS = Set.of("type", "job", "jobId", "reason");

    private JobCommandJson() {}

    public static JobCommand parse(byte[] json) {
        JsonNode tree = StrictJson.parse(json);
        String type = StrictJson.object(tree, "", ANY_FIELDS).text("type");
        switch (type) {
            case "SUBMIT":
                StrictJson submit = StrictJson.object(tree, "", SUBMIT_FIELDS);
                return new JobCommand.Submit(JobSpecJson.fromTree(submit.required("job"), "job"));
            case "CANCEL":
                // The record's own check names the field; at the top level that is the path.
                return new JobCommand.Cancel(
                        StrictJson.object(tree, "", CANCEL_FIELDS).text("jobId"));
            case "FAIL":
                StrictJson fail = StrictJson.object(tree, "", FAIL_FIELDS);
                return new JobCommand.Fail(fail.text("jobId"), fail.text("reason"));
            default:
                throw new JobSpecException(
                        "type", "must be 'SUBMIT', 'CANCEL' or 'FAIL', got '" + type + "'");
        }
    }

    public static byte[] write(JobCommand command) {
        ObjectNode tree = StrictJson.MAPPER.createObjectNode();
        if (command instanceof JobCommand.Submit submit) {
            tree.put("type", "SUBMIT");
            tree.set("job", JobSpecJson.toTree(submit.spec()));
        } else if (command instanceof JobCommand.Fail fail) {
            tree.put("type", "FAIL");
            tree.put("jobId", fail.jobId());
            tree.put("reason", fail.reason());
        } else {
            tree.put("type", "CANCEL");
            tree.put("jobId", command.jobId());
        }
        return StrictJson.write(tree).getBytes(StandardCharsets.UTF_8);
    }
}
