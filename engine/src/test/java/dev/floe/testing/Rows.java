package dev.floe.testing;

import dev.floe.Database;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.Session;
import java.util.ArrayList;
import java.util.List;

/**
 * A result as lines for assertions: each row's values as {@code String.valueOf} gives them (bytes in
 * PostgreSQL's hex form, {@code \x00ff}), joined by {@code |} (NULL is {@code null}). Shared by the tests of every module (the engine's test jar).
 */
public final class Rows {
  private Rows() {}

  public static List<String> of(Database db, String sql) {
    try (Result r = db.sql(sql)) {
      return of(r);
    }
  }

  public static List<String> of(Session s, String sql) {
    try (Result r = s.sql(sql)) {
      return of(r);
    }
  }

  public static List<String> of(dev.floe.Transaction t, String sql) {
    try (Result r = t.sql(sql)) {
      return of(r);
    }
  }

  /** The rows of an open result (which the caller closes). */
  public static List<String> of(Result r) {
    List<String> out = new ArrayList<>();
    for (Row row : r) {
      List<String> values = new ArrayList<>();
      for (int k = 0; k < r.columns().size(); k++) {
        Object v = row.get(k);
        values.add(v instanceof byte[] b ? "\\x" + java.util.HexFormat.of().formatHex(b) : String.valueOf(v));
      }
      out.add(String.join("|", values));
    }
    return out;
  }
}
