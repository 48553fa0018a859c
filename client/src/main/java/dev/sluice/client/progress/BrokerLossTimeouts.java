package dev.sluice.client.progress;

import dev.sluice.client.annotation.Internal;
import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;

/**
 * The Kafka client timeouts of the delivery-progress path: the readers' progress producers, and the
 * consumers of the scheduler and the sink writers that read it (docs/generation.md, "A lost broker
 * on the progress path").
 *
 * <p>A broker whose host is lost or cut off closes none of its connections: a request sent to it
 * waits for an answer that never comes until {@code request.timeout.ms}, 30 s by default, and only
 * then does the client ask for the new leader. Meanwhile the scheduler hears no delivery and hands
 * out no task that needs room; a reader whose records wait that long looks gone to it (on the demo
 * cluster a host's network cut aborted its job so, every stream complete and unstarved). Progress
 * records and fetches answer in milliseconds, so a few seconds tell a lost broker; Kafka's
 * controller fences it after {@code broker.session.timeout.ms} (9 s by default), and the client
 * finds the new leader with its next retry.
 */
@Internal
public final class BrokerLossTimeouts {
    /** How long a request waits for its answer before the client drops the connection. */
    public static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(5);

    /**
     * How long setting a connection up may take, and at most after backing off: a lost host's
     * address answers nothing, and Kafka's 10 s to 30 s would be spent on each attempt.
     */
    public static final Duration CONNECTION_SETUP_TIMEOUT = Duration.ofSeconds(2);

    public static final Duration CONNECTION_SETUP_TIMEOUT_MAX = Duration.ofSeconds(5);

    private BrokerLossTimeouts() {}

    /** A copy of {@code properties} with these timeouts wherever they set none of their own. */
    public static Properties withDefaults(Properties properties) {
        Properties props = new Properties();
        props.putAll(properties);
        props.putIfAbsent(
                CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG,
                Long.toString(REQUEST_TIMEOUT.toMillis()));
        props.putIfAbsent(
                CommonClientConfigs.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG,
                Long.toString(CONNECTION_SETUP_TIMEOUT.toMillis()));
        props.putIfAbsent(
                CommonClientConfigs.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG,
                Long.toString(CONNECTION_SETUP_TIMEOUT_MAX.toMillis()));
        return props;
    }
}
