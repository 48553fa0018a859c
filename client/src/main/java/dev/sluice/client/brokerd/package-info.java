/**
 * The Java client of {@code sluice-brokerd}: subscribe over its Unix socket, read the
 * subscription's objects zero-copy from the shared-memory segment, release them, and resume after a
 * daemon restart. See docs/formats.md, "Control protocol", for what goes over the socket.
 */
package dev.sluice.client.brokerd;
