package dev.sluice.flink.source;

import dev.sluice.flink.source.testutils.SluiceExternalSystem;
import dev.sluice.flink.source.testutils.SluiceSourceExternalContext;
import org.apache.flink.connector.testframe.environment.MiniClusterTestEnvironment;
import org.apache.flink.connector.testframe.external.ExternalContextFactory;
import org.apache.flink.connector.testframe.junit.annotations.TestContext;
import org.apache.flink.connector.testframe.junit.annotations.TestEnv;
import org.apache.flink.connector.testframe.junit.annotations.TestExternalSystem;
import org.apache.flink.connector.testframe.junit.annotations.TestSemantics;
import org.apache.flink.connector.testframe.testsuites.SourceTestSuiteBase;
import org.apache.flink.core.execution.CheckpointingMode;

/**
 * Flink's own connector test suite (single and multiple splits, idle readers, savepoints, scale up
 * and down, TaskManager failure, metrics) against a real broker and a real sluice-brokerd, in PUSH
 * and in PULL mode.
 */
class SluiceSourceTestSuiteIT extends SourceTestSuiteBase<String> {
    @TestEnv MiniClusterTestEnvironment flink = new MiniClusterTestEnvironment();

    @TestExternalSystem SluiceExternalSystem system = new SluiceExternalSystem();

    @TestSemantics
    CheckpointingMode[] semantics = new CheckpointingMode[] {CheckpointingMode.EXACTLY_ONCE};

    @TestContext
    ExternalContextFactory<SluiceSourceExternalContext> push =
            testName -> new SluiceSourceExternalContext(system, ReadMode.PUSH);

    @TestContext
    ExternalContextFactory<SluiceSourceExternalContext> pull =
            testName -> new SluiceSourceExternalContext(system, ReadMode.PULL);
}
