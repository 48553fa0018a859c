/**
 * The user code of {@code NoThreadOutlivesItsJobIT}'s jobs: the test packs these classes, with
 * Sluice's and its dependencies', into the job's jar, so that Flink loads them child-first with the
 * job's user-code class loader. Their static initializers record that loader.
 */
package dev.sluice.flink.lifecycle.userjar;
