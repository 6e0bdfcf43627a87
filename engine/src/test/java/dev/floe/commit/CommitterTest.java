package dev.floe.commit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.catalog.LocalFileIO;
import dev.floe.catalog.FloeCatalog;
import dev.floe.catalog.SwapCount;
import dev.floe.read.ScanPlanner;
import dev.floe.testing.IcebergFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FloeCommit;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.encryption.EncryptionManager;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The committer's contract on real tables in a temporary warehouse: both commit paths tell the planner,
 * a conflict is 40001 and leaves nothing behind, an unknown outcome keeps every file, and an error after
 * the swap does not undo a commit.
 */
class CommitterTest {
  private static final TableIdentifier ID = TableIdentifier.of("public", "t");
  private static final Schema SCHEMA = new Schema(Types.NestedField.optional(1, "id", Types.LongType.get()));

  @TempDir
  Path dir;

  private FloeCatalog catalog;
  private final List<FloeCommit.Committed> told = new ArrayList<>();
  private final ScanPlanner planner = new ScanPlanner();
  private Committer committer;

  @BeforeEach
  void open() {
    catalog = FloeCatalog.open("floe", dir, new LocalFileIO(), false);
    catalog.createNamespace(Namespace.of("public"), Map.of());
    catalog.createTable(ID, SCHEMA, PartitionSpec.unpartitioned(), Map.of("format-version", "2"));
    committer = new Committer(catalog, (table, parentId, committed, change) -> {
      told.add(committed);
      planner.committed(table, parentId, committed, change);
    }, null);
  }

  @AfterEach
  void close() {
    catalog.close();
  }

  private Table load() {
    return catalog.loadTable(ID);
  }

  private static List<DataFile> write(Table table, long... ids) {
    List<Record> rows = new ArrayList<>();
    for (long id : ids) {
      GenericRecord r = GenericRecord.create(SCHEMA);
      r.setField("id", id);
      rows.add(r);
    }
    return IcebergFiles.writeData(table, rows, 1000);
  }

  private static Set<String> locations(Table table) {
    Set<String> out = new HashSet<>();
    IcebergFiles.liveDataFiles(table).forEach(f -> out.add(f.location()));
    return out;
  }

  @Test
  void aFloeCommitAndAnIcebergCommitBothTellThePlanner() {
    Table table = load();
    List<DataFile> first = write(table, 1);
    Committed fast = committer.commit(ID, table, TableChange.append(first));
    assertThat(fast.how()).isEqualTo(Committed.How.FLOE);
    assertThat(told).hasSize(1);
    assertThat(told.get(0).byFloe()).isTrue();
    assertThat(told.get(0).snapshot().snapshotId()).isEqualTo(fast.snapshot().snapshotId());

    // Another committer moves the table behind this Table's back: its next commit loses the swap, and
    // Iceberg's path commits it, validated.
    Table other = load();
    committer.commit(ID, other, TableChange.append(write(other, 2)));
    assertThat(told).hasSize(2);
    List<DataFile> third = write(table, 3);
    Committed validated = committer.commit(ID, table, TableChange.rowDelta(fast.snapshot().snapshotId(), third,
        List.of(), List.of(), List.of(), TableChange.Validation.NONE, List.of(third.get(0).location())));
    assertThat(validated.how()).isEqualTo(Committed.How.ICEBERG);
    assertThat(told).hasSize(3);
    assertThat(told.get(2).byFloe()).isFalse();
    assertThat(told.get(2).snapshot().snapshotId()).isEqualTo(validated.snapshot().snapshotId());
    assertThat(load().currentSnapshot().snapshotId()).isEqualTo(validated.snapshot().snapshotId());
    assertThat(locations(load())).hasSize(3);
  }

  @Test
  void aConflictIsASerializationFailureAndLeavesNothingBehind() throws IOException {
    Table setup = load();
    committer.commit(ID, setup, TableChange.append(write(setup, 1, 2)));
    Table first = load();
    Table second = load();
    Snapshot read = first.currentSnapshot();
    List<DataFile> original = IcebergFiles.liveDataFiles(first);

    // Both rewrite the same file from the same snapshot: the second to commit loses.
    List<DataFile> winner = write(second, 2);
    committer.commit(ID, second, rewriteOf(read, original, winner));
    Set<String> metadataBefore = metadataFiles();
    List<DataFile> loser = write(first, 1);
    assertThat(Files.exists(Path.of(loser.get(0).location()))).isTrue();

    assertThatThrownBy(() -> committer.commit(ID, first, rewriteOf(read, original, loser)))
        .isInstanceOfSatisfying(FloeException.class, e -> {
          assertThat(e.sqlState()).isEqualTo(SqlState.SERIALIZATION_FAILURE);
          assertThat(e.getMessage()).isEqualTo("could not serialize access due to concurrent update");
        });
    assertThat(Files.exists(Path.of(loser.get(0).location()))).isFalse();
    assertThat(metadataFiles()).isEqualTo(metadataBefore); // no manifest, list or metadata file stays
    assertThat(locations(load())).containsExactly(winner.get(0).location());
  }

