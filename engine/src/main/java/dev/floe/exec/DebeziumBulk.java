package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.SqlType;
import dev.floe.cdc.TableShape;
import dev.floe.read.ScanPlan;
import dev.floe.read.ScanSql;
import dev.floe.sql.Lexer;
import dev.floe.types.TypeMapping;
import dev.floe.write.DeltaWriter;
import dev.floe.write.Inserter;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.duckdb.DuckDBConnection;

/**
 * A large batch of Debezium events folded and reconciled inside DuckDB, vectorized and on every core
 * (docs/decisions/0010): the lines are loaded as text, decoded by {@code json_transform}, folded per key
 * by {@code arg_max} over the source position, and merged with the stored state by a join, the new state
 * rows and the target's rows written straight from those relations. The JVM sees no event.
 *
 * <p>It computes exactly what the Java fold ({@link dev.floe.cdc.Fold}, the reference) computes, and
 * takes only the batches it computes exactly: plain events (no schema envelope) of {@code c}, {@code u},
 * {@code d}, {@code r} outside an initial snapshot, and {@code m}, positioned by PostgreSQL's LSN, whose
 * after images name every column once in the table's order with values of their JSON type (no unchanged
 * TOAST placeholder), no key change, no two writes of a key at one position, a state with no range
 * deletion but "everything" and no expiring cell due, and no NOT NULL violation. Anything else, or any
 * value DuckDB cannot read, returns null before anything is written: the caller folds the batch in Java,
 * which also reports a bad event precisely. {@code DebeziumBulkTest} checks both paths agree.
 */
final class DebeziumBulk {
  /** Below this many events a batch is folded in Java: planning the SQL costs more than it saves. */
  static final int MIN_EVENTS = 20_000;
  /** The system property that sets {@link #MIN_EVENTS} otherwise. */
  static final String MIN_EVENTS_PROPERTY = "floe.cdc.bulk-min-events";
  /** How many batches this path has taken (for tests: that a batch did not fall back). */
  static final java.util.concurrent.atomic.AtomicLong TAKEN = new java.util.concurrent.atomic.AtomicLong();

  private static final String LINES = "__floe_cdc_lines";
  private static final String EVENTS = "__floe_cdc_events";
  private static final String FOLD = "__floe_cdc_fold";
  private static final String STORED = "__floe_cdc_stored";
  private static final String MERGED = "__floe_cdc_merged";
  private static final String TARGET_DELETED = "__floe_cdc_target_deleted";

  /** What the batch writes, not yet committed. */
  record Planned(DeltaWriter.Delta state, DeltaWriter.Delta target, long changes, long keysChanged, long written,
      long deleted, long maxPosition) {}

  private final ChangeApply apply;
  private final ChangeState state;
  private final TableShape shape;
  private final Path scratch;
  /** When TTLs are judged, in seconds. */
  private final long now;
  /** How long a deletion is kept, in seconds ({@link ChangeState#gcGrace}). */
  private final long grace;

  DebeziumBulk(ChangeApply apply, ChangeState state, Path scratch, long now, long grace) {
    this.apply = apply;
    this.state = state;
    this.shape = state.shape;
    this.scratch = scratch;
    this.now = now;
    this.grace = grace;
  }

  /** Whether a table's columns are all of types this path decodes (a key of integers or text). */
  static boolean fits(TableShape shape) {
    if (shape.cellCount() == 0) {
      return false;
    }
    for (int c = 0; c < shape.columns().size(); c++) {
      if (kindOf(shape, c) == null) {
        return false;
      }
    }
    for (int k : shape.key()) {
      Type.TypeID id = shape.columns().get(k).type().typeId();
      if (id != Type.TypeID.INTEGER && id != Type.TypeID.LONG && id != Type.TypeID.STRING) {
        return false;
      }
    }
    return true;
  }

  /** How column {@code c}'s JSON values are read, or null if this path does not read them. */
  private static String kindOf(TableShape shape, int c) {
    SqlType sql = shape.sqlType(c);
    return switch (sql.kind()) {
      case BOOLEAN -> "BOOLEAN";
      case INTEGER -> "INTEGER";
      case BIGINT -> "BIGINT";
      case DOUBLE -> "DOUBLE";
      case TEXT -> "VARCHAR";
      case VARCHAR -> sql.precision() > 0 ? null : "VARCHAR";
      default -> null;
    };
  }

