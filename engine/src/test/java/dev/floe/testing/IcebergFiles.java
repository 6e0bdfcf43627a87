package dev.floe.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.parquet.Parquet;

/**
 * Writes data and delete files for an Iceberg table through Iceberg's Java API, as Spark or Flink would:
 * Parquet data files per partition, Parquet position deletes (v2), deletion vectors merged per data file
 * (v3), Parquet equality deletes. Nothing is committed here.
 */
public final class IcebergFiles {
  private static final java.util.concurrent.atomic.AtomicLong NAMES = new java.util.concurrent.atomic.AtomicLong();

  private IcebergFiles() {}

  /**
   * Restarts file numbering. File names are numbered rather than random so that a seeded workload sees
   * its files in the same order (by location) on every run.
   */
  public static void resetNames() {
    NAMES.set(0);
  }

  private static String fileName(String kind) {
    return String.format("%s-%06d.parquet", kind, NAMES.incrementAndGet());
  }

  /** The partition of {@code record} (a record of {@code schema}) under {@code spec}. */
  public static PartitionKey partitionOf(PartitionSpec spec, Schema schema, Record record) {
    PartitionKey key = new PartitionKey(spec, schema);
    key.partition(new InternalRecordWrapper(schema.asStruct()).wrap(record));
    return key.copy();
  }

  /** Groups records (of the table's current schema) by partition of the table's current spec. */
  public static Map<PartitionKey, List<Record>> byPartition(Table table, List<Record> records) {
    Map<PartitionKey, List<Record>> groups = new LinkedHashMap<>();
    for (Record r : records) {
      groups.computeIfAbsent(partitionOf(table.spec(), table.schema(), r), k -> new ArrayList<>()).add(r);
    }
    return groups;
  }

  private static OutputFile newDataOutput(Table table, PartitionSpec spec, StructLike partition) {
    String name = fileName("data");
    String location = spec.isUnpartitioned()
        ? table.locationProvider().newDataLocation(name)
        : table.locationProvider().newDataLocation(spec, partition, name);
    return table.io().newOutputFile(location);
  }

