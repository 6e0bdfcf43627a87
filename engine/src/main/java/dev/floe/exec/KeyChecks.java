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
 * Uniqueness of a row-level statement's new rows, for the primary key and each UNIQUE constraint: no
 * key twice among them, none equal to a row of the table the statement keeps; and the filter of its new
 * keys, with which the commit detects concurrent inserts of the same keys. A UNIQUE constraint's key
 * with a NULL in it is no key (NULLs are distinct, as in PostgreSQL). The new keys are read once per
 * new-rows table and key.
 */
final class KeyChecks {
  private static final String FILE = dev.floe.read.ScanSql.ROW_FILE;
  private static final String POS = dev.floe.read.ScanSql.ROW_POSITION;
  /** At most this many new keys are read: more, and key lookups and the commit's check use no key filter. */
  private static final int FEW_KEYS = 1000;

  private final SessionContext session;
  private final TempTables temps;
  /** Per new-rows table and key: each key column's distinct values, or empty when there are more than FEW_KEYS. */
  private final Map<String, Optional<List<List<Object>>>> keyValues = new HashMap<>();

  KeyChecks(SessionContext session, TempTables temps) {
    this.session = session;
    this.temps = temps;
  }

  /** A unique key: the primary key ({@code nullable} false) or a UNIQUE constraint's columns. */
  private record Key(String name, List<String> columns, boolean nullable) {
    String list(String prefix) {
      StringBuilder b = new StringBuilder();
      for (int k = 0; k < columns.size(); k++) {
        b.append(k > 0 ? ", " : "").append(prefix).append(Lexer.quoteIdentifier(columns.get(k)));
      }
      return b.toString();
    }

    String join(String left, String right) {
      StringBuilder b = new StringBuilder();
      for (int k = 0; k < columns.size(); k++) {
        String c = Lexer.quoteIdentifier(columns.get(k));
        b.append(k > 0 ? " AND " : "").append(left).append('.').append(c).append(" = ").append(right).append('.')
            .append(c);
      }
      return b.toString();
    }

    /** {@code prefix}'s key columns all non-NULL, for a UNIQUE constraint; empty for the primary key. */
    String present(String prefix) {
      if (!nullable) {
        return "";
      }
      StringBuilder b = new StringBuilder();
      for (int k = 0; k < columns.size(); k++) {
        b.append(k > 0 ? " AND " : "").append(prefix).append(Lexer.quoteIdentifier(columns.get(k)))
            .append(" IS NOT NULL");
      }
      return b.toString();
    }
  }

  /** The target's unique keys: its primary key, then its UNIQUE constraints. */
  private static List<Key> keys(ChangeTarget t) {
    List<Key> keys = new ArrayList<>();
    if (!t.keys().isEmpty()) {
      keys.add(new Key(t.id().name() + "_pkey", t.keys(), false));
    }
    for (Indexes.Index unique : Constraints.uniques(t.live())) {
      List<String> columns = new ArrayList<>();
      for (int id : unique.fieldIds()) {
        Types.NestedField f = t.schema().findField(id);
        if (f == null) {
          columns = null; // a column it was on was dropped
          break;
        }
        columns.add(f.name());
      }
      if (columns != null) {
        keys.add(new Key(unique.name(), columns, true));
      }
    }
    return keys;
  }

  /** Whether a change of the columns {@code changed} can make a key repeat. */
  static boolean touches(ChangeTarget t, java.util.Collection<String> changed) {
    return keys(t).stream().anyMatch(k -> k.columns().stream().anyMatch(changed::contains));
  }

  /**
   * Checks the new rows of {@code newRows} (a temporary table or parenthesised query): no key twice among
   * them, none equal to a row of the table that the statement does not delete ({@code deleted}: a query
   * of the deleted rows' file and position, or null). Raises 23505 with PostgreSQL's DETAIL.
   */
  void check(ChangeTarget t, String newRows, String deleted, Relations relations) {
    for (Key key : keys(t)) {
      check(t, key, newRows, deleted, relations);
    }
  }

  private void check(ChangeTarget t, Key key, String newRows, String deleted, Relations relations) {
    String keys = key.list("");
    String present = key.present("");
    Long size = temps.size(newRows); // known for a materialised table
    if (size == null || size > 1) {
      Object[] twice = session.sql().queryRow("SELECT " + keys + " FROM " + newRows
          + (present.isEmpty() ? "" : " WHERE " + present) + " GROUP BY " + keys + " HAVING count(*) > 1 LIMIT 1",
          o -> 0);
      if (twice != null) {
        throw duplicateKey(t, key, twice);
      }
    }
    String a = "__floe_existing";
    Composer c = new Composer().add("SELECT " + key.list("n.") + " FROM " + newRows + " AS n JOIN "
        + Relations.TARGET + " AS " + a + " ON " + key.join("n", a));
    List<String> where = new ArrayList<>();
    keyPredicate(t, key, newRows, a).ifPresent(where::add);
    if (deleted != null) {
      where.add("NOT EXISTS (SELECT 1 FROM (" + deleted + ") AS d WHERE d." + FILE + " = " + a + "." + FILE
          + " AND d." + POS + " = " + a + "." + POS + ")");
    }
    if (!where.isEmpty()) {
      c.add(" WHERE " + String.join(" AND ", where));
    }
    c.add(" LIMIT 1");
    QueryBinder.Bound bound = session.bind(c.text(), c::position, relations.target(t.id()));
    Object[] existing = session.sql().queryRow(bound.sql(), bound::originalPosition);
    if (existing != null) {
      throw duplicateKey(t, key, existing);
    }
  }

