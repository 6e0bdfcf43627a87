package dev.floe.exec;

import dev.floe.Result;
import dev.floe.sql.Ast;
import dev.floe.sql.QueryBinder;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Which executor runs each kind of statement a session dispatches: queries and EXPLAIN here, INSERT and
 * CREATE TABLE AS {@link Inserts}, row-level statements {@link Mutations}, DDL {@link Ddl}, SHOW and
 * DESCRIBE {@link ShowStatements}. Transaction control never gets here: it is {@link TransactionControl}'s.
 */
final class StatementExecutor implements Ast.Visitor<Result> {
  private final SessionContext session;

  StatementExecutor(SessionContext session) {
    this.session = session;
  }

  @Override
  public Result otherwise(Ast.Statement s) {
    throw new IllegalStateException("unhandled statement " + s);
  }

  @Override
  public Result query(Ast.Query q) {
    return session.query(q);
  }

  @Override
  public Result explain(Ast.Explain e) {
    Relations relations = session.relations();
    Ast.Query q = e.query();
    QueryBinder.Bound bound = session.bind(q.text(), offset -> q.offset() + offset + 1, relations);
    Object[] plan = session.sql().queryRow((e.analyze() ? "EXPLAIN (ANALYZE, FORMAT json) " : "EXPLAIN (FORMAT json) ")
        + bound.sql(), bound::originalPosition);
    List<String> lines = PlanText.lines(plan == null ? "" : String.valueOf(plan[plan.length - 1]),
        relations.explained());
    StringBuilder values = new StringBuilder();
    for (String line : lines) {
      values.append(values.length() > 0 ? ", " : "").append(dev.floe.sql.Lexer.quoteString(line));
    }
    // one row per line, in order, as PostgreSQL's EXPLAIN returns its plan
    return session.run("SELECT line AS \"QUERY PLAN\" FROM unnest([" + values + "]::VARCHAR[]) WITH ORDINALITY AS "
        + "p(line, n) ORDER BY n", o -> 0, () -> { }).withCommandTag("EXPLAIN");
  }

  @Override
  public Result insert(Ast.Insert i) {
    Optional<String> temporary = session.temporaryTables().named(i.table());
    if (temporary.isPresent()) {
      return session.temporaryTables().insert(i, temporary.get());
    }
    if (i.onConflict().isPresent()) {
      return withActions(i.table(), () -> new Inserts(session, session.tables()).insert(i));
    }
    return new Inserts(session, session.tables()).insert(i);
  }

  @Override
  public Result delete(Ast.Delete d) {
    Optional<String> temporary = session.temporaryTables().named(d.table());
    if (temporary.isPresent()) {
      return session.temporaryTables().delete(d, temporary.get());
    }
    return withActions(d.table(), () -> session.mutate(m -> m.delete(d)));
  }

  @Override
  public Result update(Ast.Update u) {
    Optional<String> temporary = session.temporaryTables().named(u.table());
    if (temporary.isPresent()) {
      return session.temporaryTables().update(u, temporary.get());
    }
    return withActions(u.table(), () -> session.mutate(m -> m.update(u)));
  }

  @Override
  public Result merge(Ast.Merge m) {
    return withActions(m.table(), () -> session.mutate(x -> x.merge(m)));
  }

  /**
   * Runs a statement that may carry out foreign keys' ON DELETE / ON UPDATE actions on other tables
   * ({@link ReferentialActions}) in a transaction block, its own when none is open, so that every table it
   * changes commits together or none does.
   */
  private Result withActions(dev.floe.sql.QualifiedName target, java.util.function.Supplier<Result> statement) {
    if (session.inTransaction() || !ReferentialActions.anyFor(session, target)) {
      return statement.get();
    }
    session.begin();
    try {
      Result result = statement.get();
      session.commit();
      return result;
    } catch (RuntimeException e) {
      if (session.inTransaction()) {
        session.rollback();
      }
      throw e;
    }
  }

  @Override
  public Result vacuum(Ast.Vacuum v) {
    return Vacuum.run(session, v);
  }

  @Override
  public Result truncate(Ast.Truncate t) {
    List<dev.floe.sql.QualifiedName> tables = new java.util.ArrayList<>();
    for (dev.floe.sql.QualifiedName name : t.tables()) {
      Optional<String> temporary = session.temporaryTables().named(name);
      if (temporary.isPresent()) {
        session.temporaryTables().truncate(temporary.get());
      } else {
        tables.add(name);
      }
    }
    if (tables.isEmpty()) {
      return new CommandResult("TRUNCATE TABLE", 0);
    }
    Ast.Truncate rest = new Ast.Truncate(tables, t.cascade());
    return session.mutate(m -> m.truncate(rest));
  }

