/**
 * Reading a job's streams on an output-location node: {@link dev.sluice.client.read.StreamReader}
 * (ordered chunks, zero-copy, optional constant-speed pacing, shared by several readers, delivery
 * progress reported back) and {@link dev.sluice.client.read.SimpleStreamReader}, its plain {@code
 * poll / isClosed / close} facade. See docs/stream-reader.md.
 */
package dev.sluice.client.read;
