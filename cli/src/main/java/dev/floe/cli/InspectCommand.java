package dev.floe.cli;

import dev.floe.Database;
import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.SqlState;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code floe inspect TABLE}: one version of a table as an operator reads it — its snapshot and summary,
 * what it changed relative to its parent, its live data and delete files, and the table's health
 * ({@code "t$health"}). Everything comes from the table's metadata tables through SQL; the warehouse is
 * opened read-only, so it runs beside a server.
 */
@Command(name = "inspect", mixinStandardHelpOptions = true, versionProvider = Version.class,
    description = {"Show a version of a table: its snapshot, changes, files and health.",
        "Opens the warehouse read-only, so it runs beside a server. See docs/maintenance.md."})
final class InspectCommand implements Callable<Integer> {
  @ParentCommand
  Main main;

  @Mixin
  WarehouseOption warehouse;

  @Mixin
  CatalogOption catalog;

  @Parameters(index = "0", paramLabel = "TABLE", description = "The table (schema.table or table).")
  String table;

  @Option(names = "--version", paramLabel = "N", description = "The version (as AS OF VERSION N). Default: the current one.")
  Long version;

  @Option(names = "--snapshot", paramLabel = "ID", description = "The snapshot id. Default: the current one.")
  Long snapshot;

  @Option(names = "--diff", arity = "2", paramLabel = "VERSION",
      description = "Show the files added and removed between two versions instead.")
  List<Long> diff;

  @Option(names = "--json", description = "Print one JSON object instead of text.")
  boolean json;

  @Override
  public Integer call() {
    return warehouse.run(main.environment(), true, catalog, (db, env) -> {
      if (version != null && snapshot != null) {
        throw new FloeException(SqlState.SYNTAX_ERROR, "give --version or --snapshot, not both");
      }
      db.table(table); // 42P01 naming the table itself when there is none
      if (diff != null) {
        return diff(db, env.out(), snapshotOfVersion(db, diff.get(0)), snapshotOfVersion(db, diff.get(1)));
      }
      long id = snapshot != null ? checkedSnapshot(db, snapshot) : version != null ? snapshotOfVersion(db, version)
          : current(db);
      return inspect(db, env.out(), id);
    });
  }

  // ------------------------------------------------------------------ names and versions

  /** The quoted name of one of the table's metadata tables ({@code "s"."t$kind"}). */
  private String meta(String kind) {
    int dot = table.indexOf('.');
    String schema = dot < 0 ? null : table.substring(0, dot);
    String name = dot < 0 ? table : table.substring(dot + 1);
    return (schema == null ? "" : quote(schema) + ".") + quote(name + "$" + kind);
  }

  private static String quote(String identifier) {
    return "\"" + identifier.replace("\"", "\"\"") + "\"";
  }

  private List<Row> rows(Database db, String sql) {
    try (Result r = db.sql(sql)) {
      return r.toList();
    }
  }

