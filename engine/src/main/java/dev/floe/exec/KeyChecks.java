package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.sql.Composer;
import dev.floe.sql.Lexer;
import dev.floe.sql.QueryBinder;
import dev.floe.types.IcebergValues;
import dev.floe.types.SqlLiterals;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.types.Types;

/**
 * Primary-key uniqueness of a row-level statement's new rows: no key twice among them, none equal to a
 * row of the table the statement keeps; and the filter of its new keys, with which the commit detects
 * concurrent inserts of the same keys. The new keys are read once per new-rows table.
 */
final class KeyChecks {
  private static final String FILE = dev.floe.read.ScanSql.ROW_FILE;
  private static final String POS = dev.floe.read.ScanSql.ROW_POSITION;
  /** At most this many new keys are read: more, and key lookups and the commit's check use no key filter. */
  private static final int FEW_KEYS = 1000;

  private final SessionContext session;
  private final TempTables temps;
  /** Per new-rows table: each key column's distinct values, or empty when there are more than FEW_KEYS. */
  private final Map<String, Optional<List<List<Object>>>> keyValues = new HashMap<>();

  KeyChecks(SessionContext session, TempTables temps) {
    this.session = session;
    this.temps = temps;
  }

  /**
   * Checks the new rows of {@code newRows} (a temporary table or parenthesised query): no key twice among
   * them, none equal to a row of the table that the statement does not delete ({@code deleted}: a query
   * of the deleted rows' file and position, or null). Raises 23505 with PostgreSQL's DETAIL.
   */
  void check(ChangeTarget t, String newRows, String deleted, Relations relations) {
    if (t.keys().isEmpty()) {
      return;
    }
    String keys = t.keyColumns("");
    Long size = temps.size(newRows); // known for a materialised table
    if (size == null || size > 1) {
      Object[] twice = session.sql().queryRow("SELECT " + keys + " FROM " + newRows + " GROUP BY " + keys
          + " HAVING count(*) > 1 LIMIT 1", o -> 0);
      if (twice != null) {
        throw duplicateKey(t, twice);
      }
    }
    String a = "__floe_existing";
    Composer c = new Composer().add("SELECT " + t.keyColumns("n.") + " FROM " + newRows + " AS n JOIN "
        + Relations.TARGET + " AS " + a + " ON " + t.keyJoin("n", a));
    Optional<String> few = keyPredicate(t, newRows, a);
    few.ifPresent(p -> c.add(" WHERE " + p));
    if (deleted != null) {
      c.add((few.isPresent() ? " AND" : " WHERE") + " NOT EXISTS (SELECT 1 FROM (" + deleted
          + ") AS d WHERE d." + FILE + " = " + a + "." + FILE + " AND d." + POS + " = " + a + "." + POS + ")");
    }
    c.add(" LIMIT 1");
    QueryBinder.Bound bound = session.bind(c.text(), c::position, relations.target(t.id()));
    Object[] existing = session.sql().queryRow(bound.sql(), bound::originalPosition);
    if (existing != null) {
      throw duplicateKey(t, existing);
    }
  }

  /** The Iceberg filter of the new keys, for detecting concurrent inserts of the same keys; empty without keys. */
  Optional<Expression> filter(ChangeTarget t, String newRows) {
    if (t.keys().isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(newKeys(t, newRows).map(values -> {
      Expression e = Expressions.alwaysTrue();
      for (int k = 0; k < values.size(); k++) {
        String name = t.schema().findField(t.keys().get(k)).name();
        e = Expressions.and(e, values.get(k).isEmpty() ? Expressions.alwaysFalse()
            : Expressions.in(name, values.get(k).toArray()));
      }
      return e;
    }).orElse(Expressions.alwaysTrue()));
  }

  /** Remembers the keys of new rows read into the JVM ({@code records} of table {@code newRows}). */
  void remember(ChangeTarget t, String newRows, List<Record> records) {
    if (t.keys().isEmpty() || records.size() > FEW_KEYS) {
      return;
    }
    List<List<Object>> keys = new ArrayList<>();
    for (String key : t.keys()) {
      Set<Object> values = new LinkedHashSet<>();
      records.forEach(r -> {
        Object v = r.getField(t.schema().findField(key).name());
        if (v != null) {
          values.add(v);
        }
      });
      keys.add(new ArrayList<>(values));
    }
    keyValues.put(newRows, Optional.of(keys));
  }

  /**
   * The distinct values of each key column among the new rows, when there are at most
   * {@value #FEW_KEYS} keys (empty otherwise). {@code k1 IN (...) AND k2 IN (...)} over them holds for
   * every new key: the existing-key lookup prunes files with it, and the commit detects concurrent
   * inserts of the same keys with it.
   */
  private Optional<List<List<Object>>> newKeys(ChangeTarget t, String newRows) {
    return keyValues.computeIfAbsent(newRows, rows -> {
      List<Types.NestedField> fields = t.keys().stream().map(k -> t.schema().findField(k)).toList();
      StringBuilder select = new StringBuilder("SELECT DISTINCT ");
      for (int k = 0; k < fields.size(); k++) {
        select.append(k > 0 ? ", " : "").append(IcebergValues.readable(fields.get(k).type(),
            Lexer.quoteIdentifier(fields.get(k).name())));
      }
      List<Set<Object>> values = new ArrayList<>();
      fields.forEach(f -> values.add(new LinkedHashSet<>()));
      int n = 0;
      try (var st = session.duck().createStatement();
          var rs = st.executeQuery(select + " FROM " + rows + " LIMIT " + (FEW_KEYS + 1))) {
        while (rs.next()) {
          if (++n > FEW_KEYS) {
            return Optional.empty();
          }
          for (int k = 0; k < fields.size(); k++) {
            Object v = IcebergValues.internal(fields.get(k).type(), rs.getObject(k + 1));
            if (v != null) {
              values.get(k).add(v);
            }
          }
        }
      } catch (SQLException e) {
        throw DuckErrors.map(e, o -> 0);
      }
      List<List<Object>> out = new ArrayList<>();
      values.forEach(v -> out.add(new ArrayList<>(v)));
      return Optional.of(out);
    });
  }

  /** The new keys as a SQL predicate on {@code alias}, when there are few. */
  private Optional<String> keyPredicate(ChangeTarget t, String newRows, String alias) {
    return newKeys(t, newRows).map(values -> {
      List<String> conjuncts = new ArrayList<>();
      for (int k = 0; k < values.size(); k++) {
        Types.NestedField f = t.schema().findField(t.keys().get(k));
        if (values.get(k).isEmpty()) {
          return "false";
        }
        List<String> literals = values.get(k).stream().map(v -> SqlLiterals.of(f.type(), v)).toList();
        conjuncts.add(alias + "." + Lexer.quoteIdentifier(f.name()) + " IN (" + String.join(", ", literals) + ")");
      }
      return String.join(" AND ", conjuncts);
    });
  }

  private static FloeException duplicateKey(ChangeTarget t, Object[] key) {
    List<String> values = new ArrayList<>();
    for (Object v : key) {
      values.add(String.valueOf(v));
    }
    return new FloeException(SqlState.UNIQUE_VIOLATION, "duplicate key value violates unique constraint \""
        + t.id().name() + "_pkey\"", "Key (" + String.join(", ", t.keys()) + ")=(" + String.join(", ", values)
        + ") already exists.", null, 0, null);
  }
}