  /** One Parquet data file holding {@code records}, all in {@code partition} of the current spec. */
  public static DataFile writeData(Table table, PartitionKey partition, List<Record> records) {
    PartitionSpec spec = table.spec();
    try {
      DataWriter<Record> writer = Parquet.writeData(newDataOutput(table, spec, partition))
          .forTable(table)
          .withSpec(spec)
          .withPartition(spec.isUnpartitioned() ? null : partition)
          .createWriterFunc(GenericParquetWriter::create)
          .overwrite()
          .build();
      try (writer) {
        for (Record r : records) {
          writer.write(r);
        }
      }
      return writer.toDataFile();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Data files for {@code records}, one per partition (at most {@code perFile} rows each). */
  public static List<DataFile> writeData(Table table, List<Record> records, int perFile) {
    List<DataFile> files = new ArrayList<>();
    for (Map.Entry<PartitionKey, List<Record>> e : byPartition(table, records).entrySet()) {
      List<Record> rows = e.getValue();
      for (int from = 0; from < rows.size(); from += perFile) {
        files.add(writeData(table, e.getKey(), rows.subList(from, Math.min(rows.size(), from + perFile))));
      }
    }
    return files;
  }

  /**
   * One Parquet position delete file (v2) deleting {@code positions} of data files that all share one
   * spec and partition.
   */
  public static DeleteFile writePositionDeletes(Table table, PartitionSpec spec, StructLike partition,
      Map<String, NavigableSet<Long>> positions) {
    String name = fileName("pos-deletes");
    String location = spec.isUnpartitioned()
        ? table.locationProvider().newDataLocation(name)
        : table.locationProvider().newDataLocation(spec, partition, name);
    try {
      // Not forTable(table): that sets the row schema, and position deletes with row data are gone.
      PositionDeleteWriter<Record> writer = Parquet.writeDeletes(table.io().newOutputFile(location))
          .setAll(table.properties())
          .metricsConfig(MetricsConfig.forPositionDelete())
          .withSpec(spec)
          .withPartition(spec.isUnpartitioned() ? null : partition)
          .overwrite()
          .buildPositionWriter();
      PositionDelete<Record> delete = PositionDelete.create();
      try (writer) {
        for (String path : new java.util.TreeSet<>(positions.keySet())) {
          for (long pos : positions.get(path)) {
            writer.write(delete.set(path, pos));
          }
        }
      }
      return writer.toDeleteFile();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The result of writing deletion vectors: the new DVs, and the old ones they replace. */
  public record DVs(List<DeleteFile> added, List<DeleteFile> replaced) {}

  /**
   * Deletion vectors (v3, Puffin) for {@code positions} of data files, each merged with the data file's
   * existing deletion vector in the current snapshot, as Spark does; the replaced vectors must be removed
   * in the same commit.
   */
  public static DVs writeDeletionVectors(Table table, Map<DataFile, ? extends Collection<Long>> positions) {
    Map<String, List<DeleteFile>> existing = new LinkedHashMap<>();
    if (table.currentSnapshot() != null) {
      try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
        for (FileScanTask t : tasks) {
          for (DeleteFile d : t.deletes()) {
            if (d.content() == FileContent.POSITION_DELETES && d.format() == FileFormat.PUFFIN) {
              existing.computeIfAbsent(t.file().location(), k -> new ArrayList<>()).add(d);
            }
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    BaseDeleteLoader loader = new BaseDeleteLoader(d -> table.io().newInputFile(d.location()));
    OutputFileFactory files = OutputFileFactory.builderFor(table, 1, System.nanoTime())
        .format(FileFormat.PUFFIN).build();
    BaseDVFileWriter writer = new BaseDVFileWriter(files, path -> {
      List<DeleteFile> previous = existing.get(path);
      return previous == null ? null : loader.loadPositionDeletes(previous, path);
    });
    try {
      try (writer) {
        for (Map.Entry<DataFile, ? extends Collection<Long>> e : positions.entrySet()) {
          DataFile f = e.getKey();
          PartitionSpec spec = table.specs().get(f.specId());
          for (long pos : e.getValue()) {
            writer.delete(f.location(), pos, spec, f.partition());
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    DeleteWriteResult result = writer.result();
    return new DVs(result.deleteFiles(), result.rewrittenDeleteFiles());
  }

  /**
   * One Parquet equality delete file on {@code deleteSchema} (a selection of the table's columns), in
   * one partition of the current spec.
   */
  public static DeleteFile writeEqualityDeletes(Table table, Schema deleteSchema, PartitionKey partition,
      List<Record> keys) {
    PartitionSpec spec = table.spec();
    String name = fileName("eq-deletes");
    String location = spec.isUnpartitioned()
        ? table.locationProvider().newDataLocation(name)
        : table.locationProvider().newDataLocation(spec, partition, name);
    int[] ids = deleteSchema.columns().stream().mapToInt(f -> f.fieldId()).toArray();
    try {
      EqualityDeleteWriter<Record> writer = Parquet.writeDeletes(table.io().newOutputFile(location))
          .forTable(table)
          .withSpec(spec)
          .withPartition(spec.isUnpartitioned() ? null : partition)
          .rowSchema(deleteSchema)
          .equalityFieldIds(ids)
          .createWriterFunc(GenericParquetWriter::create)
          .overwrite()
          .buildEqualityWriter();
      try (writer) {
        for (Record k : keys) {
          writer.write(k);
        }
      }
      return writer.toDeleteFile();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Every data file of the current snapshot (with its record count), by location. */
  public static List<DataFile> liveDataFiles(Table table) {
    Map<String, DataFile> files = new LinkedHashMap<>();
    if (table.currentSnapshot() == null) {
      return new ArrayList<>();
    }
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask t : tasks) {
        files.putIfAbsent(t.file().location(), t.file().copy());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<DataFile> out = new ArrayList<>(files.values());
    out.sort(java.util.Comparator.comparing(DataFile::location));
    return out;
  }
}