  /**
   * The Iceberg filter of the new keys, for detecting concurrent inserts of the same keys (a row that
   * matches any key's filter conflicts); empty without keys.
   */
  Optional<Expression> filter(ChangeTarget t, String newRows) {
    List<Key> keys = keys(t);
    if (keys.isEmpty()) {
      return Optional.empty();
    }
    Expression any = Expressions.alwaysFalse();
    for (Key key : keys) {
      Expression e = newKeys(t, key, newRows).map(values -> {
        Expression all = Expressions.alwaysTrue();
        for (int k = 0; k < values.size(); k++) {
          if (!dev.floe.read.ScanPlan.prunesBy(t.schema().findField(key.columns().get(k)).type())) {
            continue; // a concurrent file holding the key must not be passed over
          }
          all = Expressions.and(all, values.get(k).isEmpty() ? Expressions.alwaysFalse()
              : Expressions.in(key.columns().get(k), values.get(k).toArray()));
        }
        return all;
      }).orElse(Expressions.alwaysTrue());
      any = Expressions.or(any, e);
    }
    return Optional.of(any);
  }

  /** Remembers the keys of new rows read into the JVM ({@code records} of table {@code newRows}). */
  void remember(ChangeTarget t, String newRows, List<Record> records) {
    if (records.size() > FEW_KEYS) {
      return;
    }
    for (Key key : keys(t)) {
      List<List<Object>> keys = new ArrayList<>();
      for (String column : key.columns()) {
        Set<Object> values = new LinkedHashSet<>();
        records.forEach(r -> {
          Object v = r.getField(column);
          if (v != null) {
            values.add(v);
          }
        });
        keys.add(new ArrayList<>(values));
      }
      keyValues.put(newRows + " " + key.name(), Optional.of(keys));
    }
  }

  /**
   * The distinct values of each key column among the new rows, when there are at most
   * {@value #FEW_KEYS} keys (empty otherwise). {@code k1 IN (...) AND k2 IN (...)} over them holds for
   * every new key: the existing-key lookup prunes files with it, and the commit detects concurrent
   * inserts of the same keys with it.
   */
  private Optional<List<List<Object>>> newKeys(ChangeTarget t, Key key, String newRows) {
    return keyValues.computeIfAbsent(newRows + " " + key.name(), rows -> {
      List<Types.NestedField> fields = key.columns().stream().map(k -> t.schema().findField(k)).toList();
      StringBuilder select = new StringBuilder("SELECT DISTINCT ");
      for (int k = 0; k < fields.size(); k++) {
        select.append(k > 0 ? ", " : "").append(IcebergValues.readable(fields.get(k).type(),
            Lexer.quoteIdentifier(fields.get(k).name())));
      }
      List<Set<Object>> values = new ArrayList<>();
      fields.forEach(f -> values.add(new LinkedHashSet<>()));
      int n = 0;
      String present = key.present("");
      try (var st = session.duck().createStatement();
          var rs = st.executeQuery(select + " FROM " + newRows + (present.isEmpty() ? "" : " WHERE " + present)
              + " LIMIT " + (FEW_KEYS + 1))) {
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
  private Optional<String> keyPredicate(ChangeTarget t, Key key, String newRows, String alias) {
    return newKeys(t, key, newRows).map(values -> {
      List<String> conjuncts = new ArrayList<>();
      for (int k = 0; k < values.size(); k++) {
        Types.NestedField f = t.schema().findField(key.columns().get(k));
        if (values.get(k).isEmpty()) {
          return "false";
        }
        List<String> literals = values.get(k).stream().map(v -> SqlLiterals.of(f.type(), v)).toList();
        conjuncts.add(alias + "." + Lexer.quoteIdentifier(f.name()) + " IN (" + String.join(", ", literals) + ")");
      }
      return String.join(" AND ", conjuncts);
    });
  }

  private static FloeException duplicateKey(ChangeTarget t, Key key, Object[] values) {
    List<String> text = new ArrayList<>();
    for (Object v : values) {
      text.add(String.valueOf(v));
    }
    return new FloeException(SqlState.UNIQUE_VIOLATION, "duplicate key value violates unique constraint \""
        + key.name() + "\"", "Key (" + String.join(", ", key.columns()) + ")=(" + String.join(", ", text)
        + ") already exists.", null, 0, null).violating(t.id().namespace().level(0), t.id().name(), key.name());
  }
}