  private long current(Database db) {
    List<Row> main = rows(db, "SELECT snapshot_id FROM " + meta("refs") + " WHERE name = 'main'");
    if (main.isEmpty()) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "table \"" + table + "\" has no version yet");
    }
    return main.get(0).getLong(0);
  }

  private long snapshotOfVersion(Database db, long n) {
    List<Row> found = rows(db, "SELECT snapshot_id FROM " + meta("snapshots") + " WHERE sequence_number = " + n);
    if (found.isEmpty()) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "table \"" + table + "\" has no version " + n, null,
          "\"" + table + "$snapshots\" lists its versions; expired ones are gone.", 0, null);
    }
    return found.get(0).getLong(0);
  }

  private long checkedSnapshot(Database db, long id) {
    if (rows(db, "SELECT 1 FROM " + meta("snapshots") + " WHERE snapshot_id = " + id).isEmpty()) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "table \"" + table + "\" has no snapshot " + id);
    }
    return id;
  }

  // ------------------------------------------------------------------ one version

  private int inspect(Database db, PrintStream out, long id) {
    Row s = rows(db, "SELECT snapshot_id, sequence_number, CAST(committed_at AS VARCHAR), operation, parent_id, "
        + "CAST(to_json(summary) AS VARCHAR), CAST(summary AS VARCHAR) FROM " + meta("snapshots")
        + " WHERE snapshot_id = " + id).get(0);
    Long parent = s.isNull(4) ? null : s.getLong(4);
    Row health = rows(db, "SELECT *, CAST(to_json(h) AS VARCHAR) FROM " + meta("health") + " FOR VERSION AS OF " + id
        + " AS h").get(0);
    boolean partitioned;
    try (Result r = db.sql("SELECT * FROM " + meta("files") + " LIMIT 0")) {
      partitioned = r.columns().stream().anyMatch(c -> c.name().equals("partition"));
    }
    List<Row> files = rows(db, "SELECT content, file_path, record_count, file_size_in_bytes, "
        + (partitioned ? "CAST(to_json(partition) AS VARCHAR)" : "NULL") + ", "
        + "CAST(to_json(readable_metrics) AS VARCHAR) FROM " + meta("files") + " FOR VERSION AS OF " + id
        + " ORDER BY content, file_path");
    Set<String> added = new LinkedHashSet<>();
    Set<String> removed = new LinkedHashSet<>();
    if (parent != null && !rows(db, "SELECT 1 FROM " + meta("snapshots") + " WHERE snapshot_id = " + parent).isEmpty()) {
      changes(db, parent, id, added, removed);
    }
    if (json) {
      StringBuilder b = new StringBuilder("{");
      b.append("\"table\":").append(string(table)).append(",\"version\":").append(s.getLong(1))
          .append(",\"snapshot_id\":").append(s.getLong(0)).append(",\"parent_id\":").append(parent)
          .append(",\"committed_at\":").append(string(s.getString(2))).append(",\"operation\":")
          .append(string(s.getString(3))).append(",\"summary\":").append(s.getString(5))
          .append(",\"health\":").append(health.getString(health.columns().size() - 1))
          .append(",\"files\":[");
      for (int k = 0; k < files.size(); k++) {
        Row f = files.get(k);
        b.append(k > 0 ? "," : "").append("{\"content\":").append(string(content((int) f.getLong(0))))
            .append(",\"path\":").append(string(f.getString(1))).append(",\"rows\":").append(f.getLong(2))
            .append(",\"bytes\":").append(f.getLong(3)).append(",\"partition\":")
            .append(f.isNull(4) ? "null" : f.getString(4)).append(",\"metrics\":")
            .append(f.isNull(5) ? "null" : f.getString(5)).append('}');
      }
      b.append("],\"added_since_parent\":").append(array(added)).append(",\"removed_since_parent\":")
          .append(array(removed)).append('}');
      out.println(b);
      return Main.EXIT_OK;
    }
    out.println("table " + table + ", version " + s.getLong(1) + " (snapshot " + s.getLong(0) + ", " + s.getString(3)
        + ", committed " + s.getString(2) + (parent == null ? "" : ", parent " + parent) + ")");
    out.println("summary: " + s.getString(6));
    out.println("health: " + health(health));
    if (parent != null) {
      out.println("since its parent: " + added.size() + " file(s) added, " + removed.size() + " removed");
      added.forEach(f -> out.println("  + " + f));
      removed.forEach(f -> out.println("  - " + f));
    }
    out.println("files (" + files.size() + "):");
    for (Row f : files) {
      out.println("  " + content((int) f.getLong(0)) + "  " + f.getString(1) + "  " + f.getLong(2) + " rows  "
          + bytes(f.getLong(3)) + (f.isNull(4) || f.getString(4).equals("{}") ? "" : "  partition " + f.getString(4))
          + (f.isNull(5) || f.getLong(0) != 0 ? "" : "  " + f.getString(5))); // a delete file's metrics are null
    }
    return Main.EXIT_OK;
  }

  /** The health row in one line. */
  private static String health(Row h) {
    List<String> parts = new ArrayList<>();
    parts.add("data files " + h.getLong(0) + " (" + bytes(h.getLong(1)) + ", " + h.getLong(2) + " rows, "
        + h.getLong(3) + " below 3/4 of the target " + bytes(h.getLong(4)) + ")");
    parts.add("sizes <1MB " + h.getLong(5) + ", 1-16MB " + h.getLong(6) + ", 16-128MB " + h.getLong(7) + ", >128MB "
        + h.getLong(8));
    parts.add("delete files " + h.getLong(9) + " (" + bytes(h.getLong(10)) + ", " + h.getLong(11) + " rows, ratio "
        + String.format(Locale.ROOT, "%.3f", h.getDouble(12)) + ")");
    parts.add("manifests " + h.getLong(13));
    parts.add("snapshots " + h.getLong(14) + (h.isNull(15) ? "" : " (oldest " + h.getString(15) + ")"));
    parts.add("metadata file " + (h.isNull(16) ? "?" : bytes(h.getLong(16))));
    return String.join("; ", parts);
  }

  // ------------------------------------------------------------------ two versions

  private void changes(Database db, long from, long to, Set<String> added, Set<String> removed) {
    String files = "SELECT file_path FROM " + meta("files") + " FOR VERSION AS OF ";
    rows(db, files + to + " EXCEPT " + files + from + " ORDER BY 1").forEach(r -> added.add(r.getString(0)));
    rows(db, files + from + " EXCEPT " + files + to + " ORDER BY 1").forEach(r -> removed.add(r.getString(0)));
  }

  private int diff(Database db, PrintStream out, long from, long to) {
    Set<String> added = new LinkedHashSet<>();
    Set<String> removed = new LinkedHashSet<>();
    changes(db, from, to, added, removed);
    if (json) {
      out.println("{\"table\":" + string(table) + ",\"from_version\":" + diff.get(0) + ",\"to_version\":" + diff.get(1)
          + ",\"added\":" + array(added) + ",\"removed\":" + array(removed) + "}");
      return Main.EXIT_OK;
    }
    out.println("table " + table + ", version " + diff.get(0) + " -> " + diff.get(1) + ": " + added.size()
        + " file(s) added, " + removed.size() + " removed");
    added.forEach(f -> out.println("  + " + f));
    removed.forEach(f -> out.println("  - " + f));
    return Main.EXIT_OK;
  }

  // ------------------------------------------------------------------ formatting

  private static String content(int c) {
    return switch (c) {
      case 0 -> "data";
      case 1 -> "position-deletes";
      case 2 -> "equality-deletes";
      default -> "content " + c;
    };
  }

  static String bytes(long n) {
    if (n < 1024) {
      return n + " B";
    }
    String[] units = {"kB", "MB", "GB", "TB"};
    double v = n;
    int u = -1;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
  }

  private static String string(String s) {
    StringBuilder b = new StringBuilder();
    dev.floe.types.JsonText.appendString(b, s);
    return b.toString();
  }

  private static String array(Set<String> values) {
    List<String> quoted = new ArrayList<>();
    values.forEach(v -> quoted.add(string(v)));
    return "[" + String.join(",", quoted) + "]";
  }
}
