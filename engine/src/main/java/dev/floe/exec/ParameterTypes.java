package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlType;
import dev.floe.sql.Ast;
import dev.floe.sql.Lexer;
import dev.floe.sql.Parser;
import dev.floe.sql.QueryBinder;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;

/**
 * The types of a statement's {@code $n} parameters that their context decides, for a front end to
 * describe them (PostgreSQL's ParameterDescription): in a query, what DuckDB infers ({@code id = $1} is the
 * type of {@code id}); in {@code INSERT ... VALUES}, the type of the column a lone parameter goes into. Null
 * where unknown.
 */
final class ParameterTypes {
  private ParameterTypes() {}

  static List<SqlType> infer(SessionContext session, String sql, int count) {
    SqlType[] types = new SqlType[count];
    Ast.Statement statement;
    try {
      statement = Parser.parse(sql);
    } catch (FloeException e) {
      return java.util.Arrays.asList(types);
    }
    statement.accept(new Ast.Visitor<Void>() {
      @Override
      public Void otherwise(Ast.Statement s) {
        return null; // no parameter types known
      }

      @Override
      public Void query(Ast.Query q) {
        fromDuckDb(session, q, types);
        return null;
      }

      @Override
      public Void insert(Ast.Insert insert) {
        if (insert.source().isPresent()) {
          fromTargetColumns(session, insert, types);
        }
        return null;
      }
    });
    return java.util.Arrays.asList(types);
  }

  /** What DuckDB infers for a query's parameters. */
  private static void fromDuckDb(SessionContext session, Ast.Query q, SqlType[] types) {
    try {
      QueryBinder.Bound bound = session.bind(q);
      try (PreparedStatement ps = session.duck().prepareStatement(bound.sql())) {
        java.sql.ParameterMetaData md = ps.getParameterMetaData();
        for (int i = 1; i <= Math.min(md.getParameterCount(), types.length); i++) {
          String name = md.getParameterTypeName(i);
          if (name != null && !name.equalsIgnoreCase("UNKNOWN") && !name.equalsIgnoreCase("NULL")) {
            types[i - 1] = dev.floe.types.TypeMapping.fromDuckdb(name);
          }
        }
      }
    } catch (SQLException | RuntimeException e) {
      // the types stay unknown: the statement reports its own error when it runs
    }
  }

  /** In {@code INSERT ... VALUES}, a lone parameter has the type of the column it goes into. */
  private static void fromTargetColumns(SessionContext session, Ast.Insert insert, SqlType[] types) {
    session.engine().tableInfo(insert.table().parts(), session.currentSchema()).ifPresent(info -> {
      List<String> names = insert.columns().isEmpty()
          ? info.columns().stream().map(dev.floe.Column::name).toList() : insert.columns();
      valuesParameters(insert.source().get().text(), (param, position) -> {
        if (param >= 1 && param <= types.length && position < names.size()) {
          for (dev.floe.Column c : info.columns()) {
            if (c.name().equalsIgnoreCase(names.get(position))) {
              types[param - 1] = c.type();
            }
          }
        }
      });
    });
  }

  /** For {@code VALUES (...), (...)}: each element that is a lone {@code $n}, with its position in its row. */
  private static void valuesParameters(String source, java.util.function.BiConsumer<Integer, Integer> sink) {
    List<dev.floe.sql.Token> t = Lexer.tokenize(source);
    if (t.isEmpty() || !t.get(0).isKeyword("values")) {
      return;
    }
    int depth = 0;
    int position = 0;
    for (int i = 1; i < t.size(); i++) {
      dev.floe.sql.Token k = t.get(i);
      if (k.isOp("(")) {
        depth++;
        if (depth == 1) {
          position = 0;
        }
      } else if (k.isOp(")")) {
        depth--;
      } else if (depth == 1 && k.isOp(",")) {
        position++;
      } else if (depth == 1 && k.type() == dev.floe.sql.Token.Type.PARAM && k.text().startsWith("$")
          && t.get(i - 1).isOp("(") || depth == 1 && k.type() == dev.floe.sql.Token.Type.PARAM
          && t.get(i - 1).isOp(",")) {
        dev.floe.sql.Token next = t.get(i + 1);
        if ((next.isOp(",") || next.isOp(")")) && k.text().startsWith("$")) {
          try {
            sink.accept(Integer.parseInt(k.text().substring(1)), position);
          } catch (NumberFormatException ignored) {
            // not a numbered parameter
          }
        }
      }
    }
  }
}
