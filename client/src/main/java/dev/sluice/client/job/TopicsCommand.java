package dev.sluice.client.job;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;

/**
 * {@code sluice-cli topics create | check}: each topic Sluice needs, one line each, "exists" with
 * its partitions, "created", or "missing"; {@code check} exits 1 when one is missing, naming the
 * command that creates it. A topic that exists is left as it is, whatever its partitions.
 */
final class TopicsCommand {
    private static final long TIMEOUT_SECONDS = 15;

    private TopicsCommand() {}

    static int run(
            SluiceTopics wanted,
            boolean create,
            String bootstrapServers,
            PrintStream out,
            PrintStream err) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "15000");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        try (Admin admin = Admin.create(props)) {
            Set<String> existing =
                    admin.listTopics().names().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            List<NewTopic> missing = new ArrayList<>();
            List<String> present = new ArrayList<>();
            for (NewTopic topic : wanted.topics()) {
                if (existing.contains(topic.name())) {
                    present.add(topic.name());
                } else {
                    missing.add(topic);
                }
            }
            Map<String, TopicDescription> described =
                    admin.describeTopics(present)
                            .allTopicNames()
                            .get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            for (String name : present) {
                out.printf(
                        "%-40s exists, %d partitions%n",
                        name, described.get(name).partitions().size());
            }
            if (create && !missing.isEmpty()) {
                admin.createTopics(missing).all().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            }
            for (NewTopic topic : missing) {
                out.printf(
                        "%-40s %s, %d partitions%n",
                        topic.name(), create ? "created" : "MISSING", topic.numPartitions());
            }
            if (!create && !missing.isEmpty()) {
                err.println(
                        "error: "
                                + missing.size()
                                + " topic(s) missing; create them with: sluice-cli"
                                + " --bootstrap-servers "
                                + bootstrapServers
                                + " [the same options] topics create");
                return JobCli.RUNTIME_ERROR;
            }
            return JobCli.OK;
        } catch (ExecutionException e) {
            err.println("error: " + e.getCause().getMessage());
            return JobCli.RUNTIME_ERROR;
        } catch (TimeoutException e) {
            err.println(
                    "error: the cluster at "
                            + bootstrapServers
                            + " did not answer in "
                            + TIMEOUT_SECONDS
                            + " s");
            return JobCli.RUNTIME_ERROR;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return JobCli.RUNTIME_ERROR;
        }
    }
}
