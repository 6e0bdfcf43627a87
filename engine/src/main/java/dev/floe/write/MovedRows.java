package dev.floe.write;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.InclusiveMetricsEvaluator;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.DateTimeUtil;

/**
 * Where a rewrite (a compaction, Floe's or another engine's) put rows it moved: given rows of source
 * files by position, the positions of rows with the same values among the live rows of the files the
 * rewrite wrote. A rewrite keeps every live row and changes none, so the rows a change deleted by
 * position in a file that was rewritten since are found again by their values (equal rows are
 * interchangeable: each found position is claimed once). Reads Parquet with Iceberg's generic reader,
 * pruning files and row groups by the rows' values where the column types allow.
 */
public final class MovedRows {
  private MovedRows() {}

  /** Above this many rows, files are not pruned by the rows' values (the filter would be too large). */
  private static final int MAX_FILTERED_ROWS = 64;
  /** Up to this many rows of a one-column key are looked for with an IN list. */
  private static final int MAX_IN_LIST = 100_000;

  /**
   * The positions, per target file, of rows equal to those at {@code positions} of each source file, among
   * the targets' rows not in {@code deleted}; empty when a row cannot be found (it was deleted since, so
   * whoever deleted it first wins) or a file is not Parquet.
   */
  public static Optional<Map<String, long[]>> find(Table table, Map<DataFile, long[]> sources, List<DataFile> targets,
      Map<String, PositionDeleteIndex> deleted, boolean byKey) {
    // byKey (a table with a primary key, when the targets hold the same versions of the rows as the
    // sources: a compaction's own output): the key tells rows apart, and reading only its columns is what
    // makes finding rows in a large file cheap. Otherwise a newer version of a key may be among the
    // targets, and only equal values are the same row.
    Schema schema = !byKey || table.schema().identifierFieldIds().isEmpty() ? table.schema()
        : TypeUtil.select(table.schema(), table.schema().identifierFieldIds());
    Map<List<Object>, Integer> wanted = new HashMap<>();
    List<List<Object>> rows = new ArrayList<>();
    for (Map.Entry<DataFile, long[]> e : sources.entrySet()) {
      if (e.getKey().format() != FileFormat.PARQUET) {
        return Optional.empty();
      }
      long[] positions = Arrays.stream(e.getValue()).sorted().distinct().toArray();
      int before = rows.size();
      try (CloseableIterable<Record> records = read(table, schema, e.getKey(), Expressions.alwaysTrue())) {
        for (Record r : records) {
          long pos = (Long) r.getField(MetadataColumns.ROW_POSITION.name());
          if (Arrays.binarySearch(positions, pos) >= 0) {
            List<Object> row = values(schema, r);
            rows.add(row);
            wanted.merge(row, 1, Integer::sum);
          }
        }
      } catch (IOException ex) {
        throw new UncheckedIOException(ex);
      }
      if (rows.size() - before < positions.length) {
        return Optional.empty(); // positions past the file's end: not rows of it
      }
    }
    int missing = rows.size();
    Expression filter = filter(schema, rows);
    InclusiveMetricsEvaluator mayHold = new InclusiveMetricsEvaluator(schema, filter);
    Map<String, List<Long>> found = new LinkedHashMap<>();
    for (DataFile target : targets) {
      if (missing == 0) {
        break;
      }
      if (!mayHold.eval(target)) {
        continue;
      }
      if (target.format() != FileFormat.PARQUET) {
        return Optional.empty();
      }
      PositionDeleteIndex gone = deleted.get(target.location());
      try (CloseableIterable<Record> records = read(table, schema, target, filter)) {
        for (Record r : records) {
          long pos = (Long) r.getField(MetadataColumns.ROW_POSITION.name());
          if (gone != null && gone.isDeleted(pos)) {
            continue;
          }
          List<Object> row = values(schema, r);
          Integer n = wanted.get(row);
          if (n != null && n > 0) {
            wanted.put(row, n - 1);
            found.computeIfAbsent(target.location(), k -> new ArrayList<>()).add(pos);
            if (--missing == 0) {
              break;
            }
          }
        }
      } catch (IOException ex) {
        throw new UncheckedIOException(ex);
      }
    }
    if (missing > 0) {
      return Optional.empty();
    }
    Map<String, long[]> out = new LinkedHashMap<>();
    found.forEach((f, p) -> out.put(f, p.stream().mapToLong(Long::longValue).sorted().toArray()));
    return Optional.of(out);
  }