  @Override
  public Result createTable(Ast.CreateTable c) {
    if (c.temporary().isPresent()) {
      return session.temporaryTables().create(c);
    }
    return c.asQuery().isPresent() ? new Inserts(session, session.engine().tables()).createTableAs(c)
        : new Ddl(session, session.engine().tables()).createTable(c);
  }

  @Override
  public Result createSchema(Ast.CreateSchema c) {
    return new Ddl(session, session.engine().tables()).createSchema(c);
  }

  @Override
  public Result createSequence(Ast.CreateSequence c) {
    return new SequenceDdl(session).create(c);
  }

  @Override
  public Result dropSequence(Ast.DropSequence d) {
    return new SequenceDdl(session).drop(d);
  }

  @Override
  public Result alterSequence(Ast.AlterSequence a) {
    return new SequenceDdl(session).alter(a);
  }

  @Override
  public Result createIndex(Ast.CreateIndex c) {
    return new Indexes(session, session.engine().tables()).create(c);
  }

  @Override
  public Result dropIndex(Ast.DropIndex d) {
    return new Indexes(session, session.engine().tables()).drop(d);
  }

  @Override
  public Result createView(Ast.CreateView c) {
    return new Views(session, session.engine().tables()).create(c);
  }

  @Override
  public Result dropView(Ast.DropView d) {
    return new Views(session, session.engine().tables()).drop(d);
  }

  @Override
  public Result dropSchema(Ast.DropSchema d) {
    return new Ddl(session, session.engine().tables()).dropSchema(d);
  }

  @Override
  public Result dropTable(Ast.DropTable d) {
    List<dev.floe.sql.QualifiedName> tables = new java.util.ArrayList<>();
    for (dev.floe.sql.QualifiedName name : d.names()) {
      if (session.temporaryTables().named(name).isEmpty() || !session.temporaryTables().drop(name.last())) {
        tables.add(name);
      }
    }
    if (tables.isEmpty()) {
      return new CommandResult("DROP TABLE", 0);
    }
    return new Ddl(session, session.engine().tables()).dropTable(new Ast.DropTable(tables, d.ifExists(), d.purge(),
        d.cascade()));
  }

  @Override
  public Result alterTable(Ast.AlterTable a) {
    return new Ddl(session, session.engine().tables()).alterTable(a);
  }

  @Override
  public Result showTables(Ast.ShowTables t) {
    return new ShowStatements(session).showTables(t);
  }

  @Override
  public Result showSchemas(Ast.ShowSchemas t) {
    return new ShowStatements(session).showSchemas();
  }

  @Override
  public Result describe(Ast.Describe d) {
    return new ShowStatements(session).describe(d);
  }

  /** The tables a DDL statement creates, changes or drops (a dropped schema: every table in it). */
  static List<TableIdentifier> ddlTables(Ast.Statement statement, Tables tables, String currentSchema) {
    return statement.accept(new Ast.Visitor<List<TableIdentifier>>() {
      @Override
      public List<TableIdentifier> otherwise(Ast.Statement s) {
        return List.of();
      }

      @Override
      public List<TableIdentifier> createTable(Ast.CreateTable c) {
        return List.of(tables.require(c.name(), currentSchema));
      }

      @Override
      public List<TableIdentifier> dropTable(Ast.DropTable d) {
        return d.names().stream().map(n -> tables.require(n, currentSchema)).toList();
      }

      @Override
      public List<TableIdentifier> createIndex(Ast.CreateIndex c) {
        return List.of(tables.require(c.table(), currentSchema));
      }

      @Override
      public List<TableIdentifier> alterTable(Ast.AlterTable a) {
        return List.of(tables.require(a.name(), currentSchema));
      }

      @Override
      public List<TableIdentifier> dropSchema(Ast.DropSchema d) {
        List<TableIdentifier> ids = new ArrayList<>();
        for (dev.floe.sql.QualifiedName n : d.names()) {
          Namespace ns = Namespace.of(n.parts().get(n.parts().size() - 1));
          if (tables.catalog().namespaceExists(ns)) {
            ids.addAll(tables.catalog().listTables(ns));
          }
        }
        return ids;
      }
    });
  }
}