  /** {@code files} (read at {@code read}) replaced by {@code by}: their rows deleted, new rows added. */
  private static TableChange rewriteOf(Snapshot read, List<DataFile> files, List<DataFile> by) {
    return TableChange.rowDelta(read.snapshotId(), by, List.of(), files, List.of(),
        new TableChange.Validation(Expressions.alwaysTrue(), null, true, List.of()), List.of(by.get(0).location()));
  }

  private Set<String> metadataFiles() throws IOException {
    try (Stream<Path> files = Files.list(dir.resolve("public").resolve("t").resolve("metadata"))) {
      Set<String> out = new HashSet<>();
      files.forEach(f -> out.add(f.getFileName().toString()));
      out.remove("version-hint.text");
      return out;
    }
  }

  @Test
  void aCommitWhoseOutcomeIsUnknownKeepsEveryFile() {
    for (boolean tookEffect : new boolean[] {true, false}) {
      Table real = load();
      Table table = new BaseTable(new Failing(ops(real), tookEffect,
          () -> new CommitStateUnknownException(new RuntimeException("SQLite's COMMIT failed"))), real.name());
      List<DataFile> files = write(real, tookEffect ? 10 : 20);
      assertThatThrownBy(() -> committer.commit(ID, table, TableChange.append(files)))
          .isInstanceOfSatisfying(FloeException.class,
              e -> assertThat(e.sqlState()).isEqualTo(SqlState.TRANSACTION_RESOLUTION_UNKNOWN));
      assertThat(Files.exists(Path.of(files.get(0).location()))).isTrue();
      // Where the commit took effect, the table reads: the manifests it names were kept too.
      assertThat(locations(load()).contains(files.get(0).location())).isEqualTo(tookEffect);
    }
  }

  @Test
  void anErrorAfterTheSwapDoesNotUndoTheCommit() {
    for (boolean floePath : new boolean[] {true, false}) {
      Table real = load();
      Table table = new BaseTable(new FailingAfterSwap(ops(real),
          () -> new IllegalStateException("the refresh after the commit failed")), real.name());
      List<DataFile> files = write(real, floePath ? 30 : 40);
      TableChange change = floePath ? TableChange.append(files)
          : TableChange.append(files).withSummary(Map.of("floe.test", "1")); // Floe's path takes files only
      Committed done = committer.commit(ID, table, change);
      assertThat(done.how()).isEqualTo(floePath ? Committed.How.FLOE : Committed.How.ICEBERG);
      assertThat(Files.exists(Path.of(files.get(0).location()))).isTrue();
      assertThat(load().currentSnapshot().snapshotId()).isEqualTo(done.snapshot().snapshotId());
      assertThat(locations(load())).contains(files.get(0).location());
      for (ManifestFile m : load().currentSnapshot().allManifests(real.io())) {
        assertThat(Files.exists(Path.of(m.path()))).as(m.path()).isTrue();
      }
    }
  }

