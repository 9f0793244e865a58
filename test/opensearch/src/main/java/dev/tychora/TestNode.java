package dev.tychora;

import java.nio.file.Path;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import org.opensearch.common.settings.Settings;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.Plugin;

/** One OpenSearch node for the tests, its plugins on the classpath. */
public final class TestNode extends Node {
  TestNode(Settings settings, Collection<Class<? extends Plugin>> plugins) {
    super(InternalSettingsPreparer.prepareEnvironment(settings, Collections.emptyMap(), null, () -> settings.get("node.name")), plugins, true);
  }

  @SuppressWarnings("unchecked")
  public static void main(String[] args) throws Exception {
    // args: home http-port transport-port node-name seed-hosts(comma) initial-masters(comma)
    Settings.Builder s = Settings.builder()
        .put("path.home", args[0])
        .put("path.data", Path.of(args[0], "data").toString())
        .put("path.logs", Path.of(args[0], "logs").toString())
        .put("cluster.name", "tychora-test")
        .put("node.name", args[3])
        .put("network.host", "127.0.0.1")
        .put("http.port", args[1])
        .put("transport.port", args[2])
        // A test machine's disk may be fuller than the 85 % watermark: replicas must still be
        // placed, or losing a node loses its primaries.
        .put("cluster.routing.allocation.disk.threshold_enabled", false);
    if (args.length > 4) {
      s.putList("discovery.seed_hosts", List.of(args[4].split(",")));
      s.putList("cluster.initial_cluster_manager_nodes", List.of(args[5].split(",")));
    } else {
      s.put("discovery.type", "single-node");
    }
    List<Class<? extends Plugin>> plugins = List.of(
        (Class<? extends Plugin>) Class.forName("org.opensearch.transport.Netty4Plugin"),
        (Class<? extends Plugin>) Class.forName("org.opensearch.analysis.common.CommonAnalysisPlugin"),
        (Class<? extends Plugin>) Class.forName("org.opensearch.painless.PainlessPlugin"),
        // _reindex and _delete_by_query (compaction and erasure), a module of every distribution.
        (Class<? extends Plugin>) Class.forName("org.opensearch.index.reindex.ReindexPlugin"),
        (Class<? extends Plugin>) Class.forName("org.opensearch.knn.plugin.KNNPlugin"));
    TestNode node = new TestNode(s.build(), plugins);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> { try { node.close(); } catch (Exception e) { } }));
    node.start();
    System.out.println("tychora-test-node started");
    // The node's threads are daemons: this one keeps the JVM up until SIGTERM.
    new java.util.concurrent.CountDownLatch(1).await();
  }
}
