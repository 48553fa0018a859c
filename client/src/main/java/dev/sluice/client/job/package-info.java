/**
 * Jobs: what a user asks Sluice to generate, and how the request and its outcome travel.
 *
 * <p>A {@link dev.sluice.client.job.JobSpec} (its JSON form read and written by {@link
 * dev.sluice.client.job.JobSpecJson}) names the inputs, the generator and the output streams. A
 * {@link dev.sluice.client.job.JobClient} puts {@link dev.sluice.client.job.JobCommand}s on the
 * jobs topic and reads {@link dev.sluice.client.job.JobStatus}es from the status topic; {@link
 * dev.sluice.client.job.JobCli} does the same from a shell. The scheduler's side reads commands
 * with a {@link dev.sluice.client.job.JobCommandReader} and answers with a {@link
 * dev.sluice.client.job.StatusPublisher}. The wire formats are in {@code docs/formats.md}, "Job
 * commands and statuses". A job's chunks travel on the topic of their output location, which {@link
 * dev.sluice.client.job.ChunkTopics} names (docs/formats.md, "Chunk topics").
 */
package dev.sluice.client.job;
