package dev.floe.exec;

import dev.floe.FloeProperties;
import dev.floe.Column;
import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.sql.Ast;
import dev.floe.sql.Lexer;
import dev.floe.write.DeltaWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * The target of a row-level statement: its live table (which the commit goes to), its schema and
 * columns, the name the statement gives it, and its primary-key columns (none: no key).
 */
record ChangeTarget(TableIdentifier id, Table live, Schema schema, List<Column> columns, String alias,
    List<String> keys) {

  /** The column of this name: exactly, else ignoring case. */
  Optional<Column> column(String name) {
    return Inserts.find(columns, name);
  }

  /** The column of this name, or PostgreSQL's 42703 at {@code position}. */
  Column requireColumn(String name, int position) {
    return column(name).orElseThrow(() -> FloeException.undefinedColumn(name, id.name(), position));
  }

  /** A statement's assignments by column, checked: the columns exist, each is assigned once. */
  Map<String, Ast.Assignment> assignments(List<Ast.Assignment> list) {
    Map<String, Ast.Assignment> set = new LinkedHashMap<>();
    for (Ast.Assignment assign : list) {
      Column col = requireColumn(assign.column(), assign.position());
      if (set.put(col.name(), assign) != null) {
        throw FloeException.syntax("multiple assignments to same column \"" + col.name() + "\"", assign.position());
      }
      if (col.name().equals(dev.floe.tail.TailLog.OFFSET_COLUMN) && dev.floe.tail.TailLog.hasTail(live)) {
        throw new FloeException(SqlState.GENERATED_ALWAYS, "column \"" + col.name() + "\" can only be updated to "
            + "DEFAULT", "The tail of table \"" + id.name() + "\" numbers its rows.", null, assign.position(), null);
      }
      if (assign.value().isPresent()
          && "always".equals(live.properties().get(FloeProperties.COLUMN_IDENTITY + col.fieldId()))) {
        throw new FloeException(SqlState.GENERATED_ALWAYS, "column \"" + col.name() + "\" can only be updated to "
            + "DEFAULT", "Column \"" + col.name() + "\" is an identity column defined as GENERATED ALWAYS.", null,
            assign.position(), null);
      }
    }
    return set;
  }

  /**
   * Whether the table has a keyed tail (a tail and a primary key): its changes are versions of keys
   * appended to the log (docs/tail.md, "Keyed tables").
   */
  boolean keyedTail() {
    return dev.floe.tail.TailLog.hasTail(live) && !keys.isEmpty();
  }

  /**
   * For a keyed tail, the change query's columns carrying the key of the target row (alias {@code a},
   * quoted) a change removes, {@code , a.k AS __floe_old0, ...}; otherwise nothing.
   */
  String oldKeys(String a) {
    if (!keyedTail()) {
      return "";
    }
    StringBuilder b = new StringBuilder();
    for (int k = 0; k < keys.size(); k++) {
      b.append(", ").append(a).append('.').append(Lexer.quoteIdentifier(keys.get(k))).append(" AS ")
          .append(oldKey(k));
    }
    return b.toString();
  }

  /** The names of {@link #oldKeys}' columns, each after a comma (nothing without a keyed tail). */
  String oldKeyNames() {
    StringBuilder b = new StringBuilder();
    for (int k = 0; keyedTail() && k < keys.size(); k++) {
      b.append(", ").append(oldKey(k));
    }
    return b.toString();
  }

  /** A SELECT list naming {@link #oldKeys}' columns as the key columns, for the change table {@code from}. */
  String oldKeysAsKeys() {
    StringBuilder b = new StringBuilder();
    for (int k = 0; k < keys.size(); k++) {
      b.append(k > 0 ? ", " : "").append(oldKey(k)).append(" AS ").append(Lexer.quoteIdentifier(keys.get(k)));
    }
    return b.toString();
  }

  private static String oldKey(int k) {
    return "__floe_old" + k;
  }

  /** The SQL of a column's default, of its stored type. */
  String defaultSql(Column c) {
    return Inserts.defaultSql(schema, live.properties(), c);
  }

  /** The key columns, quoted and prefixed ({@code "e."}), comma separated. */
  String keyColumns(String prefix) {
    StringBuilder b = new StringBuilder();
    for (int k = 0; k < keys.size(); k++) {
      b.append(k > 0 ? ", " : "").append(prefix).append(Lexer.quoteIdentifier(keys.get(k)));
    }
    return b.toString();
  }

  /** {@code left.k1 = right.k1 AND ...} over the key columns. */
  String keyJoin(String left, String right) {
    StringBuilder b = new StringBuilder();
    for (int k = 0; k < keys.size(); k++) {
      String key = Lexer.quoteIdentifier(keys.get(k));
      b.append(k > 0 ? " AND " : "").append(left).append('.').append(key).append(" = ").append(right).append('.')
          .append(key);
    }
    return b.toString();
  }

  /** How the table writes a change, per its {@code write.*.mode} property (format v1: copy-on-write). */
  DeltaWriter.Mode mode(String property) {
    if (((HasTableOperations) live).operations().current().formatVersion() < 2) {
      return DeltaWriter.Mode.COPY_ON_WRITE; // format v1 has no delete files
    }
    String mode = live.properties().getOrDefault(property, "merge-on-read");
    return switch (mode.toLowerCase(Locale.ROOT)) {
      case "copy-on-write" -> DeltaWriter.Mode.COPY_ON_WRITE;
      case "merge-on-read" -> DeltaWriter.Mode.MERGE_ON_READ;
      default -> throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "table property " + property
          + " must be merge-on-read or copy-on-write, not \"" + mode + "\"");
    };
  }
}