  @Test
  void aBlockCommitsAllItsTablesOrNone() throws IOException {
    TableIdentifier a = TableIdentifier.of("public", "a");
    TableIdentifier b = TableIdentifier.of("public", "b");
    for (TableIdentifier id : List.of(a, b)) {
      catalog.createTable(id, SCHEMA, PartitionSpec.unpartitioned(), Map.of("format-version", "2"));
      Table t = catalog.loadTable(id);
      committer.commit(id, t, TableChange.append(write(t, 1)));
    }
    List<TableIdentifier> abandoned = new ArrayList<>();

    // Both tables change, in one swap.
    Table ta = catalog.loadTable(a);
    Table tb = catalog.loadTable(b);
    List<Committed> done = committer.commitBlock(List.of(
        new Staged(b, ops(tb).current(), TableChange.append(write(tb, 2)), abandoned),
        new Staged(a, ops(ta).current(), TableChange.append(write(ta, 2)), abandoned)), List.of());
    assertThat(done).extracting(Committed::how).containsExactly(Committed.How.ICEBERG, Committed.How.ICEBERG);
    assertThat(locations(catalog.loadTable(a))).hasSize(2);
    assertThat(locations(catalog.loadTable(b))).hasSize(2);
    assertThat(abandoned).isEmpty();

    // b's file is rewritten by someone else first: the block, which rewrote it too, changes neither table.
    ta = catalog.loadTable(a);
    tb = catalog.loadTable(b);
    TableMetadata baseB = ops(tb).current();
    List<DataFile> filesB = IcebergFiles.liveDataFiles(tb);
    committer.commit(b, catalog.loadTable(b), rewriteOf(tb.currentSnapshot(), filesB, write(tb, 3)));
    String pointerA = catalog.metadataLocation(a).orElseThrow();
    Set<String> metadataA = metadataFiles(a);
    List<DataFile> newA = write(ta, 4);
    List<DataFile> newB = write(tb, 4);
    assertThatThrownBy(() -> committer.commitBlock(List.of(
        new Staged(a, ops(catalog.loadTable(a)).current(), TableChange.append(newA), abandoned),
        new Staged(b, baseB, rewriteOf(baseB.currentSnapshot(), filesB, newB), abandoned)), List.of()))
        .isInstanceOfSatisfying(FloeException.class,
            e -> assertThat(e.sqlState()).isEqualTo(SqlState.SERIALIZATION_FAILURE));
    assertThat(abandoned).containsExactlyInAnyOrder(a, b);
    assertThat(catalog.metadataLocation(a).orElseThrow()).isEqualTo(pointerA);
    assertThat(metadataFiles(a)).isEqualTo(metadataA); // a's snapshot, applied first, was unwritten
    assertThat(Files.exists(Path.of(newA.get(0).location()))).isFalse();
    assertThat(Files.exists(Path.of(newB.get(0).location()))).isFalse();
  }

  private Set<String> metadataFiles(TableIdentifier id) throws IOException {
    try (Stream<Path> files = Files.list(dir.resolve("public").resolve(id.name()).resolve("metadata"))) {
      Set<String> out = new HashSet<>();
      files.forEach(f -> out.add(f.getFileName().toString()));
      out.remove("version-hint.text");
      return out;
    }
  }

  /** A table a block changed: its change given as folded, its written files deleted when abandoned. */
  private final class Staged implements BlockTable {
    private final TableIdentifier id;
    private final TableMetadata base;
    private final TableChange change;
    private final List<TableIdentifier> abandoned;

    Staged(TableIdentifier id, TableMetadata base, TableChange change, List<TableIdentifier> abandoned) {
      this.id = id;
      this.base = base;
      this.change = change;
      this.abandoned = abandoned;
    }

    @Override
    public TableIdentifier id() {
      return id;
    }

    @Override
    public TableMetadata base() {
      return base;
    }

    @Override
    public java.util.Optional<Table> current() {
      return java.util.Optional.of(catalog.loadTable(id));
    }

    @Override
    public java.util.Optional<TableMetadata> single() {
      return java.util.Optional.empty();
    }

    @Override
    public TableChange folded() {
      return change.withWritten(List.of()); // the block's files are the block's to delete
    }

    @Override
    public void rebased(TableChange rebased) {
      // the tests' blocks do not rebase
    }

    @Override
    public void abandon() {
      abandoned.add(id);
      change.written().forEach(f -> new LocalFileIO().deleteFile(f));
    }
  }

  private static TableOperations ops(Table table) {
    return ((HasTableOperations) table).operations();
  }

  /** Operations that commit through {@code real} (or not), then fail as told. */
  private static class Failing implements TableOperations {
    final TableOperations real;
    private final boolean commit;
    private final java.util.function.Supplier<RuntimeException> failure;

    Failing(TableOperations real, boolean commit, java.util.function.Supplier<RuntimeException> failure) {
      this.real = real;
      this.commit = commit;
      this.failure = failure;
    }

    @Override
    public TableMetadata current() {
      return real.current();
    }

    @Override
    public TableMetadata refresh() {
      return real.refresh();
    }

    @Override
    public void commit(TableMetadata base, TableMetadata metadata) {
      if (commit) {
        real.commit(base, metadata);
      }
      throw failure.get();
    }

    @Override
    public FileIO io() {
      return real.io();
    }

    @Override
    public EncryptionManager encryption() {
      return real.encryption();
    }

    @Override
    public String metadataFileLocation(String fileName) {
      return real.metadataFileLocation(fileName);
    }

    @Override
    public LocationProvider locationProvider() {
      return real.locationProvider();
    }

    @Override
    public long newSnapshotId() {
      return real.newSnapshotId();
    }
  }

  /** {@link Failing} after a swap that happened, which its count shows. */
  private static final class FailingAfterSwap extends Failing implements SwapCount {
    FailingAfterSwap(TableOperations real, java.util.function.Supplier<RuntimeException> failure) {
      super(real, true, failure);
    }

    @Override
    public long swaps() {
      return ((SwapCount) real).swaps();
    }
  }
}
