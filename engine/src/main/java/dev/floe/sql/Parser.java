package dev.floe.sql;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.SqlType;
import dev.floe.sql.Ast.AddColumn;
import dev.floe.sql.Ast.AlterAction;
import dev.floe.sql.Ast.AlterColumnType;
import dev.floe.sql.Ast.AlterTable;
import dev.floe.sql.Ast.Assignment;
import dev.floe.sql.Ast.Delete;
import dev.floe.sql.Ast.Fragment;
import dev.floe.sql.Ast.Merge;
import dev.floe.sql.Ast.MergeAction;
import dev.floe.sql.Ast.MergeClause;
import dev.floe.sql.Ast.OnConflict;
import dev.floe.sql.Ast.Truncate;
import dev.floe.sql.Ast.Update;
import dev.floe.sql.Ast.ColumnDef;
import dev.floe.sql.Ast.CreateSchema;
import dev.floe.sql.Ast.CreateSequence;
import dev.floe.sql.Ast.DropSequence;
import dev.floe.sql.Ast.CreateTable;
import dev.floe.sql.Ast.Describe;
import dev.floe.sql.Ast.DropColumn;
import dev.floe.sql.Ast.DropNotNull;
import dev.floe.sql.Ast.DropSchema;
import dev.floe.sql.Ast.DropTable;
import dev.floe.sql.Ast.Explain;
import dev.floe.sql.Ast.Insert;
import dev.floe.sql.Ast.PartitionField;
import dev.floe.sql.Ast.PropertyValue;
import dev.floe.sql.Ast.Query;
import dev.floe.sql.Ast.RenameColumn;
import dev.floe.sql.Ast.RenameTable;
import dev.floe.sql.Ast.SetProperties;
import dev.floe.sql.Ast.ShowSchemas;
import dev.floe.sql.Ast.ShowTables;
import dev.floe.sql.Ast.SortField;
import dev.floe.sql.Ast.Statement;
import dev.floe.sql.Ast.UnsetProperties;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Recursive-descent parser for the statements Floe executes itself (DDL, INSERT, SHOW, DESCRIBE).
 * Queries are recognised by their first keyword and returned as text. Errors are PostgreSQL's:
 * {@code syntax error at or near "x"} with the position of the offending token.
 */
public final class Parser {
  private static final Set<String> QUERY_STARTS = Set.of("select", "with", "values", "from", "table");
  private static final Set<String> LATER_STATEMENTS =
      Set.of("copy", "reset", "grant", "revoke", "vacuum", "analyze", "call",
          "prepare", "execute", "deallocate", "listen", "notify", "lock", "comment", "discard");

  private final String sql;
  private final List<Token> tokens;
  private int i;

  private Parser(String sql) {
    this.sql = sql;
    this.tokens = Lexer.tokenize(sql);
  }

  /** Parses one statement (no trailing semicolon handling: use {@link SqlScript} for scripts). */
  public static Statement parse(String sql) {
    return new Parser(sql).statement();
  }

  /** Parses a column type name such as {@code numeric(10,2)} or {@code timestamp with time zone}. */
  public static SqlType parseType(String text) {
    Parser p = new Parser(text);
    SqlType t = p.type();
    p.expectEnd();
    return t;
  }

  /** Parses a possibly qualified object name such as {@code s.t} or {@code "My Table"}. */
  public static QualifiedName parseName(String text) {
    Parser p = new Parser(text);
    QualifiedName name = p.qualifiedName();
    p.expectEnd();
    return name;
  }

  /** Parses a partition field written as text, e.g. {@code bucket(id, 16)} or {@code month(ts)}. */
  public static PartitionField parsePartitionField(String text, int position) {
    Parser p = new Parser(text);
    PartitionField f = p.partitionField();
    p.expectEnd();
    return new PartitionField(f.transform(), f.column(), f.argument(), position);
  }

  /** Parses a sort field written as text, e.g. {@code ts DESC NULLS LAST}. */
  public static SortField parseSortField(String text, int position) {
    Parser p = new Parser(text);
    String column = p.identifier();
    boolean desc = false;
    if (p.acceptKeyword("desc")) {
      desc = true;
    } else {
      p.acceptKeyword("asc");
    }
    boolean nullsFirst = !desc;
    if (p.acceptKeyword("nulls")) {
      if (p.acceptKeyword("first")) {
        nullsFirst = true;
      } else {
        p.expectKeyword("last");
        nullsFirst = false;
      }
    }
    p.expectEnd();
    return new SortField(column, desc, nullsFirst, position);
  }

  // ------------------------------------------------------------------ statements

