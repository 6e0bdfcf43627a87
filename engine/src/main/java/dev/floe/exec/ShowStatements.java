package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.sql.Ast;
import dev.floe.sql.Lexer;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

/** SHOW TABLES, SHOW SCHEMAS and DESCRIBE: rows about the catalog, as a query's result. */
final class ShowStatements {
  private final SessionContext session;

  ShowStatements(SessionContext session) {
    this.session = session;
  }

  Result showTables(Ast.ShowTables s) {
    String schema = s.schema().map(n -> n.last()).orElse(session.currentSchema());
    List<String> rows = new ArrayList<>();
    for (TableIdentifier id : session.engine().tables().catalog().listTables(Namespace.of(schema))) {
      rows.add("(" + Lexer.quoteString(id.name()) + ")");
    }
    return values(List.of("name"), rows, true);
  }

  Result showSchemas() {
    List<String> rows = new ArrayList<>();
    for (Namespace ns : session.engine().tables().catalog().listNamespaces(Namespace.empty())) {
      rows.add("(" + Lexer.quoteString(ns.toString()) + ")");
    }
    return values(List.of("name"), rows, true);
  }

  Result describe(Ast.Describe d) {
    TableIdentifier id = session.engine().tables().require(d.table(), session.currentSchema());
    var info = session.engine().tableInfo(id).orElseThrow(() -> FloeException.undefinedTable(id.name(), d.table().position()));
    List<String> rows = new ArrayList<>();
    for (var c : info.columns()) {
      rows.add("(" + Lexer.quoteString(c.name()) + ", " + Lexer.quoteString(c.type().displayName()) + ", "
          + (c.nullable() ? "true" : "false") + ")");
    }
    return values(List.of("column_name", "data_type", "is_nullable"), rows, false);
  }

  private Result values(List<String> names, List<String> rows, boolean sorted) {
    String cols = String.join(", ", names.stream().map(Lexer::quoteIdentifier).toList());
    String sql = rows.isEmpty()
        ? "SELECT " + String.join(", ", names.stream().map(n -> "CAST(NULL AS VARCHAR) AS " + Lexer.quoteIdentifier(n))
            .toList()) + " WHERE false"
        : "SELECT * FROM (VALUES " + String.join(", ", rows) + ") AS t(" + cols + ")" + (sorted ? " ORDER BY 1" : "");
    return session.run(sql, o -> 0);
  }
}
