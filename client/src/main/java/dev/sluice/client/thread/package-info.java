/**
 * How Sluice makes its threads: {@link dev.sluice.client.thread.SluiceThreads}. Every thread Sluice
 * starts is named {@code sluice-...} and ends with what owns it (docs/architecture.md, "Threads").
 */
package dev.sluice.client.thread;
