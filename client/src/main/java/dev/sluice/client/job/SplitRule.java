package dev.sluice.client.job;

import dev.sluice.client.annotation.PublicEvolving;

/**
 * Which part of a job's generated data a stream carries: the <em>split</em> constraint
 * (docs/formats.md, "Split rule"), "split the generated data into multiple data streams which can
 * be delivered to different output locations". A job's streams partition its output; no two streams
 * carry the same data, because the runtime this follows rules out duplicating a stream to several
 * consumers (docs/references.md, "A Flexible and Distributed Runtime System for High-Throughput
 * Constrained Data Streams Generation").
 *
 * <p>The generator is told the rule of the stream a task belongs to, so it computes only that part.
 */
@PublicEvolving
public sealed interface SplitRule {

    /** The stream carries the job's whole output; the job then has exactly this one stream. */
    record Whole() implements SplitRule {}

    /**
     * The stream carries one named channel of the output, such as one ink of a print job; every
     * channel of a job goes to at most one stream.
     */
    record Channel(String channel) implements SplitRule {
        public Channel {
            Names.check("channel", channel);
        }
    }
}
