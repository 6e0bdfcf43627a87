package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.SqlState;
import dev.floe.sql.Ast;
import dev.floe.sql.QualifiedName;
import java.util.List;

/**
 * CREATE, ALTER and DROP SEQUENCE: the counters {@code nextval('name')} advances ({@link Sequences}, kept
 * in the catalog database), as serial and identity columns and ORMs' id generators use them.
 */
final class SequenceDdl {
  private final SessionContext session;

  SequenceDdl(SessionContext session) {
    this.session = session;
  }

  Result create(Ast.CreateSequence s) {
    String name = name(s.name());
    Sequences sequences = session.engine().sequences();
    if (sequences.exists(name)) {
      if (s.ifNotExists()) {
        session.notice("relation \"" + s.name().last() + "\" already exists, skipping");
        return new CommandResult("CREATE SEQUENCE", 0);
      }
      throw FloeException.duplicateTable(s.name().last(), 0);
    }
    sequences.create(name, s.start(), s.increment());
    return new CommandResult("CREATE SEQUENCE", 0);
  }

  /**
   * ALTER SEQUENCE: RESTART [WITH n] makes n (or its start, 1) the next value, as PostgreSQL's; OWNED BY
   * is accepted (a serial column's sequence goes with its table already).
   */
  Result alter(Ast.AlterSequence s) {
    String name = name(s.name());
    if (!session.engine().sequences().exists(name)) {
      if (s.ifExists()) {
        session.notice("relation \"" + s.name().last() + "\" does not exist, skipping");
        return new CommandResult("ALTER SEQUENCE", 0);
      }
      throw new FloeException(SqlState.UNDEFINED_TABLE, "relation \"" + s.name().last() + "\" does not exist");
    }
    s.restart().ifPresent(next -> session.engine().sequences().restart(name, next));
    return new CommandResult("ALTER SEQUENCE", 0);
  }

  Result drop(Ast.DropSequence s) {
    for (QualifiedName n : s.names()) {
      if (!session.engine().sequences().drop(name(n)) && !s.ifExists()) {
        throw new FloeException(SqlState.UNDEFINED_TABLE, "sequence \"" + n.last() + "\" does not exist", null, null,
            n.position(), null);
      }
    }
    return new CommandResult("DROP SEQUENCE", 0);
  }

  /** {@code schema.name}, in the current schema when unqualified. */
  private String name(QualifiedName n) {
    List<String> parts = n.parts();
    String schema = parts.size() > 1 ? parts.get(parts.size() - 2) : session.currentSchema();
    return schema + "." + parts.get(parts.size() - 1);
  }
}
