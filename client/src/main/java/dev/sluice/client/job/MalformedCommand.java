package dev.sluice.client.job;

import dev.sluice.client.annotation.PublicEvolving;

/**
 * A record of the jobs topic that is not a valid command, with where it is so an operator can
 * inspect it (for example with {@code kcat -o OFFSET -p PARTITION}).
 *
 * @param key the record's key, the job id it claims to be about; empty when it has none
 * @param reason what is wrong, starting with the JSON path when there is one
 */
@PublicEvolving
public record MalformedCommand(
        String topic, int partition, long offset, String key, String reason) {

    @Override
    public String toString() {
        return topic + "-" + partition + " offset " + offset + ": " + reason;
    }
}