  private Statement statement() {
    Token first = peek();
    if (first.type() == Token.Type.EOF) {
      throw FloeException.syntax("empty statement", 1);
    }
    if (first.isKeyword("with")) {
      Statement withInsert = withInsert();
      if (withInsert != null) {
        return withInsert;
      }
    }
    if (first.isOp("(") || (first.type() == Token.Type.IDENT && QUERY_STARTS.contains(first.value()))) {
      return new Query(sql, 0);
    }
    if (first.type() != Token.Type.IDENT) {
      throw unexpected(first);
    }
    return switch (first.value()) {
      case "explain" -> explain();
      case "create" -> create();
      case "drop" -> drop();
      case "alter" -> alter();
      case "insert" -> insert();
      case "delete" -> delete();
      case "update" -> update();
      case "merge" -> merge();
      case "truncate" -> truncate();
      case "show" -> show();
      case "begin", "start", "commit", "end", "rollback", "abort", "savepoint", "release" -> transactionControl();
      case "set" -> {
        if (peekAt(1).isKeyword("transaction")) {
          yield transactionControl();
        }
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "SET is not supported yet", null, null,
            first.position(), null);
      }
      case "describe", "desc" -> {
        next();
        QualifiedName name = qualifiedName();
        expectEnd();
        yield new Describe(name);
      }
      default -> {
        if (LATER_STATEMENTS.contains(first.value())) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
              first.value().toUpperCase() + " is not supported yet", null, null, first.position(), null);
        }
        throw unexpected(first);
      }
    };
  }

  /**
   * PostgreSQL's {@code WITH ctes INSERT INTO t ... query}: the same as
   * {@code INSERT INTO t ... WITH ctes query}. Null if the WITH is an ordinary query.
   */
  private Statement withInsert() {
    int depth = 0;
    for (int k = i; k < tokens.size(); k++) {
      Token t = tokens.get(k);
      if (t.isOp("(")) {
        depth++;
      } else if (t.isOp(")")) {
        depth--;
      } else if (depth == 0 && t.isKeyword("insert")) {
        String ctes = sql.substring(tokens.get(i).start(), t.start());
        Statement inner = new Parser(sql.substring(t.start())).statement();
        if (!(inner instanceof Insert insert) || insert.source().isEmpty()) {
          throw unexpected(t);
        }
        Query source = insert.source().get();
        return new Insert(insert.table(), insert.alias(), insert.columns(), insert.overriding(),
            Optional.of(new Query(ctes + source.text(), 0)), insert.onConflict().map(c -> shifted(c, t.start())),
            insert.returning().map(r -> shifted(r, t.start())));
      } else if (depth == 0 && (t.isKeyword("update") || t.isKeyword("delete") || t.isKeyword("merge"))) {
        // WITH ctes UPDATE/DELETE/MERGE ...: the CTEs are visible to the statement's FROM, USING and
        // source, as in PostgreSQL.
        Fragment ctes = new Fragment(sql.substring(tokens.get(i).start(), t.start()), tokens.get(i).start());
        i = k;
        Statement inner = statement();
        if (inner instanceof Delete d) {
          return new Delete(d.table(), d.alias(), d.using(), d.where(), d.returning(), Optional.of(ctes));
        } else if (inner instanceof Update u) {
          return new Update(u.table(), u.alias(), u.set(), u.from(), u.where(), u.returning(), Optional.of(ctes));
        }
        Merge m = (Merge) inner;
        return new Merge(m.table(), m.alias(), m.source(), m.on(), m.clauses(), Optional.of(ctes));
      }
    }
    return null;
  }

  private static Fragment shifted(Fragment f, int by) {
    return new Fragment(f.text(), f.offset() + by);
  }

  private static OnConflict shifted(OnConflict c, int by) {
    List<Assignment> set = new ArrayList<>();
    for (Assignment a : c.set()) {
      set.add(new Assignment(a.column(), a.value().map(v -> shifted(v, by)), a.position() + by));
    }
    return new OnConflict(c.columns(), c.doNothing(), set, c.where().map(w -> shifted(w, by)), c.position() + by);
  }

  private Statement explain() {
    expectKeyword("explain");
    boolean analyze = acceptKeyword("analyze") || acceptKeyword("analyse");
    Token start = peek();
    if (start.type() == Token.Type.EOF) {
      throw unexpected(start);
    }
    if (!(start.isOp("(") || (start.type() == Token.Type.IDENT && QUERY_STARTS.contains(start.value())))) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "EXPLAIN is supported for queries only",
          null, null, start.position(), null);
    }
    return new Explain(analyze, new Query(sql.substring(start.start()), start.start()));
  }

  private Statement create() {
    expectKeyword("create");
    if (acceptKeyword("schema")) {
      boolean ifNotExists = ifNotExists();
      QualifiedName name = qualifiedName();
      expectEnd();
      return new CreateSchema(name, ifNotExists);
    }
    if (acceptKeyword("sequence")) {
      return createSequence();
    }
    if (peek().isKeyword("or") || peek().isKeyword("temp") || peek().isKeyword("temporary")
        || peek().isKeyword("view") || peek().isKeyword("index") || peek().isKeyword("unique")) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
          "CREATE " + peek().text().toUpperCase() + " is not supported", null, null, peek().position(), null);
    }
    expectKeyword("table");
    return createTable();
  }

  /** Sequence options: START [WITH] n is kept; AS type, CACHE, NO CYCLE, ... are accepted; other steps refused. */
  private Statement createSequence() {
    boolean ifNotExists = ifNotExists();
    QualifiedName name = qualifiedName();
    long start = 1;
    while (peek().type() != Token.Type.EOF && !peek().isOp(";")) {
      Token t = next();
      if (t.isKeyword("start")) {
        acceptKeyword("with");
        start = signedLong();
      } else if (t.isKeyword("increment")) {
        acceptKeyword("by");
        long by = signedLong();
        if (by != 1) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "sequences advance by 1 only", null, null,
              t.position(), null);
        }
      } else if (t.isKeyword("minvalue") || t.isKeyword("maxvalue") || t.isKeyword("cache")) {
        signedLong();
      } else if (t.isKeyword("as")) {
        type();
      } else if (!(t.isKeyword("no") || t.isKeyword("cycle") || t.isKeyword("owned") || t.isKeyword("by")
          || t.isKeyword("none") || t.isIdentifier() || t.isOp("."))) {
        throw unexpected(t);
      }
    }
    expectEnd();
    return new CreateSequence(name, ifNotExists, start);
  }

  private long signedLong() {
    boolean negative = acceptOp("-");
    Token t = next();
    if (t.type() != Token.Type.NUMBER) {
      throw unexpected(t);
    }
    try {
      return negative ? -Long.parseLong(t.text()) : Long.parseLong(t.text());
    } catch (NumberFormatException e) {
      throw unexpected(t);
    }
  }

  private Statement createTable() {
    boolean ifNotExists = ifNotExists();
    QualifiedName name = qualifiedName();
    List<ColumnDef> columns = new ArrayList<>();
    List<String> primaryKey = new ArrayList<>();
    List<String> ctasColumns = new ArrayList<>();
    if (acceptOp("(")) {
      boolean onlyNames = true;
      int save = i;
      // CREATE TABLE t (a, b) AS SELECT ... names the query's columns.
      do {
        if (!peek().isIdentifier()) {
          onlyNames = false;
          break;
        }
        next();
      } while (acceptOp(","));
      onlyNames = onlyNames && peek().isOp(")");
      i = save;
      if (onlyNames) {
        do {
          ctasColumns.add(identifier());
        } while (acceptOp(","));
      } else {
        do {
          tableElement(columns, primaryKey);
        } while (acceptOp(","));
      }
      expectOp(")");
    }
    acceptUsingIceberg();
    List<PartitionField> partitioning = new ArrayList<>();
    Map<String, PropertyValue> properties = new LinkedHashMap<>();
    while (true) {
      if (acceptKeyword("partitioned")) {
        expectKeyword("by");
        expectOp("(");
        do {
          partitioning.add(partitionField());
        } while (acceptOp(","));
        expectOp(")");
      } else if (peek().isKeyword("with") && peekAt(1).isOp("(")) {
        next();
        properties.putAll(properties());
      } else if (acceptKeyword("tblproperties")) {
        properties.putAll(properties());
      } else {
        break;
      }
    }
    Optional<Query> asQuery = Optional.empty();
    boolean withData = true;
    if (acceptKeyword("as")) {
      Token start = peek();
      int end = sql.length();
      // Trailing WITH [NO] DATA belongs to CREATE TABLE AS, not to the query.
      int n = tokens.size();
      if (n >= 3 && tokens.get(n - 2).isKeyword("data")) {
        Token with = tokens.get(n - 3);
        Token no = with;
        if (with.isKeyword("no") && n >= 4 && tokens.get(n - 4).isKeyword("with")) {
          withData = false;
          no = tokens.get(n - 4);
          end = no.start();
        } else if (with.isKeyword("with")) {
          end = with.start();
        }
      }
      asQuery = Optional.of(new Query(sql.substring(start.start(), end), start.start()));
      i = n - 1;
    } else {
      if (!ctasColumns.isEmpty() || columns.isEmpty()) {
        throw new FloeException(SqlState.INVALID_TABLE_DEFINITION,
            "CREATE TABLE needs column definitions (name and type) or AS query", null, null,
            name.position(), null);
      }
    }
    expectEnd();
    return new CreateTable(name, ifNotExists, columns, ctasColumns, partitioning, primaryKey, properties, asQuery,
        withData);
  }

  private void acceptUsingIceberg() {
    if (peek().isKeyword("using")) {
      Token using = next();
      Token format = next();
      if (!format.isIdentifier() || !format.value().equalsIgnoreCase("iceberg")) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "tables are Iceberg tables; USING "
            + format.text() + " is not supported", null, null, using.position(), null);
      }
    }
  }

  private void tableElement(List<ColumnDef> columns, List<String> primaryKey) {
    if (peek().isKeyword("constraint")) {
      next();
      identifier();
    }
    if (peek().isKeyword("primary") && peekAt(1).isKeyword("key")) {
      next();
      next();
      expectOp("(");
      do {
        primaryKey.add(identifier());
      } while (acceptOp(","));
      expectOp(")");
      return;
    }
    if (peek().isKeyword("unique") || peek().isKeyword("check") || peek().isKeyword("foreign")) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
          peek().text().toUpperCase() + " constraints are not supported", null, null, peek().position(), null);
    }
    columns.add(columnDef(primaryKey));
  }

  private ColumnDef columnDef(List<String> primaryKey) {
    Token nameToken = peek();
    String name = identifier();
    Optional<String> identity = Optional.empty();
    SqlType type;
    boolean notNull = false;
    // serial types: an integer column whose default is the next value of its own sequence
    SqlType serial = switch (peek().type() == Token.Type.IDENT ? peek().value() : "") {
      case "serial", "serial4" -> SqlType.INTEGER;
      case "bigserial", "serial8" -> SqlType.BIGINT;
      case "smallserial", "serial2" -> SqlType.SMALLINT;
      default -> null;
    };
    if (serial != null) {
      next();
      type = serial;
      identity = Optional.of("serial");
      notNull = true;
    } else {
      type = type();
    }
    Optional<String> defaultSql = Optional.empty();
    while (true) {
      if (peek().isKeyword("generated") && peekAt(1).isKeyword("always") || peek().isKeyword("generated")
          && peekAt(1).isKeyword("by")) {
        next();
        if (acceptKeyword("always")) {
          identity = Optional.of("always");
        } else {
          next();
          expectKeyword("default");
          identity = Optional.of("by default");
        }
        expectKeyword("as");
        if (peek().isOp("(")) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "generated columns are not supported", null,
              "Compute the value in the INSERT, or in a view of the query.", peek().position(), null);
        }
        expectKeyword("identity");
        if (acceptOp("(")) {
          int depth = 1; // sequence options (START WITH, INCREMENT BY, ...) are accepted, not applied
          while (depth > 0) {
            Token t = next();
            if (t.type() == Token.Type.EOF) {
              throw unexpected(t);
            }
            depth += t.isOp("(") ? 1 : t.isOp(")") ? -1 : 0;
          }
        }
        notNull = true;
        continue;
      }
      if (acceptKeyword("not")) {
        expectKeyword("null");
        notNull = true;
      } else if (acceptKeyword("null")) {
        notNull = false;
      } else if (acceptKeyword("default")) {
        defaultSql = Optional.of(expressionText(Set.of("not", "null", "primary", "constraint", "references",
            "check", "unique", "default", "generated")));
      } else if (peek().isKeyword("primary")) {
        next();
        expectKeyword("key");
        primaryKey.add(name);
        notNull = true;
      } else if (peek().isKeyword("constraint")) {
        next();
        identifier();
      } else if (peek().isKeyword("references") || peek().isKeyword("check") || peek().isKeyword("unique")
          || peek().isKeyword("generated") || peek().isKeyword("collate")) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
            peek().text().toUpperCase() + " is not supported in column definitions", null, null,
            peek().position(), null);
      } else {
        break;
      }
    }
    if (identity.isPresent() && defaultSql.isPresent()) {
      throw FloeException.syntax("both default and identity specified for column \"" + name + "\"",
          nameToken.position());
    }
    return new ColumnDef(name, type, notNull, defaultSql, nameToken.position(), identity);
  }

  /** The source text of an expression, up to a top-level comma, closing parenthesis or stop keyword. */
  private String expressionText(Set<String> stopKeywords) {
    int depth = 0;
    Token start = peek();
    Token last = null;
    while (true) {
      Token t = peek();
      if (t.type() == Token.Type.EOF) {
        break;
      }
      if (depth == 0 && (t.isOp(",") || t.isOp(")") || (last != null && t.type() == Token.Type.IDENT
          && stopKeywords.contains(t.value())))) {
        break;
      }
      if (t.isOp("(") || t.isOp("[")) {
        depth++;
      } else if (t.isOp(")") || t.isOp("]")) {
        depth--;
      }
      last = next();
    }
    if (last == null) {
      throw unexpected(start);
    }
    return sql.substring(start.start(), last.end());
  }

  private PartitionField partitionField() {
    Token start = peek();
    String name = identifier();
    if (!acceptOp("(")) {
      return new PartitionField("identity", name, Optional.empty(), start.position());
    }
    String transform = switch (name) {
      case "identity" -> "identity";
      case "year", "years" -> "year";
      case "month", "months" -> "month";
      case "day", "days", "date" -> "day";
      case "hour", "hours", "date_hour" -> "hour";
      case "bucket" -> "bucket";
      case "truncate" -> "truncate";
      case "void" -> "void";
      default -> throw new FloeException(SqlState.INVALID_TABLE_DEFINITION,
          "unknown partition transform \"" + name + "\"", null,
          "Use identity, year, month, day, hour, bucket(n, col), truncate(w, col) or void.", start.position(), null);
    };
    String column = null;
    Integer argument = null;
    do {
      Token t = peek();
      if (t.type() == Token.Type.NUMBER) {
        next();
        try {
          argument = Integer.parseInt(t.value());
        } catch (NumberFormatException e) {
          throw new FloeException(SqlState.INVALID_TABLE_DEFINITION, "invalid transform argument " + t.text(),
              null, null, t.position(), null);
        }
      } else {
        column = identifier();
      }
    } while (acceptOp(","));
    expectOp(")");
    if (column == null) {
      throw new FloeException(SqlState.INVALID_TABLE_DEFINITION,
          "partition transform " + transform + " needs a column", null, null, start.position(), null);
    }
    boolean needsArgument = transform.equals("bucket") || transform.equals("truncate");
    if (needsArgument != (argument != null)) {
      throw new FloeException(SqlState.INVALID_TABLE_DEFINITION,
          needsArgument ? "partition transform " + transform + " needs a width, e.g. " + transform + "(16, "
              + column + ")" : "partition transform " + transform + " takes no width",
          null, null, start.position(), null);
    }
    if (argument != null && argument <= 0) {
      throw new FloeException(SqlState.INVALID_TABLE_DEFINITION,
          "partition transform " + transform + " needs a positive width, not " + argument, null, null,
          start.position(), null);
    }
    return new PartitionField(transform, column, Optional.ofNullable(argument), start.position());
  }

  private Map<String, PropertyValue> properties() {
    expectOp("(");
    Map<String, PropertyValue> props = new LinkedHashMap<>();
    if (acceptOp(")")) {
      return props;
    }
    do {
      Token keyToken = peek();
      String key = propertyKey();
      expectOp("=");
      if (props.put(key, propertyValue()) != null) {
        throw new FloeException(SqlState.SYNTAX_ERROR, "property \"" + key + "\" is given twice", null, null,
            keyToken.position(), null);
      }
    } while (acceptOp(","));
    expectOp(")");
    return props;
  }

  private String propertyKey() {
    Token t = next();
    if (t.type() == Token.Type.STRING) {
      return t.value();
    }
    if (!t.isIdentifier()) {
      throw unexpected(t);
    }
    StringBuilder key = new StringBuilder(t.value());
    while (peek().isOp(".")) {
      next();
      Token part = next();
      if (!part.isIdentifier()) {
        throw unexpected(part);
      }
      key.append('.').append(part.value());
    }
    return key.toString();
  }

  private PropertyValue propertyValue() {
    Token t = next();
    if (t.isKeyword("array") && peek().isOp("[")) {
      next();
      List<String> values = new ArrayList<>();
      if (!peek().isOp("]")) {
        do {
          Token v = next();
          if (v.type() != Token.Type.STRING) {
            throw new FloeException(SqlState.SYNTAX_ERROR, "ARRAY property values must be string literals",
                null, null, v.position(), null);
          }
          values.add(v.value());
        } while (acceptOp(","));
      }
      expectOp("]");
      return PropertyValue.ofArray(values, t.position());
    }
    if (t.isOp("-") && peek().type() == Token.Type.NUMBER) {
      return PropertyValue.of("-" + next().value(), t.position());
    }
    return switch (t.type()) {
      case STRING, NUMBER, IDENT, QUOTED_IDENT -> PropertyValue.of(t.value(), t.position());
      default -> throw unexpected(t);
    };
  }

  private Statement drop() {
    expectKeyword("drop");
    if (acceptKeyword("schema")) {
      boolean ifExists = ifExists();
      List<QualifiedName> names = new ArrayList<>();
      do {
        names.add(qualifiedName());
      } while (acceptOp(","));
      boolean cascade = false;
      if (acceptKeyword("cascade")) {
        cascade = true;
      } else {
        acceptKeyword("restrict");
      }
      expectEnd();
      return new DropSchema(names, ifExists, cascade);
    }
    if (acceptKeyword("sequence")) {
      boolean ifExists = ifExists();
      List<QualifiedName> names = new ArrayList<>();
      do {
        names.add(qualifiedName());
      } while (acceptOp(","));
      if (!acceptKeyword("cascade")) {
        acceptKeyword("restrict");
      }
      expectEnd();
      return new DropSequence(names, ifExists);
    }
    expectKeyword("table");
    boolean ifExists = ifExists();
    List<QualifiedName> names = new ArrayList<>();
    do {
      names.add(qualifiedName());
    } while (acceptOp(","));
    boolean purge = false;
    while (true) {
      if (acceptKeyword("purge")) {
        purge = true;
      } else if (!acceptKeyword("cascade") && !acceptKeyword("restrict")) {
        break;
      }
    }
    expectEnd();
    return new DropTable(names, ifExists, purge);
  }

  private Statement alter() {
    expectKeyword("alter");
    expectKeyword("table");
    boolean ifExists = ifExists();
    QualifiedName name = qualifiedName();
    List<AlterAction> actions = new ArrayList<>();
    do {
      actions.add(alterAction());
    } while (acceptOp(","));
    expectEnd();
    return new AlterTable(name, ifExists, actions);
  }

  private AlterAction alterAction() {
    Token t = peek();
    if (acceptKeyword("add")) {
      acceptKeyword("column");
      boolean ifNotExists = ifNotExists();
      List<String> pk = new ArrayList<>();
      ColumnDef def = columnDef(pk);
      if (!pk.isEmpty()) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot add a PRIMARY KEY column", null, null,
            def.position(), null);
      }
      return new AddColumn(def, ifNotExists);
    }
    if (acceptKeyword("drop")) {
      acceptKeyword("column");
      boolean ifExists = ifExists();
      Token col = peek();
      String name = identifier();
      acceptKeyword("cascade");
      acceptKeyword("restrict");
      return new DropColumn(name, ifExists, col.position());
    }
    if (acceptKeyword("rename")) {
      if (acceptKeyword("to")) {
        return new RenameTable(qualifiedName());
      }
      acceptKeyword("column");
      Token col = peek();
      String from = identifier();
      expectKeyword("to");
      String to = identifier();
      return new RenameColumn(from, to, col.position());
    }
    if (acceptKeyword("alter")) {
      acceptKeyword("column");
      Token col = peek();
      String name = identifier();
      if (acceptKeyword("drop")) {
        expectKeyword("not");
        expectKeyword("null");
        return new DropNotNull(name, col.position());
      }
      if (peek().isKeyword("set") && peekAt(1).isKeyword("not")) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
            "cannot make an existing Iceberg column NOT NULL", null, null, col.position(), null);
      }
      if (acceptKeyword("set")) {
        expectKeyword("data");
      }
      expectKeyword("type");
      SqlType type = type();
      if (peek().isKeyword("using")) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "ALTER COLUMN TYPE ... USING is not supported",
            null, null, peek().position(), null);
      }
      return new AlterColumnType(name, type, col.position());
    }
    if (acceptKeyword("set")) {
      if (acceptKeyword("properties")) {
        Map<String, PropertyValue> props = new LinkedHashMap<>();
        do {
          String key = propertyKey();
          expectOp("=");
          props.put(key, propertyValue());
        } while (peek().isOp(",") && !peekAt(1).isKeyword("set") && acceptOp(","));
        return new SetProperties(props);
      }
      acceptKeyword("tblproperties");
      return new SetProperties(properties());
    }
    if (acceptKeyword("reset") || acceptKeyword("unset")) {
      acceptKeyword("properties");
      acceptKeyword("tblproperties");
      boolean ifExists = ifExists();
      List<String> keys = new ArrayList<>();
      expectOp("(");
      do {
        keys.add(propertyKey());
      } while (acceptOp(","));
      expectOp(")");
      return new UnsetProperties(keys, ifExists);
    }
    throw unexpected(t);
  }

  private Statement insert() {
    expectKeyword("insert");
    expectKeyword("into");
    QualifiedName table = qualifiedName();
    Optional<String> alias = Optional.empty();
    if (acceptKeyword("as")) {
      alias = Optional.of(identifier());
    }
    List<String> columns = new ArrayList<>();
    if (peek().isOp("(") && !startsQuery(peekAt(1))) {
      next();
      do {
        columns.add(identifier());
      } while (acceptOp(","));
      expectOp(")");
    }
    Optional<String> overriding = Optional.empty();
    if (acceptKeyword("overriding")) {
      if (acceptKeyword("system")) {
        overriding = Optional.of("system");
      } else {
        expectKeyword("user");
        overriding = Optional.of("user");
      }
      expectKeyword("value");
    }
    Optional<Query> source = Optional.empty();
    if (acceptKeyword("default")) {
      expectKeyword("values");
    } else {
      Token start = peek();
      if (!startsQuery(start)) {
        throw unexpected(start);
      }
      // The query runs to ON CONFLICT or RETURNING at the top level.
      int depth = 0;
      int end = tokens.size() - 1;
      for (int k = i; k < tokens.size(); k++) {
        Token t = tokens.get(k);
        if (t.isOp("(") || t.isOp("[")) {
          depth++;
        } else if (t.isOp(")") || t.isOp("]")) {
          depth--;
        } else if (depth == 0 && ((t.isKeyword("on") && k + 1 < tokens.size()
            && tokens.get(k + 1).isKeyword("conflict")) || t.isKeyword("returning"))) {
          end = k;
          break;
        }
      }
      source = Optional.of(new Query(sql.substring(start.start(), tokens.get(end).start()).strip(), start.start()));
      i = end;
    }
    Optional<OnConflict> onConflict = Optional.empty();
    if (peek().isKeyword("on")) {
      onConflict = Optional.of(onConflict());
    }
    Optional<Fragment> returning = returning();
    expectEnd();
    return new Insert(table, alias, columns, overriding, source, onConflict, returning);
  }

  private OnConflict onConflict() {
    Token on = next();
    expectKeyword("conflict");
    List<String> columns = new ArrayList<>();
    if (acceptOp("(")) {
      do {
        columns.add(identifier());
      } while (acceptOp(","));
      expectOp(")");
      if (peek().isKeyword("where")) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "ON CONFLICT with a partial index predicate is "
            + "not supported", null, null, peek().position(), null);
      }
    } else if (peek().isKeyword("on") && peekAt(1).isKeyword("constraint")) {
      next();
      next();
      identifier(); // the table's primary key is its only constraint
    }
    expectKeyword("do");
    if (acceptKeyword("nothing")) {
      return new OnConflict(columns, true, List.of(), Optional.empty(), on.position());
    }
    expectKeyword("update");
    expectKeyword("set");
    List<Assignment> set = assignments(Set.of("where", "returning"));
    Optional<Fragment> where = Optional.empty();
    if (acceptKeyword("where")) {
      where = Optional.of(fragment(Set.of("returning"), false));
    }
    return new OnConflict(columns, false, set, where, on.position());
  }

  private Optional<Fragment> returning() {
    if (!acceptKeyword("returning")) {
      return Optional.empty();
    }
    return Optional.of(fragment(Set.of(), false));
  }

  private Statement delete() {
    expectKeyword("delete");
    expectKeyword("from");
    acceptKeyword("only");
    QualifiedName table = qualifiedName();
    Optional<String> alias = alias(Set.of("using", "where", "returning"));
    Optional<Fragment> using = Optional.empty();
    if (acceptKeyword("using")) {
      using = Optional.of(fragment(Set.of("where", "returning"), false));
    }
    Optional<Fragment> where = where();
    Optional<Fragment> returning = returning();
    expectEnd();
    return new Delete(table, alias, using, where, returning, Optional.empty());
  }

  private Optional<Fragment> where() {
    if (!acceptKeyword("where")) {
      return Optional.empty();
    }
    if (peek().isKeyword("current") && peekAt(1).isKeyword("of")) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "WHERE CURRENT OF is not supported", null, null,
          peek().position(), null);
    }
    return Optional.of(fragment(Set.of("returning"), false));
  }

  private Statement update() {
    expectKeyword("update");
    acceptKeyword("only");
    QualifiedName table = qualifiedName();
    Optional<String> alias = alias(Set.of("set"));
    expectKeyword("set");
    List<Assignment> set = assignments(Set.of("from", "where", "returning"));
    Optional<Fragment> from = Optional.empty();
    if (acceptKeyword("from")) {
      from = Optional.of(fragment(Set.of("where", "returning"), false));
    }
    Optional<Fragment> where = where();
    Optional<Fragment> returning = returning();
    expectEnd();
    return new Update(table, alias, set, from, where, returning, Optional.empty());
  }

  /** {@code col = expr | DEFAULT} and {@code (a, b) = (x, y)}, comma separated. */
  private List<Assignment> assignments(Set<String> stop) {
    List<Assignment> out = new ArrayList<>();
    do {
      Token start = peek();
      if (acceptOp("(")) {
        List<String> columns = new ArrayList<>();
        do {
          columns.add(identifier());
        } while (acceptOp(","));
        expectOp(")");
        expectOp("=");
        acceptKeyword("row");
        Token open = peek();
        expectOp("(");
        if (startsQuery(peek())) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "assigning a sub-SELECT to several columns is "
              + "not supported", null, null, open.position(), null);
        }
        List<Fragment> values = new ArrayList<>();
        do {
          values.add(fragment(Set.of(), true));
        } while (acceptOp(","));
        expectOp(")");
        if (values.size() != columns.size()) {
          throw FloeException.syntax("number of columns does not match number of values", open.position());
        }
        for (int k = 0; k < columns.size(); k++) {
          Fragment v = values.get(k);
          out.add(new Assignment(columns.get(k), v.text().equalsIgnoreCase("default") ? Optional.empty()
              : Optional.of(v), start.position()));
        }
        continue;
      }
      String column = identifier();
      if (peek().isOp(".") || peek().isOp("[")) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "assigning to a field or element of a column is "
            + "not supported", null, null, peek().position(), null);
      }
      expectOp("=");
      if (peek().isKeyword("default") && (peekAt(1).isOp(",") || peekAt(1).type() == Token.Type.EOF
          || peekAt(1).isOp(";") || (peekAt(1).type() == Token.Type.IDENT && stop.contains(peekAt(1).value())))) {
        next();
        out.add(new Assignment(column, Optional.empty(), start.position()));
      } else {
        out.add(new Assignment(column, Optional.of(fragment(stop, true)), start.position()));
      }
    } while (acceptOp(","));
    return out;
  }

  private Statement merge() {
    Token merge = next();
    expectKeyword("into");
    QualifiedName table = qualifiedName();
    Optional<String> alias = alias(Set.of("using"));
    expectKeyword("using");
    Fragment source = fragment(Set.of("on"), false);
    expectKeyword("on");
    Fragment on = fragment(Set.of("when"), false);
    List<MergeClause> clauses = new ArrayList<>();
    while (peek().isKeyword("when")) {
      clauses.add(mergeClause());
    }
    if (clauses.isEmpty()) {
      throw unexpected(peek());
    }
    expectEnd();
    return new Merge(table, alias, source, on, clauses, Optional.empty());
  }

  private MergeClause mergeClause() {
    Token when = next();
    boolean matched = !acceptKeyword("not");
    expectKeyword("matched");
    if (acceptKeyword("by")) {
      if (acceptKeyword("source")) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "WHEN NOT MATCHED BY SOURCE is not supported",
            null, null, when.position(), null);
      }
      expectKeyword("target");
    }
    Optional<Fragment> condition = Optional.empty();
    if (acceptKeyword("and")) {
      condition = Optional.of(fragment(Set.of("then"), false));
    }
    expectKeyword("then");
    if (matched) {
      if (acceptKeyword("update")) {
        expectKeyword("set");
        return new MergeClause(true, condition, MergeAction.UPDATE, assignments(Set.of("when")), List.of(),
            List.of(), when.position());
      }
      if (acceptKeyword("delete")) {
        return new MergeClause(true, condition, MergeAction.DELETE, List.of(), List.of(), List.of(),
            when.position());
      }
    } else if (acceptKeyword("insert")) {
      List<String> columns = new ArrayList<>();
      if (acceptOp("(")) {
        do {
          columns.add(identifier());
        } while (acceptOp(","));
        expectOp(")");
      }
      if (acceptKeyword("default")) {
        expectKeyword("values");
        return new MergeClause(false, condition, MergeAction.INSERT, List.of(), columns, List.of(), when.position());
      }
      expectKeyword("values");
      expectOp("(");
      List<Fragment> values = new ArrayList<>();
      do {
        values.add(fragment(Set.of(), true));
      } while (acceptOp(","));
      expectOp(")");
      return new MergeClause(false, condition, MergeAction.INSERT, List.of(), columns, values, when.position());
    }
    expectKeyword("do");
    expectKeyword("nothing");
    return new MergeClause(matched, condition, MergeAction.NOTHING, List.of(), List.of(), List.of(),
        when.position());
  }

  private Statement truncate() {
    expectKeyword("truncate");
    acceptKeyword("table");
    acceptKeyword("only");
    List<QualifiedName> tables = new ArrayList<>();
    do {
      tables.add(qualifiedName());
    } while (acceptOp(","));
    while (acceptKeyword("restart") || acceptKeyword("continue")) {
      expectKeyword("identity");
    }
    if (!acceptKeyword("cascade")) {
      acceptKeyword("restrict");
    }
    expectEnd();
    return new Truncate(tables);
  }

  /** An optional table alias ({@code [AS] name}) that is not one of the keywords that may follow. */
  private Optional<String> alias(Set<String> following) {
    if (acceptKeyword("as")) {
      return Optional.of(identifier());
    }
    Token t = peek();
    if (t.type() == Token.Type.QUOTED_IDENT || (t.type() == Token.Type.IDENT && !following.contains(t.value()))) {
      return Optional.of(identifier());
    }
    return Optional.empty();
  }

  /**
   * The text from here to the first top-level stop keyword (or comma, or closing parenthesis, when
   * {@code list} is set), which must not be empty.
   */
  private Fragment fragment(Set<String> stop, boolean list) {
    Token start = peek();
    int depth = 0;
    int cases = 0; // CASE ... END nesting: its WHEN, THEN and ELSE are not the statement's
    Token last = null;
    while (true) {
      Token t = peek();
      if (t.type() == Token.Type.EOF || (depth == 0 && t.isOp(";") && peekAt(1).type() == Token.Type.EOF)) {
        break;
      }
      boolean top = depth == 0 && cases == 0;
      // IS [NOT] DISTINCT FROM: that FROM belongs to the expression
      boolean distinctFrom = t.isKeyword("from") && last != null && last.isKeyword("distinct");
      if (top && t.type() == Token.Type.IDENT && stop.contains(t.value()) && !distinctFrom) {
        break;
      }
      if (top && list && (t.isOp(",") || t.isOp(")"))) {
        break;
      }
      if (t.isOp("(") || t.isOp("[")) {
        depth++;
      } else if (t.isOp(")") || t.isOp("]")) {
        if (depth == 0) {
          throw unexpected(t);
        }
        depth--;
      } else if (t.isKeyword("case")) {
        cases++;
      } else if (t.isKeyword("end") && cases > 0) {
        cases--;
      }
      last = next();
    }
    if (last == null) {
      throw unexpected(start);
    }
    return new Fragment(sql.substring(start.start(), last.end()), start.start());
  }

  private static boolean startsQuery(Token t) {
    return t.isOp("(") || (t.type() == Token.Type.IDENT && QUERY_STARTS.contains(t.value()));
  }

  private Statement show() {
    expectKeyword("show");
    if (acceptKeyword("tables")) {
      Optional<QualifiedName> schema = Optional.empty();
      if (acceptKeyword("from") || acceptKeyword("in")) {
        schema = Optional.of(qualifiedName());
      }
      expectEnd();
      return new ShowTables(schema);
    }
    if (acceptKeyword("schemas")) {
      expectEnd();
      return new ShowSchemas();
    }
    if (peek().type() == Token.Type.EOF) {
      throw unexpected(peek());
    }
    throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "SHOW " + peek().text() + " is not supported",
        null, null, peek().position(), null);
  }

  // ------------------------------------------------------------------ types

  private SqlType type() {
    Token t = peek();
    if (!t.isIdentifier()) {
      throw unexpected(t);
    }
    next();
    String name = t.value();
    SqlType type = switch (name) {
      case "boolean", "bool" -> SqlType.BOOLEAN;
      case "smallint", "int2" -> SqlType.SMALLINT;
      case "integer", "int", "int4" -> SqlType.INTEGER;
      case "bigint", "int8", "long" -> SqlType.BIGINT;
      case "real", "float4" -> SqlType.REAL;
      case "float8" -> SqlType.DOUBLE;
      case "double" -> {
        acceptKeyword("precision");
        yield SqlType.DOUBLE;
      }
      case "float" -> {
        if (acceptOp("(")) {
          int p = intLiteral();
          expectOp(")");
          if (p < 1 || p > 53) {
            throw new FloeException(SqlState.INVALID_PARAMETER_VALUE,
                "precision for type float must be between 1 and 53", null, null, t.position(), null);
          }
          yield p <= 24 ? SqlType.REAL : SqlType.DOUBLE;
        }
        yield SqlType.DOUBLE;
      }
      case "decimal", "numeric", "dec" -> {
        if (acceptOp("(")) {
          int p = intLiteral();
          int s = 0;
          if (acceptOp(",")) {
            s = intLiteral();
          }
          expectOp(")");
          yield decimal(p, s, t);
        }
        yield SqlType.decimal(38, 9);
      }
      case "text", "string" -> SqlType.TEXT;
      case "varchar" -> varchar(t);
      case "character", "char", "bpchar", "nchar" -> {
        if (acceptKeyword("varying")) {
          yield varchar(t);
        }
        if (acceptOp("(")) {
          int n = intLiteral();
          expectOp(")");
          yield SqlType.character(n);
        }
        yield SqlType.character(1);
      }
      case "date" -> SqlType.DATE;
      case "time" -> {
        optionalPrecision(t);
        if (withTimeZone()) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
              "time with time zone cannot be stored in an Iceberg table", null, "Use time or timestamptz.",
              t.position(), null);
        }
        yield SqlType.TIME;
      }
      case "timetz" -> throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
          "time with time zone cannot be stored in an Iceberg table", null, "Use time or timestamptz.",
          t.position(), null);
      case "timestamp", "datetime" -> {
        optionalPrecision(t);
        yield withTimeZone() ? SqlType.TIMESTAMPTZ : SqlType.TIMESTAMP;
      }
      case "timestamptz" -> {
        optionalPrecision(t);
        yield SqlType.TIMESTAMPTZ;
      }
      case "uuid" -> SqlType.UUID;
      case "bytea", "binary", "blob", "varbinary" -> SqlType.BYTEA;
      default -> throw new FloeException(SqlState.UNDEFINED_OBJECT, "type \"" + t.text() + "\" does not exist",
          null, "Floe tables support boolean, smallint, integer, bigint, real, double precision, numeric(p,s), "
              + "varchar(n), text, char(n), date, time, timestamp, timestamptz, uuid and bytea.",
          t.position(), null);
    };
    if (peek().isOp("[") || peek().isKeyword("array")) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "array columns are not supported yet", null, null,
          peek().position(), null);
    }
    return type;
  }

  private SqlType decimal(int p, int s, Token at) {
    try {
      return SqlType.decimal(p, s);
    } catch (FloeException e) {
      throw e.withPosition(at.position());
    }
  }

  private SqlType varchar(Token at) {
    if (acceptOp("(")) {
      int n = intLiteral();
      expectOp(")");
      try {
        return SqlType.varchar(n);
      } catch (FloeException e) {
        throw e.withPosition(at.position());
      }
    }
    return new SqlType(SqlType.Kind.VARCHAR, 0, 0, "VARCHAR");
  }

  private void optionalPrecision(Token at) {
    if (acceptOp("(")) {
      int p = intLiteral();
      expectOp(")");
      if (p < 0 || p > 6) {
        throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "precision " + p + " must be between 0 and 6",
            null, null, at.position(), null);
      }
    }
  }

  private boolean withTimeZone() {
    if (peek().isKeyword("with") && peekAt(1).isKeyword("time")) {
      next();
      next();
      expectKeyword("zone");
      return true;
    }
    if (peek().isKeyword("without") && peekAt(1).isKeyword("time")) {
      next();
      next();
      expectKeyword("zone");
    }
    return false;
  }

  private int intLiteral() {
    Token t = next();
    if (t.type() != Token.Type.NUMBER || !t.value().matches("\\d+")) {
      throw unexpected(t);
    }
    try {
      return Integer.parseInt(t.value());
    } catch (NumberFormatException e) {
      throw new FloeException(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "value " + t.text() + " is out of range",
          null, null, t.position(), null);
    }
  }

  // ------------------------------------------------------------------ helpers

  private boolean ifNotExists() {
    if (peek().isKeyword("if")) {
      next();
      expectKeyword("not");
      expectKeyword("exists");
      return true;
    }
    return false;
  }

  private boolean ifExists() {
    if (peek().isKeyword("if")) {
      next();
      expectKeyword("exists");
      return true;
    }
    return false;
  }

  QualifiedName qualifiedName() {
    Token first = peek();
    List<String> parts = new ArrayList<>();
    parts.add(identifier());
    while (peek().isOp(".")) {
      next();
      parts.add(identifier());
    }
    return new QualifiedName(parts, first.position());
  }

  /** PostgreSQL's transaction statements (docs/transactions.md). */
  private Statement transactionControl() {
    String first = next().value();
    Ast.TransactionControl.Kind kind;
    String savepoint = null;
    boolean readOnly = false;
    boolean isolation = false;
    boolean accessMode = false;
    String level = null;
    switch (first) {
      case "begin", "start", "set" -> {
        if (!first.equals("begin")) {
          expectKeyword("transaction");
        } else if (!acceptKeyword("work")) {
          acceptKeyword("transaction");
        }
        kind = first.equals("set") ? Ast.TransactionControl.Kind.SET_MODES : Ast.TransactionControl.Kind.BEGIN;
        // modes: ISOLATION LEVEL ..., READ WRITE | READ ONLY, [NOT] DEFERRABLE, optionally comma-separated
        while (peek().type() != Token.Type.EOF && !peek().isOp(";")) {
          if (acceptKeyword("isolation")) {
            isolation = true;
            expectKeyword("level");
            if (acceptKeyword("serializable")) {
              level = "serializable";
              continue;
            }
            if (acceptKeyword("repeatable")) {
              expectKeyword("read");
              level = "repeatable read";
            } else {
              expectKeyword("read");
              Token which = next();
              if (!which.isKeyword("committed") && !which.isKeyword("uncommitted")) {
                throw unexpected(which);
              }
              level = "read " + which.value();
            }
          } else if (acceptKeyword("read")) {
            accessMode = true;
            if (acceptKeyword("only")) {
              readOnly = true;
            } else {
              expectKeyword("write");
              readOnly = false;
            }
          } else if (acceptKeyword("not")) {
            expectKeyword("deferrable");
          } else if (!acceptKeyword("deferrable") && !acceptOp(",")) {
            throw unexpected(peek());
          }
        }
      }
      case "commit", "end" -> {
        if (!acceptKeyword("work")) {
          acceptKeyword("transaction");
        }
        kind = Ast.TransactionControl.Kind.COMMIT;
      }
      case "rollback", "abort" -> {
        if (!acceptKeyword("work")) {
          acceptKeyword("transaction");
        }
        if (first.equals("rollback") && acceptKeyword("to")) {
          acceptKeyword("savepoint");
          savepoint = identifier();
          kind = Ast.TransactionControl.Kind.ROLLBACK_TO;
        } else {
          kind = Ast.TransactionControl.Kind.ROLLBACK;
        }
      }
      case "savepoint" -> {
        savepoint = identifier();
        kind = Ast.TransactionControl.Kind.SAVEPOINT;
      }
      default -> { // release
        acceptKeyword("savepoint");
        savepoint = identifier();
        kind = Ast.TransactionControl.Kind.RELEASE;
      }
    }
    expectEnd();
    if (kind == Ast.TransactionControl.Kind.SET_MODES && !isolation && !accessMode) {
      throw unexpected(peek()); // SET TRANSACTION needs a mode
    }
    return new Ast.TransactionControl(kind, savepoint, readOnly, isolation, accessMode, level, first.equals("start"));
  }

  private String identifier() {
    Token t = next();
    if (!t.isIdentifier()) {
      throw unexpected(t);
    }
    return t.value();
  }

  private Token peek() {
    return tokens.get(i);
  }

  private Token peekAt(int ahead) {
    return tokens.get(Math.min(i + ahead, tokens.size() - 1));
  }

  private Token next() {
    Token t = tokens.get(i);
    if (t.type() != Token.Type.EOF) {
      i++;
    }
    return t;
  }

  private boolean acceptKeyword(String keyword) {
    if (peek().isKeyword(keyword)) {
      next();
      return true;
    }
    return false;
  }

  private void expectKeyword(String keyword) {
    Token t = next();
    if (!t.isKeyword(keyword)) {
      throw unexpected(t);
    }
  }

  private boolean acceptOp(String op) {
    if (peek().isOp(op)) {
      next();
      return true;
    }
    return false;
  }

  private void expectOp(String op) {
    Token t = next();
    if (!t.isOp(op)) {
      throw unexpected(t);
    }
  }

  private void expectEnd() {
    Token t = peek();
    if (t.isOp(";") && peekAt(1).type() == Token.Type.EOF) {
      return;
    }
    if (t.type() != Token.Type.EOF) {
      throw unexpected(t);
    }
  }

  private static FloeException unexpected(Token t) {
    if (t.type() == Token.Type.EOF) {
      return FloeException.syntax("syntax error at end of input", t.position());
    }
    return FloeException.syntax("syntax error at or near \"" + t.text() + "\"", t.position());
  }
}
