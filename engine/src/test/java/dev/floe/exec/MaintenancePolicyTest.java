package dev.floe.exec;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.inmemory.InMemoryCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/**
 * The expiry trigger's estimate of a table's size, from what is in memory: the versions' summaries and
 * what the last expiry measured. The tables are Iceberg tables in memory; only their metadata matters.
 */
class MaintenancePolicyTest {
  private static final Schema SCHEMA = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()));

  /** An empty Iceberg table in memory. */
  private static Table newTable() {
    InMemoryCatalog catalog = new InMemoryCatalog();
    catalog.initialize("mem", Map.of());
    catalog.createNamespace(Namespace.of("public"));
    return catalog.createTable(TableIdentifier.of("public", "t"), SCHEMA);
  }

  private static DataFile file(String name, long bytes) {
    return DataFiles.builder(PartitionSpec.unpartitioned()).withPath("/t/data/" + name + ".parquet")
        .withFormat("PARQUET").withFileSizeInBytes(bytes).withRecordCount(1).build();
  }

  /**
   * A table measured at its last expiry (35 versions kept, 2.06 MB; ~30 KB landing with each version) is
   * not due while the versions that landed since fit; once a compaction replaces its big file, which
   * every older version then holds, it is due at once — long before the count (a quarter more than the
   * bound) says so.
   */
  @Test
  void aRewriteHeldByManyVersionsMakesTheTableDueBySize() {
    Table table = newTable();
    DataFile big = file("big", 1_000_000);
    table.newAppend().appendFile(big).commit();
    for (int i = 0; i < 40; i++) {
      table.newAppend().appendFile(file("row" + i, 1_000)).commit();
    }
    MaintenancePolicy policy = MaintenancePolicy.of(table);
    long budget = 1_040_000 + (2L << 20);
    MaintenancePolicy.Bound bound = new MaintenancePolicy.Bound(35, 35, 2_060_000, budget, 10, 300_000);
    long now = System.currentTimeMillis();
    // 6 landed since: 2.06 MB and 16 × 30 KB (those, and as many as land between two expiries)
    assertThat(policy.expiryTrigger(table, now, bound)).isEmpty();

    table.newRewrite().rewriteFiles(Set.of(big), Set.of(file("big2", 1_000_000))).commit();
    // 2.06 MB, the old big file the older versions hold, and 17 × 30 KB: 3.57 MB
    assertThat(policy.expiryTrigger(table, now, bound)).hasValueSatisfying(why ->
        assertThat(why).startsWith("7 versions landed since the last expiry take the table to about 3.6 MB"));
    // the summaries alone (the replaced file beside the table) are within the bound
    assertThat(policy.expiryTrigger(table, now, new MaintenancePolicy.Bound(35, 35, 2_060_000, budget, 0, 0)))
        .isEmpty();
    // a rewrite of 1 MB more (a compaction's output, beside the files it replaces) needs room made first;
    // one of 0.5 MB fits beside the 2.06 MB kept and the 8 versions landed since (8 × 30 KB)
    table.newAppend().appendFile(file("after", 1_000)).commit();
    assertThat(policy.needsRoom(table, bound, 1_000_000)).isTrue();
    assertThat(policy.needsRoom(table, bound, 500_000)).isFalse();
    assertThat(policy.needsRoom(table, null, 1_000_000)).as("not measured yet").isFalse();
    // and no more versions than the bound kept: an expiry would keep them all
    assertThat(policy.expiryTrigger(table, now, new MaintenancePolicy.Bound(42, 42, 2_240_000, budget, 10,
        300_000))).isEmpty();
  }

  /**
   * The size bound keeps room for twice the versions that land before the next expiry, as many, adding as
   * many bytes, as landed between recent expiries: the kept versions and those landing add up to no more than
   * the budget, down to the current version alone.
   */
  @Test
  void theBoundLeavesRoomForWhatLandsBeforeTheNextExpiry() {
    MaintenancePolicy policy = MaintenancePolicy.of(newTable());
    // 1.1 MB of data, 100 older versions of 40 KB (5.1 MB): the budget is 1.1 MB + 2.2 MB
    java.util.List<Long> costs = new java.util.ArrayList<>(List.of(1_100_000L));
    for (int i = 0; i < 100; i++) {
      costs.add(40_000L);
    }
    HistorySize size = new HistorySize(1_100_000, costs, Set.of());
    // no earlier expiry known (a first one, one by hand): room for the 8 versions the count trigger lets
    // land, at the older ones' mean, 40 KB: 3.3 MB less 0.32 MB, the table and 47 more
    MaintenancePolicy.Bound bound = policy.keep(size, null, 0);
    assertThat(bound.kept()).isEqualTo(48);
    assertThat(bound.present()).isEqualTo(48);
    assertThat(bound.presentBytes()).isEqualTo(1_100_000 + 47 * 40_000);
    assertThat(bound.budget()).isEqualTo(3_300_000);

    // 20 landed since the last expiry kept 81 versions of 4.3 MB, adding 0.8 MB: room for twice 20 and 8
    // of 40 KB, 1.92 MB: the table and 7 more
    bound = policy.keep(size, new MaintenancePolicy.Bound(81, 81, 4_300_000, 3_300_000, 0, 0), 0);
    assertThat(bound.landing()).isEqualTo(20);
    assertThat(bound.versionBytes()).isEqualTo(40_000);
    assertThat(bound.kept()).isEqualTo(8);

    // what lands is measured, not summed from the versions' own costs: 20 versions that added 0.6 MB
    // leave room for 48 of 30 KB (1.44 MB), whatever the newest cost on their own: the table and 19 more
    bound = policy.keep(size, new MaintenancePolicy.Bound(81, 81, 4_500_000, 3_300_000, 0, 0), 0);
    assertThat(bound.versionBytes()).isEqualTo(30_000);
    assertThat(bound.kept()).isEqualTo(20);

    // more landed between two expiries than the budget holds: the current version alone is kept, and a
    // long gap is remembered, fading by a sixteenth at each expiry
    bound = policy.keep(size, new MaintenancePolicy.Bound(10, 10, 1_460_000, 3_300_000, 0, 0), 0);
    assertThat(bound.landing()).isEqualTo(91);
    assertThat(bound.kept()).isEqualTo(1);
    bound = policy.keep(size, new MaintenancePolicy.Bound(95, 95, 4_860_000, 3_300_000, 91, 3_640_000), 0);
    assertThat(bound.landing()).isEqualTo(91 - 5);
    assertThat(bound.landingBytes()).isEqualTo(3_640_000 - 227_500);
    assertThat(bound.kept()).isEqualTo(1);

    // room made for a rewrite of 1 MB: 3.3 MB less 8 × 40 KB and 1 MB: the table and 22 more
    assertThat(policy.keep(size, null, 1_000_000).kept()).isEqualTo(23);

    // all 21 present fit (1.9 MB): those still to land fit too until the budget is spent, room left for
    // twice those landing before the next expiry (11 of 40 KB) and 8 in flight: 3.3 MB less 1.2 MB
    HistorySize fits = new HistorySize(1_100_000, costs.subList(0, 21), Set.of());
    bound = policy.keep(fits, new MaintenancePolicy.Bound(10, 10, 1_460_000, 3_300_000, 0, 0), 0);
    assertThat(bound.present()).isEqualTo(21);
    assertThat(bound.kept()).isEqualTo(21 + 5);
  }
}