  private static CloseableIterable<Record> read(Table table, Schema schema, DataFile file, Expression filter) {
    Schema projection = TypeUtil.join(schema, new Schema(MetadataColumns.ROW_POSITION));
    return Parquet.read(table.io().newInputFile(file.location(), file.fileSizeInBytes()))
        .project(projection)
        .filter(filter)
        .caseSensitive(true)
        .createReaderFunc(fileSchema -> GenericParquetReaders.buildReader(projection, fileSchema))
        .build();
  }

  /** A row's column values, comparable by {@code equals} (binary as buffers). */
  private static List<Object> values(Schema schema, Record r) {
    List<Types.NestedField> columns = schema.columns();
    List<Object> out = new ArrayList<>(columns.size());
    for (int i = 0; i < columns.size(); i++) {
      Object v = r.get(i);
      out.add(v instanceof byte[] b ? ByteBuffer.wrap(b) : v instanceof CharSequence c ? c.toString() : v);
    }
    return out;
  }

  /**
   * Rows of these values: one equality per primitive column whose literal Iceberg can bind, an
   * alternative per row (few rows), or everything (many rows). Only prunes: matches are decided by
   * comparing values.
   */
  private static Expression filter(Schema schema, List<List<Object>> rows) {
    if (rows.size() > MAX_FILTERED_ROWS && schema.columns().size() == 1 && rows.size() <= MAX_IN_LIST) {
      List<Object> literals = new ArrayList<>();
      for (List<Object> row : rows) {
        Expression term = term(schema.columns().get(0), row.get(0));
        if (!(term instanceof org.apache.iceberg.expressions.UnboundPredicate<?> p) || p.literal() == null) {
          return Expressions.alwaysTrue();
        }
        literals.add(p.literal().value());
      }
      return Expressions.in(schema.columns().get(0).name(), literals);
    }
    if (rows.size() > MAX_FILTERED_ROWS) {
      return Expressions.alwaysTrue();
    }
    Expression any = Expressions.alwaysFalse();
    for (List<Object> row : rows) {
      Expression all = Expressions.alwaysTrue();
      List<Types.NestedField> columns = schema.columns();
      for (int i = 0; i < columns.size(); i++) {
        Expression term = term(columns.get(i), row.get(i));
        if (term != null) {
          all = Expressions.and(all, term);
        }
      }
      any = Expressions.or(any, all);
    }
    return any;
  }

  private static Expression term(Types.NestedField column, Object v) {
    String name = column.name();
    if (!column.type().isPrimitiveType() || name.contains(".") || !dev.floe.read.ScanPlan.prunesBy(column.type())) {
      return null;
    }
    if (v == null) {
      return Expressions.isNull(name);
    }
    if (v instanceof Double d && d.isNaN() || v instanceof Float f && f.isNaN()) {
      return Expressions.isNaN(name);
    }
    org.apache.iceberg.types.Type.TypeID type = column.type().typeId();
    Object literal = null;
    if (v instanceof Boolean || v instanceof Integer || v instanceof Long || v instanceof Float
        || v instanceof Double || v instanceof String || v instanceof BigDecimal || v instanceof UUID) {
      literal = v;
    } else if (v instanceof LocalDate d) {
      literal = (int) d.toEpochDay();
    } else if (v instanceof LocalTime t) {
      literal = t.toNanoOfDay() / 1000;
    } else if (v instanceof LocalDateTime t && type == org.apache.iceberg.types.Type.TypeID.TIMESTAMP) {
      literal = DateTimeUtil.microsFromTimestamp(t);
    } else if (v instanceof OffsetDateTime t && type == org.apache.iceberg.types.Type.TypeID.TIMESTAMP) {
      literal = DateTimeUtil.microsFromTimestamptz(t);
    }
    return literal == null ? null : Expressions.equal(name, literal);
  }
}
