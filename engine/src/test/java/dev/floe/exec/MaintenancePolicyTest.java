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
   * A table measured at its last expiry (40 versions kept, ~30 KB of metadata each) is not due while the
   * versions that landed since fit; once a compaction replaces its big file, which every older version
   * then holds, it is due at once — long before the count (a quarter more than the bound) says so.
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
    MaintenancePolicy.Bound bound = new MaintenancePolicy.Bound(40, 0, 30_000);
    long now = System.currentTimeMillis();
    // 41 versions: the table (1.04 MB), 40 × 30 KB of history, within 1.04 MB + 2 MiB
    assertThat(policy.expiryTrigger(table, now, bound)).isEmpty();

    table.newRewrite().rewriteFiles(Set.of(big), Set.of(file("big2", 1_000_000))).commit();
    // the old big file is held by 41 older versions: 1.04 + 1.0 + 41 × 0.03 MB > 1.04 + 2.1 MB
    assertThat(policy.expiryTrigger(table, now, bound)).hasValueSatisfying(why ->
        assertThat(why).startsWith("42 versions and the 1.0 MB of replaced files they hold"));
    // the summaries alone (the replaced file beside the table) are within the bound
    assertThat(policy.expiryTrigger(table, now, new MaintenancePolicy.Bound(40, 0, 0))).isEmpty();
    // and no more versions than the bound kept: an expiry would keep them all
    assertThat(policy.expiryTrigger(table, now, new MaintenancePolicy.Bound(42, 0, 30_000))).isEmpty();
  }

  /** What a version typically costs is the median of the older versions' costs, not swayed by a rewrite. */
  @Test
  void theBoundRemembersTheMedianVersionCost() {
    Table table = newTable();
    MaintenancePolicy policy = MaintenancePolicy.of(table);
    HistorySize size = new HistorySize(1_000_000, List.of(1_100_000L, 30_000L, 5_000_000L, 20_000L, 40_000L),
        Set.of());
    assertThat(policy.keep(size, null).versionBytes()).isEqualTo(40_000);
    assertThat(policy.keep(new HistorySize(0, List.of(), Set.of()), null).versionBytes()).isZero();
  }
}
