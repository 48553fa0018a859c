package dev.sluice.client.job;

import dev.sluice.client.Limits;

/**
 * The one naming rule of the job model. Ids and names travel in Kafka headers, keys and file names
 * on output nodes, so they keep to a charset every one of those accepts.
 */
final class Names {

    private Names() {}

    static String check(String path, String value) {
        if (value == null) {
            throw new JobSpecException(path, "is required");
        }
        if (!Limits.isName(value)) {
            throw new JobSpecException(
                    path, "must be 1 to 128 characters of [A-Za-z0-9._-], got '" + value + "'");
        }
        return value;
    }
}
