package dev.sluice.flink.source.reader;

import dev.sluice.flink.source.enumerator.AdminClusterMetadata;
import dev.sluice.flink.source.enumerator.ClusterMetadata;
import dev.sluice.flink.source.enumerator.TopicSubscriber;
import java.util.Comparator;

/**
 * The topic a reader subscribes to for a moment to check what PUSH needs ({@code
 * PushRequirements}): a topic of the source. A topic pattern names none, so the cluster is asked
 * for the first topic matching it; when none matches yet, the pattern's text stands in, which the
 * daemon refuses as an unknown topic, and that refusal says the daemon accepts this process unless
 * its grants are per topic (docs/flink-source.md, "What PUSH needs").
 */
final class ProbeTopic {
    private ProbeTopic() {}

    static String of(ReaderSettings settings, int subtask) {
        TopicSubscriber topicSubscriber = settings.topicSubscriber();
        if (topicSubscriber.knownTopic().isPresent()) {
            return topicSubscriber.knownTopic().get();
        }
        TopicSubscriber.TopicPattern pattern = (TopicSubscriber.TopicPattern) topicSubscriber;
        try (ClusterMetadata cluster =
                new AdminClusterMetadata(
                        settings.kafkaProperties(settings.clientId(subtask, "probe")), "")) {
            return topicSubscriber.partitions(cluster).stream()
                    .map(p -> p.partition().topic())
                    .min(Comparator.naturalOrder())
                    .orElse(pattern.pattern().pattern());
        }
    }
}
