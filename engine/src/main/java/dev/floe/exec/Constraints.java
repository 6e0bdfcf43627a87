package dev.floe.exec;

import dev.floe.FloeProperties;
import dev.floe.sql.Lexer;
import dev.floe.sql.Token;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * The constraints of a table beyond its primary key, as its properties keep them: UNIQUE constraints
 * (unique indexes, {@link Indexes.Index}), CHECK constraints ({@link FloeProperties#CHECK_PREFIX}) and
 * FOREIGN KEYs ({@link FloeProperties#FOREIGN_KEY_PREFIX}), and the tables whose foreign keys may reference
 * it ({@link FloeProperties#REFERENCED_BY_PREFIX}). Other engines see them as properties and do not
 * enforce them; Floe enforces them on every statement that writes rows (docs/sql.md, "Constraints").
 */
final class Constraints {
  private Constraints() {}

  /** A CHECK constraint: its rows make {@code expression} true or NULL. */
  record Check(String name, String expression) {}

  /**
   * A FOREIGN KEY: the values of {@code columns} (field ids), when none is NULL, are those of
   * {@code parentColumns} in a row of {@code parent}.
   */
  record ForeignKey(String name, List<Integer> columns, TableIdentifier parent, List<Integer> parentColumns,
      char onDelete, char onUpdate) {
    static Optional<ForeignKey> parse(String name, String value) {
      String[] words = value.strip().split(" ");
      if (words.length != 5 || words[4].length() != 2) {
        return Optional.empty(); // not Floe's
      }
      try {
        return Optional.of(new ForeignKey(name, ids(words[0]), TableIdentifier.of(Namespace.of(decode(words[1])),
            decode(words[2])), ids(words[3]), words[4].charAt(0), words[4].charAt(1)));
      } catch (IllegalArgumentException e) {
        return Optional.empty();
      }
    }

    String value() {
      return join(columns) + " " + encode(parent.namespace().level(0)) + " " + encode(parent.name()) + " "
          + join(parentColumns) + " " + onDelete + onUpdate;
    }
  }

  static List<Check> checks(Table table) {
    List<Check> out = new ArrayList<>();
    sorted(table.properties()).forEach(e -> {
      if (e.getKey().startsWith(FloeProperties.CHECK_PREFIX)) {
        out.add(new Check(e.getKey().substring(FloeProperties.CHECK_PREFIX.length()), e.getValue()));
      }
    });
    return out;
  }

  static List<ForeignKey> foreignKeys(Table table) {
    List<ForeignKey> out = new ArrayList<>();
    sorted(table.properties()).forEach(e -> {
      if (e.getKey().startsWith(FloeProperties.FOREIGN_KEY_PREFIX)) {
        ForeignKey.parse(e.getKey().substring(FloeProperties.FOREIGN_KEY_PREFIX.length()), e.getValue())
            .ifPresent(out::add);
      }
    });
    return out;
  }

  /** The unique indexes that are not the primary key's: Floe enforces them as UNIQUE constraints. */
  static List<Indexes.Index> uniques(Table table) {
    Set<Integer> key = table.schema().identifierFieldIds();
    return Indexes.of(table).stream().filter(i -> i.unique() && !new HashSet<>(i.fieldIds()).equals(key)).toList();
  }

  /** The tables whose foreign keys may reference this one (each to be checked: the mark may outlive the key). */
  static List<TableIdentifier> referrers(Table table) {
    List<TableIdentifier> out = new ArrayList<>();
    sorted(table.properties()).forEach(e -> {
      if (e.getKey().startsWith(FloeProperties.REFERENCED_BY_PREFIX)) {
        referrer(e.getKey()).ifPresent(out::add);
      }
    });
    return out;
  }

  /** The property that marks {@code child} as a table whose foreign keys may reference the table. */
  static String referrerKey(TableIdentifier child) {
    return FloeProperties.REFERENCED_BY_PREFIX + encode(child.namespace().level(0)) + "." + encode(child.name());
  }

  private static Optional<TableIdentifier> referrer(String key) {
    String[] parts = key.substring(FloeProperties.REFERENCED_BY_PREFIX.length()).split("\\.");
    if (parts.length != 2) {
      return Optional.empty();
    }
    try {
      return Optional.of(TableIdentifier.of(Namespace.of(decode(parts[0])), decode(parts[1])));
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /** Whether a row written to the table has constraints beyond NOT NULL and its primary key to meet. */
  static boolean any(Table table) {
    return !checks(table).isEmpty() || !foreignKeys(table).isEmpty() || !uniques(table).isEmpty();
  }

  /** Every constraint name of the table, its primary key's and its indexes' included. */
  static Set<String> names(Table table) {
    Set<String> names = new HashSet<>();
    checks(table).forEach(c -> names.add(c.name()));
    foreignKeys(table).forEach(f -> names.add(f.name()));
    Indexes.of(table).forEach(i -> names.add(i.name()));
    return names;
  }

  /**
   * The column names a CHECK expression mentions, in order, of those of {@code schema}: PostgreSQL names
   * an unnamed table check after the first.
   */
  static List<String> columnsOf(String expression, Schema schema) {
    return columnsOf(expression, schema.columns().stream().map(org.apache.iceberg.types.Types.NestedField::name)
        .toList());
  }

  /** As {@link #columnsOf(String, Schema)}, of the columns {@code columns}. */
  static List<String> columnsOf(String expression, List<String> columns) {
    List<String> out = new ArrayList<>();
    for (Token t : Lexer.tokenize(expression)) {
      if (t.isIdentifier()) {
        for (String c : columns) {
          if ((t.type() == Token.Type.QUOTED_IDENT ? c.equals(t.value()) : c.equalsIgnoreCase(t.value()))
              && !out.contains(c)) {
            out.add(c);
          }
        }
      }
    }
    return out;
  }

  /** The expression with its mentions of column {@code from} renamed to {@code to}. */
  static String renameColumn(String expression, String from, String to) {
    StringBuilder out = new StringBuilder();
    int at = 0;
    for (Token t : Lexer.tokenize(expression)) {
      if (t.isIdentifier() && t.value().equals(from)) {
        out.append(expression, at, t.start()).append(Lexer.quoteIdentifier(to));
        at = t.end();
      }
    }
    return out.append(expression.substring(at)).toString();
  }

  private static List<Map.Entry<String, String>> sorted(Map<String, String> properties) {
    return properties.entrySet().stream().sorted(Map.Entry.comparingByKey()).toList();
  }

  private static List<Integer> ids(String word) {
    List<Integer> ids = new ArrayList<>();
    for (String id : word.split(",")) {
      ids.add(Integer.parseInt(id));
    }
    return ids;
  }

  static String join(List<Integer> ids) {
    return String.join(",", ids.stream().map(String::valueOf).toList());
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace(".", "%2E");
  }

  private static String decode(String s) {
    return URLDecoder.decode(s, StandardCharsets.UTF_8);
  }
}
