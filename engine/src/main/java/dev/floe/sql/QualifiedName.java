package dev.floe.sql;

import java.util.List;
import java.util.stream.Collectors;

/**
 * A possibly qualified object name as written: {@code t}, {@code s.t} or {@code catalog.s.t}; each part
 * already folded (unquoted parts lower-cased).
 *
 * @param position 1-based offset of the name in the statement, for error reports
 */
public record QualifiedName(List<String> parts, int position) {
  public QualifiedName {
    parts = List.copyOf(parts);
    if (parts.isEmpty()) {
      throw new IllegalArgumentException("empty name");
    }
  }

  public static QualifiedName of(String... parts) {
    return new QualifiedName(List.of(parts), 0);
  }

  public String last() {
    return parts.get(parts.size() - 1);
  }

  @Override
  public String toString() {
    return parts.stream().map(QualifiedName::display).collect(Collectors.joining("."));
  }

  private static String display(String part) {
    return part.matches("[a-z_][a-z0-9_$]*") ? part : Lexer.quoteIdentifier(part);
  }
}