  /**
   * Plans the batch against the state and target as of the given snapshots, with every stored range
   * deletion covering all rows at {@code everythingDeletedAt} (null: none): the files written, or null
   * when this path does not take the batch (nothing written).
   */
  Planned plan(DuckDBConnection duck, List<String> lines, Table target, Optional<Snapshot> targetSnapshot,
      Table stateTable, Optional<Snapshot> stateSnapshot, Long everythingDeletedAt) {
    Path file = scratch.resolve("cdc-" + UUID.randomUUID() + ".jsonl");
    try (Statement st = duck.createStatement()) {
      if (!write(lines, file)) {
        return null;
      }
      long[] checked;
      try {
        st.execute("SET preserve_insertion_order = false"); // the lines' order means nothing: load them on every core
        for (String sql : decode(file)) {
          st.execute(sql);
        }
        st.execute("RESET preserve_insertion_order");
        checked = longs(st, "SELECT count(*), count(*) FILTER (WHERE ok IS NOT TRUE), count(*) FILTER (WHERE op IN ('c', 'u', "
            + "'d', 'r') AND NOT tomb), coalesce(max(lsn) FILTER (WHERE op IN ('c', 'u', 'd', 'r') AND NOT tomb), "
            + Long.MIN_VALUE + ") FROM " + EVENTS);
      } catch (SQLException e) {
        return null; // not JSON, a value out of range: the Java fold says which event and why
      }
      if (checked[0] != lines.size() || checked[1] != 0) {
        return null;
      }
      st.execute(fold());
      if (longs(st, "SELECT count(*) FROM " + FOLD + " WHERE writes <> positions")[0] != 0) {
        return null; // two writes of a key at one position: Cassandra's tie-break, in Java
      }
      st.execute(storedDdl());
      if (stateSnapshot.isPresent()) {
        ScanPlan plan = ScanPlan.plan(apply.planner(), stateTable, stateSnapshot, Expressions.alwaysTrue(), false);
        st.execute("INSERT INTO " + STORED + " SELECT s." + ScanSql.ROW_FILE + ", s." + ScanSql.ROW_POSITION + ", "
            + state.selectList("s") + " FROM (" + ScanSql.relation(plan, stateTable.io(), apply.files(), true)
            + ") AS s SEMI JOIN " + FOLD + " AS f ON " + keyJoin("f", "s", true) + " WHERE s." + ChangeState.RANGE
            + " IS NULL");
      }
      st.execute(merge(everythingDeletedAt));
      long[] merged = longs(st, "SELECT count(*) FILTER (WHERE conflict), count(*) FILTER (WHERE changed), "
          + "count(*) FILTER (WHERE changed AND live), count(*) FILTER (WHERE changed AND sfile IS NOT NULL), "
          + "count(*) FILTER (WHERE changed AND live AND NOT (" + required(target) + "))  FROM " + MERGED);
      if (merged[0] != 0 || merged[4] != 0) {
        return null; // a tie of two values; a NULL in a NOT NULL column (the Java fold's 23502)
      }
      long changes = checked[2];
      TAKEN.incrementAndGet();
      if (merged[1] == 0) {
        return new Planned(null, null, changes, 0, 0, 0, checked[3]);
      }
      DeltaWriter.Delta stateDelta = writeState(duck, stateTable, stateSnapshot, merged[3]);
      ScanPlan targetPlan = ScanPlan.plan(apply.planner(), target, targetSnapshot, Expressions.alwaysTrue(), false);
      st.execute("CREATE OR REPLACE TEMP TABLE " + TARGET_DELETED + " AS SELECT r." + ScanSql.ROW_FILE + ", r."
          + ScanSql.ROW_POSITION + " FROM (" + ScanSql.relation(targetPlan, target.io(), apply.files(), true)
          + ") AS r SEMI JOIN (SELECT * FROM " + MERGED + " WHERE changed) AS m ON " + keyJoin("m", "r", false));
      long deleted = longs(st, "SELECT count(*) FROM " + TARGET_DELETED)[0];
      DeltaWriter.Delta targetDelta = apply.write(duck, target, targetPlan, deleted == 0 ? null
          : new DeltaWriter.Deleted("SELECT * FROM " + TARGET_DELETED, deleted, null), merged[2] == 0 ? null
          : Inserter.Rows.query(targetRows(target), merged[2]));
      return new Planned(stateDelta, targetDelta, changes, merged[1], merged[2], deleted, checked[3]);
    } catch (SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot apply changes to " + shape.table() + ": "
          + e.getMessage(), e);
    } finally {
      try {
        Files.deleteIfExists(file);
      } catch (IOException ignored) {
        // scratch: swept with the directory
      }
    }
  }

  /**
   * The lines, one per line of {@code file}; false if one cannot be a line of it (it holds a line break,
   * is empty, or holds the byte the reader splits on, none of which a one-line JSON value holds).
   */
  private static boolean write(List<String> lines, Path file) {
    try (BufferedWriter w = new BufferedWriter(new OutputStreamWriter(Files.newOutputStream(file),
        StandardCharsets.UTF_8), 1 << 16)) {
      for (String line : lines) {
        if (line.isEmpty()) {
          return false;
        }
        for (int i = 0; i < line.length(); i++) {
          char c = line.charAt(i);
          if (c == '\n' || c == '\r' || c == '\u0001') {
            return false;
          }
        }
        w.write(line);
        w.write('\n');
      }
      return true;
    } catch (IOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot stage change events in " + file.getParent() + ": "
          + e.getMessage(), e);
    }
  }

  /**
   * Loads the lines and decodes them: one pass of DuckDB's JSON reader over the text, on every core, takes
   * each value's JSON text (whose first characters say its JSON type: DuckDB's casts would read a number
   * as text, or a fraction as an integer, where the Java decoder refuses them) and the after image's keys.
   * Then the events table: each line's op, LSN, key and cells read from that text, and whether the line is
   * what this path reads exactly as the Java decoder does: a plain event (no schema envelope); c, u, r
   * (outside an initial snapshot) whose after image names every column once, in the table's order, each
   * value NULL or of its column's JSON type, with no key change; d with its key; m; a tombstone.
   */
  private String[] decode(Path file) {
    StringBuilder leaves = new StringBuilder("{\"op\":\"VARCHAR\",\"schema\":\"JSON\",\"payload\":\"JSON\",\"source\":"
        + "{\"lsn\":\"JSON\",\"snapshot\":\"JSON\"},\"before\":\"JSON\",\"after\":{");
    StringBuilder names = new StringBuilder("[");
    for (int c = 0; c < shape.columns().size(); c++) {
      leaves.append(c > 0 ? "," : "").append(jsonString(shape.columns().get(c).name())).append(":\"JSON\"");
      names.append(c > 0 ? ", " : "").append(Lexer.quoteString(shape.columns().get(c).name()));
    }
    leaves.append("}}");
    names.append(']');
    String load = "CREATE OR REPLACE TEMP TABLE " + LINES + " AS SELECT json_transform(line, " + Lexer.quoteString(
        leaves.toString()) + ") AS t, json_keys(line, '$.after') AS after_keys, trim(line) = 'null' AS tomb FROM "
        + "read_csv(" + Lexer.quoteString(file.toString()) + ", columns = {'line': 'VARCHAR'}, header = false, "
        + "auto_detect = false, delim = chr(1), quote = '', escape = '', new_line = '\\n')";

    int[] key = shape.key();
    StringBuilder beforeLeaves = new StringBuilder("{");
    StringBuilder select = new StringBuilder("SELECT op, lsn, tomb");
    StringBuilder beforeOk = new StringBuilder("before_object");
    StringBuilder sameKey = new StringBuilder("TRUE");
    for (int k = 0; k < key.length; k++) {
      String name = Lexer.quoteIdentifier(shape.columns().get(key[k]).name());
      beforeLeaves.append(k > 0 ? "," : "").append(jsonString(shape.columns().get(key[k]).name())).append(":\"JSON\"");
      select.append(", CASE WHEN op = 'd' THEN ").append(value(key[k], "bj." + name)).append(" ELSE ")
          .append(value(key[k], "aj." + name)).append(" END AS k").append(k);
      beforeOk.append(" AND ").append(ofType(key[k], "bj." + name, false));
      sameKey.append(" AND ").append(value(key[k], "aj." + name)).append(" = ").append(value(key[k], "bj." + name));
    }
    beforeLeaves.append('}');
    StringBuilder afterOk = new StringBuilder("after_keys = " + names);
    for (int c = 0; c < shape.columns().size(); c++) {
      String json = "aj." + Lexer.quoteIdentifier(shape.columns().get(c).name());
      afterOk.append(" AND ").append(ofType(c, json, shape.keyPosition(c) < 0));
      if (kindOf(shape, c).equals("VARCHAR")) {
        String v = value(c, json);
        afterOk.append(" AND (").append(json).append(" IS NULL OR strpos(").append(v).append(", chr(0)) = 0 AND ")
            .append(v).append(" NOT IN (").append(Lexer.quoteString(dev.floe.cdc.ChangeFormat.UNAVAILABLE))
            .append(", ").append(Lexer.quoteString(dev.floe.cdc.ChangeFormat.UNAVAILABLE_BYTES)).append("))");
      }
    }
    int[] cells = shape.cells();
    for (int i = 0; i < cells.length; i++) {
      select.append(", ").append(value(cells[i], "aj." + Lexer.quoteIdentifier(shape.columns().get(cells[i]).name())))
          .append(" AS c").append(i);
    }
    select.append(", tomb OR (NOT enveloped AND (op = 'm' OR op IN ('c', 'u', 'd', 'r') AND lsn IS NOT NULL AND CASE op "
        + "WHEN 'd' THEN ").append(beforeOk).append(" ELSE ").append(afterOk).append(" AND (op <> 'r' OR snap IS NULL OR "
        + "CAST(snap AS VARCHAR) IN ('\"false\"', '\"incremental\"', 'false')) AND (op <> 'u' OR bef IS NULL OR NOT "
        + "before_object OR ").append(beforeOk).append(" AND ").append(sameKey).append(") END)) AS ok");
    String events = "SELECT t.op AS op, CASE WHEN regexp_full_match(CAST(t.source.lsn AS VARCHAR), '-?[0-9]+') THEN "
        + "TRY_CAST(CAST(t.source.lsn AS VARCHAR) AS BIGINT) END AS lsn, t.source.snapshot AS snap, t.before AS bef, "
        + "starts_with(CAST(t.before AS VARCHAR), '{') AS before_object, t.after AS aj, json_transform(t.before, "
        + Lexer.quoteString(beforeLeaves.toString()) + ") AS bj, after_keys, tomb, (t.schema IS NOT NULL OR t.payload IS "
        + "NOT NULL) AS enveloped FROM " + LINES;
    return new String[] {load, "CREATE OR REPLACE TEMP TABLE " + EVENTS + " AS " + select + " FROM (" + events + ")"};
  }

  /**
   * Column {@code c}'s value from its JSON text {@code json}, when that is of the column's JSON type (NULL
   * otherwise, and for an integer out of the column's range): a string without escapes is its text
   * between the quotes, others are unescaped by DuckDB's JSON reader.
   */
  private String value(int c, String json) {
    String text = "CAST(" + json + " AS VARCHAR)";
    return switch (kindOf(shape, c)) {
      case "VARCHAR" -> "CASE WHEN NOT starts_with(" + text + ", '\"') THEN NULL WHEN strpos(" + text + ", '\\') = 0 "
          + "THEN substring(" + text + ", 2, length(" + text + ") - 2) ELSE " + json + "->>'$' END";
      case "BOOLEAN" -> "CASE " + text + " WHEN 'true' THEN TRUE WHEN 'false' THEN FALSE END";
      case "DOUBLE" -> "CASE WHEN regexp_full_match(" + text + ", '-?[0-9][0-9.eE+-]*') THEN TRY_CAST(" + text
          + " AS DOUBLE) END";
      default -> "CASE WHEN regexp_full_match(" + text + ", '-?[0-9]+') THEN TRY_CAST(" + text + " AS "
          + kindOf(shape, c) + ") END";
    };
  }

  /**
   * Whether column {@code c}'s JSON text {@code json} is what the Java decoder reads the same way: NULL
   * (where {@code nullable}) or a value of the column's JSON type that {@link #value} reads.
   */
  private String ofType(int c, String json, boolean nullable) {
    return "(" + (nullable ? json + " IS NULL OR " : "") + value(c, json) + " IS NOT NULL)";
  }

  /** The batch folded per key: the newest deletion, the newest write and its image. */
  private String fold() {
    StringBuilder keys = new StringBuilder();
    for (int k = 0; k < shape.keySize(); k++) {
      keys.append(k > 0 ? ", " : "").append('k').append(k);
    }
    StringBuilder image = new StringBuilder("{");
    for (int i = 0; i < shape.cellCount(); i++) {
      image.append(i > 0 ? ", " : "").append("'c").append(i).append("': c").append(i);
    }
    image.append('}');
    return "CREATE OR REPLACE TEMP TABLE " + FOLD + " AS SELECT " + keys + ", max(lsn) FILTER (WHERE op = 'd') AS del, "
        + "max(lsn) FILTER (WHERE op <> 'd') AS wp, arg_max(" + image + ", lsn) FILTER (WHERE op <> 'd') AS img, "
        + "count(*) FILTER (WHERE op <> 'd') AS writes, count(DISTINCT lsn) FILTER (WHERE op <> 'd') AS positions "
        + "FROM " + EVENTS + " WHERE NOT tomb AND op IN ('c', 'u', 'd', 'r') GROUP BY " + keys;
  }

  /** The stored state of the batch's keys: the state table's columns with the row's file and position. */
  private String storedDdl() {
    StringBuilder ddl = new StringBuilder("CREATE OR REPLACE TEMP TABLE " + STORED + " (sfile VARCHAR, spos BIGINT");
    for (Types.NestedField f : state.schema().columns()) {
      ddl.append(", ").append(Lexer.quoteIdentifier(f.name())).append(' ').append(TypeMapping.duckdbType(f.type()));
    }
    return ddl.append(')').toString();
  }

  /**
   * Each key's state after the batch, as {@link dev.floe.cdc.Fold#reconcile} has it: the newest deletion
   * ({@code d}), the newer marker and the greater write of each cell (Cassandra's order: timestamp, then
   * kind), each only if newer than {@code d}; whether it differs from the stored state (or the stored
   * deletion outlived the grace period), whether it is live, since when it is dead, when it next expires.
   */
  private String merge(Long everything) {
    StringBuilder cols = new StringBuilder();
    StringBuilder changed = new StringBuilder("s.sfile IS NULL OR d IS DISTINCT FROM s." + ChangeState.DELETED_AT
        + " OR bm OR s." + ChangeState.DEAD_SINCE + " < " + (now - grace));
    StringBuilder conflict = new StringBuilder("FALSE");
    StringBuilder wins = new StringBuilder();
    StringBuilder live = new StringBuilder("(n_marker_ts IS NOT NULL AND (n_marker_expires = 0 OR " + now
        + " < n_marker_expires))");
    StringBuilder expires = new StringBuilder("least(CASE WHEN n_marker_ts IS NOT NULL AND n_marker_expires <> 0 AND "
        + now + " < n_marker_expires THEN n_marker_expires END");
    String newer = "(d IS NULL OR wp > d)";
    for (int k = 0; k < shape.keySize(); k++) {
      cols.append("s.k").append(k).append(", ");
    }
    int[] cells = shape.cells();
    for (int i = 0; i < cells.length; i++) {
      int id = state.fieldId(cells[i]);
      String v = "s." + ChangeState.value(id);
      String t = "s." + ChangeState.ts(id);
      String kind = "s." + ChangeState.kind(id);
      String x = "s." + ChangeState.ldt(id);
      String nv = "s.img.c" + i;
      String bk = "(CASE WHEN " + nv + " IS NULL THEN 2 ELSE 0 END)";
      wins.append(", wp IS NOT NULL AND ").append(newer).append(" AND (").append(t).append(" IS NULL OR wp > ").append(t)
          .append(" OR wp = ").append(t).append(" AND ").append(bk).append(" > ").append(kind).append(") AS bw").append(i);
      changed.append(" OR bw").append(i);
      conflict.append(" OR (wp = ").append(t).append(" AND ").append(kind).append(" = 0 AND ").append(x).append(" = 0 AND ")
          .append(nv).append(" IS NOT NULL AND ").append(nv).append(" IS DISTINCT FROM ").append(v).append(')');
      String keep = "(" + t + " > d OR d IS NULL AND " + t + " IS NOT NULL)";
      cols.append("CASE WHEN bw").append(i).append(" THEN ").append(nv).append(" WHEN ").append(keep).append(" THEN ")
          .append(v).append(" END AS n_v").append(i).append(", ");
      cols.append("CASE WHEN bw").append(i).append(" THEN wp WHEN ").append(keep).append(" THEN ").append(t)
          .append(" END AS n_t").append(i).append(", ");
      cols.append("CASE WHEN bw").append(i).append(" THEN ").append(bk).append(" WHEN ").append(keep).append(" THEN ")
          .append(kind).append(" END AS n_k").append(i).append(", ");
      cols.append("CASE WHEN bw").append(i).append(" THEN 0 WHEN ").append(keep).append(" THEN ").append(x)
          .append(" END AS n_x").append(i).append(", ");
      live.append(" OR (n_t").append(i).append(" IS NOT NULL AND (n_k").append(i).append(" = 0 OR n_k").append(i)
          .append(" = 1 AND ").append(now).append(" < n_x").append(i).append("))");
      expires.append(", CASE WHEN n_k").append(i).append(" = 1 AND ").append(now).append(" < n_x").append(i)
          .append(" THEN n_x").append(i).append(" END");
    }
    expires.append(')');
    String keepMarker = "(s." + ChangeState.MARKER_TS + " > d OR d IS NULL AND s." + ChangeState.MARKER_TS + " IS NOT NULL)";
    cols.append("CASE WHEN bm THEN wp WHEN ").append(keepMarker).append(" THEN s.").append(ChangeState.MARKER_TS)
        .append(" END AS n_marker_ts, CASE WHEN bm THEN 0 WHEN ").append(keepMarker).append(" THEN s.")
        .append(ChangeState.MARKER_EXPIRES).append(" END AS n_marker_expires, d AS n_deleted_at, s.sfile, s.spos, s.")
        .append(ChangeState.DEAD_SINCE).append(" AS s_dead_since, ").append(changed).append(" AS changed, ")
        .append(conflict).append(" AS conflict");
    String joined = "SELECT f.*, s.*, greatest(s." + ChangeState.DELETED_AT + ", f.del" + (everything == null ? ""
        : ", CAST(" + everything + " AS BIGINT)") + ") AS d FROM " + FOLD + " AS f LEFT JOIN " + STORED + " AS s ON "
        + keyJoin("f", "s", true);
    String withWins = "SELECT *, wp IS NOT NULL AND " + newer + " AND (s." + ChangeState.MARKER_TS + " IS NULL OR wp > s."
        + ChangeState.MARKER_TS + ") AS bm" + wins + " FROM (" + joined + ") AS s";
    String next = "SELECT " + cols + " FROM (" + withWins + ") AS s";
    String liveOf = "SELECT *, " + live + " AS live, " + expires + " AS n_expires_next FROM (" + next + ")";
    return "CREATE OR REPLACE TEMP TABLE " + MERGED + " AS SELECT *, CASE WHEN live THEN NULL ELSE coalesce(s_dead_since, "
        + now + ") END AS n_dead_since FROM (" + liveOf + ")";
  }

  /** The new state rows of the changed keys (a dead row past the grace period is forgotten) and the stored rows they replace. */
  private DeltaWriter.Delta writeState(DuckDBConnection duck, Table stateTable, Optional<Snapshot> snapshot,
      long replaced) throws SQLException {
    List<String> select = new ArrayList<>();
    for (Types.NestedField f : stateTable.schema().columns()) {
      select.add("CAST(" + stateValue(f.name()) + " AS " + TypeMapping.duckdbType(f.type()) + ") AS "
          + Lexer.quoteIdentifier(f.name()));
    }
    String rows = "SELECT " + String.join(", ", select) + " FROM " + MERGED + " WHERE changed AND (live OR "
        + "n_dead_since >= " + (now - grace) + ")";
    long count;
    try (Statement st = duck.createStatement()) {
      count = longs(st, "SELECT count(*) FROM (" + rows + ")")[0];
    }
    ScanPlan plan = ScanPlan.plan(apply.planner(), stateTable, snapshot, Expressions.alwaysTrue(), false);
    return apply.write(duck, stateTable, plan, replaced == 0 ? null : new DeltaWriter.Deleted("SELECT sfile AS "
        + ScanSql.ROW_FILE + ", spos AS " + ScanSql.ROW_POSITION + " FROM " + MERGED + " WHERE changed AND sfile IS "
        + "NOT NULL", replaced, null), count == 0 ? null : Inserter.Rows.query(rows, count));
  }

  /** A state table column's new value, by its name. */
  private String stateValue(String name) {
    int[] cells = shape.cells();
    for (int i = 0; i < cells.length; i++) {
      int id = state.fieldId(cells[i]);
      if (name.equals(ChangeState.value(id))) {
        return "n_v" + i;
      } else if (name.equals(ChangeState.ts(id))) {
        return "n_t" + i;
      } else if (name.equals(ChangeState.kind(id))) {
        return "n_k" + i;
      } else if (name.equals(ChangeState.ldt(id))) {
        return "n_x" + i;
      }
    }
    int[] key = shape.key();
    for (int k = 0; k < key.length; k++) {
      if (name.equals(ChangeState.value(state.fieldId(key[k])))) {
        return "k" + k;
      }
    }
    return switch (name) {
      case ChangeState.DELETED_AT -> "n_deleted_at";
      case ChangeState.MARKER_TS -> "n_marker_ts";
      case ChangeState.MARKER_EXPIRES -> "n_marker_expires";
      case ChangeState.DEAD_SINCE -> "n_dead_since";
      case ChangeState.EXPIRES_NEXT -> "n_expires_next";
      default -> "NULL"; // the range column, and a column of a target column dropped since
    };
  }

  /** The live rows of the changed keys, in the target's columns. */
  private String targetRows(Table target) {
    List<String> select = new ArrayList<>();
    for (Types.NestedField f : target.schema().columns()) {
      select.add("CAST(" + targetValue(f.name()) + " AS " + TypeMapping.duckdbType(f.type()) + ") AS "
          + Lexer.quoteIdentifier(f.name()));
    }
    return "SELECT " + String.join(", ", select) + " FROM " + MERGED + " WHERE changed AND live";
  }

  /** A target column's value in a live row: the key, a live cell's value, or NULL. */
  private String targetValue(String name) {
    int c = shape.column(name);
    if (c < 0) {
      return "NULL";
    }
    int k = shape.keyPosition(c);
    if (k >= 0) {
      return "k" + k;
    }
    int i = shape.cellOf(c);
    return "CASE WHEN n_k" + i + " = 0 OR n_k" + i + " = 1 AND " + now + " < n_x" + i + " THEN n_v" + i + " END";
  }

  /** Whether a live row has a value in each NOT NULL column of the target. */
  private String required(Table target) {
    StringBuilder b = new StringBuilder("TRUE");
    for (Types.NestedField f : target.schema().columns()) {
      if (f.isRequired()) {
        b.append(" AND ").append(targetValue(f.name())).append(" IS NOT NULL");
      }
    }
    return b.toString();
  }

  /** Equality of the fold's key ({@code k0}...) and a state ({@code v_<id>}) or target (by name) row's. */
  private String keyJoin(String fold, String other, boolean stateColumns) {
    StringBuilder b = new StringBuilder();
    int[] key = shape.key();
    for (int k = 0; k < key.length; k++) {
      String col = stateColumns ? ChangeState.value(state.fieldId(key[k]))
          : Lexer.quoteIdentifier(shape.columns().get(key[k]).name());
      b.append(k > 0 ? " AND " : "").append(fold).append(".k").append(k).append(" = ").append(other).append('.')
          .append(col);
    }
    return b.toString();
  }

  private static long[] longs(Statement st, String sql) throws SQLException {
    try (ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      long[] out = new long[rs.getMetaData().getColumnCount()];
      for (int i = 0; i < out.length; i++) {
        out[i] = rs.getLong(i + 1);
      }
      return out;
    }
  }

  private static String jsonString(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        b.append('\\');
      }
      b.append(c);
    }
    return b.append('"').toString();
  }
}
