package dev.floe.sql;

import static dev.floe.sql.TokenCursor.unexpected;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.SqlType;
import dev.floe.sql.Ast.AddColumn;
import dev.floe.sql.Ast.AlterAction;
import dev.floe.sql.Ast.AlterColumnType;
import dev.floe.sql.Ast.AlterTable;
import dev.floe.sql.Ast.ColumnDef;
import dev.floe.sql.Ast.CreateSchema;
import dev.floe.sql.Ast.CreateSequence;
import dev.floe.sql.Ast.CreateTable;
import dev.floe.sql.Ast.DropColumn;
import dev.floe.sql.Ast.DropNotNull;
import dev.floe.sql.Ast.DropSchema;
import dev.floe.sql.Ast.DropSequence;
import dev.floe.sql.Ast.DropTable;
import dev.floe.sql.Ast.PartitionField;
import dev.floe.sql.Ast.PropertyValue;
import dev.floe.sql.Ast.Query;
import dev.floe.sql.Ast.RenameColumn;
import dev.floe.sql.Ast.RenameTable;
import dev.floe.sql.Ast.SetProperties;
import dev.floe.sql.Ast.Statement;
import dev.floe.sql.Ast.UnsetProperties;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The data definition statements: CREATE, ALTER and DROP of tables, schemas and sequences, with column
 * definitions (types, defaults, NOT NULL, identity and serial columns, the primary key), {@code USING iceberg},
 * partitioning ({@code PARTITIONED BY} and its transforms), table properties ({@code WITH (...)},
 * {@code TBLPROPERTIES}, {@code SET/UNSET PROPERTIES}) and CREATE TABLE AS; what Floe does not support is
 * refused with PostgreSQL's 0A000 at the token that asks for it.
 */
final class DdlParser {
  private final TokenCursor in;
  private final TypeNameParser types;
  private final ConstraintParser constraints;
  private final ObjectDdlParser objects;

  DdlParser(TokenCursor in) {
    this.in = in;
    this.types = new TypeNameParser(in);
    this.constraints = new ConstraintParser(in);
    this.objects = new ObjectDdlParser(in, types, this);
  }

  /** What may follow CREATE in PostgreSQL and Floe does not create (0A000, not a syntax error). */
  private static final Set<String> UNSUPPORTED_CREATE = Set.of("or", "temp", "temporary", "view",
      "materialized", "function", "procedure", "trigger", "extension", "type", "domain", "role", "user", "database",
      "rule", "policy", "aggregate", "operator", "publication", "subscription", "server", "foreign", "cast",
      "collation", "conversion", "language", "event", "statistics", "tablespace", "text", "transform", "access",
      "group", "unlogged", "recursive", "constraint", "default", "local", "global");
  private static final Set<String> TWO_WORD_KINDS = Set.of("materialized", "foreign", "event", "text", "access",
      "or", "constraint", "default", "local", "global", "recursive");

  /** CREATE SCHEMA, SEQUENCE or TABLE, from its first keyword; other CREATEs are refused. */
  Statement create() {
    in.expectKeyword("create");
    if (in.acceptKeyword("schema")) {
      boolean ifNotExists = ifNotExists();
      QualifiedName name = in.qualifiedName();
      if (in.acceptKeyword("authorization")) {
        in.identifier(); // Floe's schemas have no owner (pg_dump writes one)
      }
      in.expectEnd();
      return new CreateSchema(name, ifNotExists);
    }
    if (in.acceptKeyword("sequence")) {
      return objects.createSequence();
    }
    if (in.peek().isKeyword("index") || in.peek().isKeyword("unique") && in.peekAt(1).isKeyword("index")) {
      return objects.createIndex();
    }
    if (in.peek().isKeyword("view") || in.peek().isKeyword("or") && in.peekAt(1).isKeyword("replace")
        && in.peekAt(2).isKeyword("view")) {
      return objects.createView();
    }
    // CREATE [GLOBAL | LOCAL] {TEMP | TEMPORARY} TABLE: the session's own table
    int save = in.index();
    if (in.peek().isKeyword("global") || in.peek().isKeyword("local")) {
      in.next();
    }
    if ((in.peek().isKeyword("temp") || in.peek().isKeyword("temporary")) && in.peekAt(1).isKeyword("table")) {
      in.next();
      in.next();
      temporary = true;
      return createTable();
    }
    in.seek(save);
    Token kind = in.peek();
    if (kind.type() == Token.Type.IDENT && UNSUPPORTED_CREATE.contains(kind.value())) {
      String what = kind.text().toUpperCase(java.util.Locale.ROOT);
      if (TWO_WORD_KINDS.contains(kind.value()) && in.peekAt(1).type() == Token.Type.IDENT) {
        what += " " + in.peekAt(1).text().toUpperCase(java.util.Locale.ROOT);
      }
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "CREATE " + what + " is not supported",
          kind.position());
    }
    in.expectKeyword("table");
    return createTable();
  }


  /** Whether the CREATE TABLE being parsed is CREATE TEMP TABLE. */
  private boolean temporary;

  /** What may follow ALTER or DROP in PostgreSQL and Floe does not have (0A000, not a syntax error). */
  private static final Set<String> OTHER_KINDS = Set.of("type", "function", "procedure", "routine", "trigger",
      "extension", "domain", "role", "user", "group", "database", "rule", "policy", "aggregate", "operator",
      "publication", "subscription", "server", "foreign", "cast", "collation", "conversion", "language", "event",
      "statistics", "tablespace", "text", "transform", "access", "materialized", "owned", "default", "large",
      "system");

  /** Refuses ALTER or DROP of a kind of object Floe does not have, with PostgreSQL's 0A000 at its word. */
  private void refuseOtherKinds(String verb) {
    Token kind = in.peek();
    boolean alterOnly = kind.isKeyword("view") || kind.isKeyword("index") || kind.isKeyword("schema");
    if (kind.type() == Token.Type.IDENT && (OTHER_KINDS.contains(kind.value()) || verb.equals("ALTER") && alterOnly)) {
      String what = kind.text().toUpperCase(java.util.Locale.ROOT);
      if (TWO_WORD_KINDS.contains(kind.value()) && in.peekAt(1).type() == Token.Type.IDENT) {
        what += " " + in.peekAt(1).text().toUpperCase(java.util.Locale.ROOT);
      }
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, verb + " " + what + " is not supported",
          kind.position());
    }
  }
  /** Where a table constraint PRIMARY KEY (...) is, for its errors; 0 if the key is a column's. */
  private int primaryKeyPosition;
  private String onCommit = "PRESERVE ROWS";

  private Statement createTable() {
    boolean ifNotExists = ifNotExists();
    QualifiedName name = in.qualifiedName();
    creating = name.last();
    List<ColumnDef> columns = new ArrayList<>();
    List<String> primaryKey = new ArrayList<>();
    List<Ast.TableConstraint> tableConstraints = new ArrayList<>();
    List<String> ctasColumns = new ArrayList<>();
    if (in.acceptOp("(")) {
      boolean onlyNames = true;
      int save = in.index();
      // CREATE TABLE t (a, b) AS SELECT ... names the query's columns.
      do {
        if (!in.peek().isIdentifier()) {
          onlyNames = false;
          break;
        }
        in.next();
      } while (in.acceptOp(","));
      onlyNames = onlyNames && in.peek().isOp(")");
      in.seek(save);
      if (onlyNames) {
        do {
          ctasColumns.add(in.identifier());
        } while (in.acceptOp(","));
      } else {
        do {
          tableElement(columns, primaryKey, tableConstraints);
        } while (in.acceptOp(","));
      }
      in.expectOp(")");
    }
    acceptUsingIceberg();
    List<PartitionField> partitioning = new ArrayList<>();
    Map<String, PropertyValue> properties = new LinkedHashMap<>();
    while (true) {
      if (in.acceptKeyword("partitioned")) {
        in.expectKeyword("by");
        in.expectOp("(");
        do {
          partitioning.add(partitionField());
        } while (in.acceptOp(","));
        in.expectOp(")");
      } else if (in.peek().isKeyword("with") && in.peekAt(1).isOp("(")) {
        in.next();
        properties.putAll(properties());
      } else if (in.acceptKeyword("tblproperties")) {
        properties.putAll(properties());
      } else if (temporary && in.peek().isKeyword("on") && in.peekAt(1).isKeyword("commit")) {
        in.next();
        in.next();
        Token what = in.next();
        if (what.isKeyword("drop")) {
          onCommit = "DROP";
        } else if (what.isKeyword("delete") || what.isKeyword("preserve")) {
          in.expectKeyword("rows");
          onCommit = what.value().toUpperCase(java.util.Locale.ROOT) + " ROWS";
        } else {
          throw unexpected(what);
        }
      } else {
        break;
      }
    }
    Optional<Query> asQuery = Optional.empty();
    boolean withData = true;
    if (in.acceptKeyword("as")) {
      Token start = in.peek();
      int end = in.sql().length();
      // Trailing WITH [NO] DATA belongs to CREATE TABLE AS, not to the query.
      List<Token> tokens = in.tokens();
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
      asQuery = Optional.of(new Query(in.sql().substring(start.start(), end), start.start()));
      in.seek(n - 1);
    } else {
      if (!ctasColumns.isEmpty() || columns.isEmpty()) {
        throw new FloeException(SqlState.INVALID_TABLE_DEFINITION,
            "CREATE TABLE needs column definitions (name and type) or AS query", name.position());
      }
    }
    in.expectEnd();
    return new CreateTable(name, ifNotExists, columns, ctasColumns, partitioning, primaryKey, properties, asQuery,
        withData, tableConstraints, temporary ? Optional.of(new Ast.TempTable(onCommit)) : Optional.empty(),
        primaryKeyPosition);
  }

  private void acceptUsingIceberg() {
    if (in.peek().isKeyword("using")) {
      Token using = in.next();
      Token format = in.next();
      if (!format.isIdentifier() || !format.value().equalsIgnoreCase("iceberg")) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "tables are Iceberg tables; USING "
            + format.text() + " is not supported", null, null, using.position(), null);
      }
    }
  }

  /** The table a CREATE TABLE being parsed names, for its errors. */
  private String creating = "";

  /** PostgreSQL's error for a second PRIMARY KEY in a CREATE TABLE, at the token {@code at}. */
  private FloeException multiplePrimaryKeys(Token at) {
    return new FloeException(SqlState.INVALID_TABLE_DEFINITION, "multiple primary keys for table \"" + creating
        + "\" are not allowed", at.position());
  }

  private void tableElement(List<ColumnDef> columns, List<String> primaryKey,
      List<Ast.TableConstraint> tableConstraints) {
    int position = in.peek().position();
    Optional<String> name = Optional.empty();
    if (in.peek().isKeyword("constraint")) {
      in.next();
      name = Optional.of(in.identifier());
    }
    if (in.peek().isKeyword("primary") && in.peekAt(1).isKeyword("key")) {
      if (!primaryKey.isEmpty()) {
        throw multiplePrimaryKeys(in.peek());
      }
      primaryKeyPosition = in.peek().position();
      in.next();
      in.next();
      in.expectOp("(");
      do {
        primaryKey.add(in.identifier());
      } while (in.acceptOp(","));
      in.expectOp(")");
      return;
    }
    if (constraints.atTableConstraint()) {
      tableConstraints.add(constraints.tableConstraint(name, position));
      return;
    }
    if (name.isPresent()) {
      throw unexpected(in.peek());
    }
    columns.add(columnDef(primaryKey, tableConstraints));
  }

  private ColumnDef columnDef(List<String> primaryKey, List<Ast.TableConstraint> columnConstraints) {
    Token nameToken = in.peek();
    String name = in.identifier();
    Optional<String> identity = Optional.empty();
    SqlType type;
    boolean notNull = false;
    // serial types: an integer column whose default is the next value of its own sequence
    SqlType serial = switch (in.peek().type() == Token.Type.IDENT ? in.peek().value() : "") {
      case "serial", "serial4" -> SqlType.INTEGER;
      case "bigserial", "serial8" -> SqlType.BIGINT;
      case "smallserial", "serial2" -> SqlType.SMALLINT;
      default -> null;
    };
    if (serial != null) {
      in.next();
      type = serial;
      identity = Optional.of("serial");
      notNull = true;
    } else {
      type = types.type();
    }
    Optional<String> defaultSql = Optional.empty();
    while (true) {
      if (in.peek().isKeyword("generated") && in.peekAt(1).isKeyword("always") || in.peek().isKeyword("generated")
          && in.peekAt(1).isKeyword("by")) {
        in.next();
        if (in.acceptKeyword("always")) {
          identity = Optional.of("always");
        } else {
          in.next();
          in.expectKeyword("default");
          identity = Optional.of("by default");
        }
        in.expectKeyword("as");
        if (in.peek().isOp("(")) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "generated columns are not supported", null,
              "Compute the value in the INSERT, or in a view of the query.", in.peek().position(), null);
        }
        in.expectKeyword("identity");
        if (in.acceptOp("(")) {
          int depth = 1; // sequence options (START WITH, INCREMENT BY, ...) are accepted, not applied
          while (depth > 0) {
            Token t = in.next();
            if (t.type() == Token.Type.EOF) {
              throw unexpected(t);
            }
            depth += t.isOp("(") ? 1 : t.isOp(")") ? -1 : 0;
          }
        }
        notNull = true;
        continue;
      }
      if (in.acceptKeyword("not")) {
        in.expectKeyword("null");
        notNull = true;
      } else if (in.acceptKeyword("null")) {
        notNull = false;
      } else if (in.acceptKeyword("default")) {
        defaultSql = Optional.of(expressionText(Set.of("not", "null", "primary", "constraint", "references",
            "check", "unique", "default", "generated")));
      } else if (in.peek().isKeyword("primary")) {
        if (!primaryKey.isEmpty()) {
          throw multiplePrimaryKeys(in.peek());
        }
        in.next();
        in.expectKeyword("key");
        primaryKey.add(name);
        notNull = true;
      } else if (in.peek().isKeyword("constraint")) {
        int position = in.next().position();
        Optional<String> constraintName = Optional.of(in.identifier());
        if (constraints.atColumnConstraint()) {
          columnConstraints.add(constraints.columnConstraint(constraintName, name, position));
        }
      } else if (constraints.atColumnConstraint()) {
        columnConstraints.add(constraints.columnConstraint(Optional.empty(), name, in.peek().position()));
      } else if (in.peek().isKeyword("generated") || in.peek().isKeyword("collate")) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
            in.peek().text().toUpperCase() + " is not supported in column definitions", in.peek().position());
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
    Token start = in.peek();
    Token last = null;
    while (true) {
      Token t = in.peek();
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
      last = in.next();
    }
    if (last == null) {
      throw unexpected(start);
    }
    return in.sql().substring(start.start(), last.end());
  }

  /** One partition field: a column, or a transform of one ({@code bucket(16, id)}, {@code day(ts)}, ...). */
  PartitionField partitionField() {
    Token start = in.peek();
    String name = in.identifier();
    if (!in.acceptOp("(")) {
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
      Token t = in.peek();
      if (t.type() == Token.Type.NUMBER) {
        in.next();
        try {
          argument = Integer.parseInt(t.value());
        } catch (NumberFormatException e) {
          throw new FloeException(SqlState.INVALID_TABLE_DEFINITION, "invalid transform argument " + t.text(), t.position());
        }
      } else {
        column = in.identifier();
      }
    } while (in.acceptOp(","));
    in.expectOp(")");
    if (column == null) {
      throw new FloeException(SqlState.INVALID_TABLE_DEFINITION,
          "partition transform " + transform + " needs a column", start.position());
    }
    boolean needsArgument = transform.equals("bucket") || transform.equals("truncate");
    if (needsArgument != (argument != null)) {
      throw new FloeException(SqlState.INVALID_TABLE_DEFINITION,
          needsArgument ? "partition transform " + transform + " needs a width, e.g. " + transform + "(16, "
              + column + ")" : "partition transform " + transform + " takes no width", start.position());
    }
    if (argument != null && argument <= 0) {
      throw new FloeException(SqlState.INVALID_TABLE_DEFINITION,
          "partition transform " + transform + " needs a positive width, not " + argument, start.position());
    }
    return new PartitionField(transform, column, Optional.ofNullable(argument), start.position());
  }

  Map<String, PropertyValue> properties() {
    in.expectOp("(");
    Map<String, PropertyValue> props = new LinkedHashMap<>();
    if (in.acceptOp(")")) {
      return props;
    }
    do {
      Token keyToken = in.peek();
      String key = propertyKey();
      in.expectOp("=");
      if (props.put(key, propertyValue()) != null) {
        throw new FloeException(SqlState.SYNTAX_ERROR, "property \"" + key + "\" is given twice", keyToken.position());
      }
    } while (in.acceptOp(","));
    in.expectOp(")");
    return props;
  }

  private String propertyKey() {
    Token t = in.next();
    if (t.type() == Token.Type.STRING) {
      return t.value();
    }
    if (!t.isIdentifier()) {
      throw unexpected(t);
    }
    StringBuilder key = new StringBuilder(t.value());
    while (in.peek().isOp(".")) {
      in.next();
      Token part = in.next();
      if (!part.isIdentifier()) {
        throw unexpected(part);
      }
      key.append('.').append(part.value());
    }
    return key.toString();
  }

  private PropertyValue propertyValue() {
    Token t = in.next();
    if (t.isKeyword("array") && in.peek().isOp("[")) {
      in.next();
      List<String> values = new ArrayList<>();
      if (!in.peek().isOp("]")) {
        do {
          Token v = in.next();
          if (v.type() != Token.Type.STRING) {
            throw new FloeException(SqlState.SYNTAX_ERROR, "ARRAY property values must be string literals", v.position());
          }
          values.add(v.value());
        } while (in.acceptOp(","));
      }
      in.expectOp("]");
      return PropertyValue.ofArray(values, t.position());
    }
    if (t.isOp("-") && in.peek().type() == Token.Type.NUMBER) {
      return PropertyValue.of("-" + in.next().value(), t.position());
    }
    return switch (t.type()) {
      case STRING, NUMBER, IDENT, QUOTED_IDENT -> PropertyValue.of(t.value(), t.position());
      default -> throw unexpected(t);
    };
  }

  /** DROP SCHEMA, SEQUENCE or TABLE, from its first keyword. */
  Statement drop() {
    in.expectKeyword("drop");
    if (in.acceptKeyword("schema")) {
      boolean ifExists = ifExists();
      List<QualifiedName> names = new ArrayList<>();
      do {
        names.add(in.qualifiedName());
      } while (in.acceptOp(","));
      boolean cascade = false;
      if (in.acceptKeyword("cascade")) {
        cascade = true;
      } else {
        in.acceptKeyword("restrict");
      }
      in.expectEnd();
      return new DropSchema(names, ifExists, cascade);
    }
    if (in.acceptKeyword("index")) {
      in.acceptKeyword("concurrently");
      boolean ifExists = ifExists();
      return new Ast.DropIndex(dropNames(), ifExists);
    }
    if (in.acceptKeyword("sequence")) {
      boolean ifExists = ifExists();
      return new DropSequence(dropNames(), ifExists);
    }
    if (in.acceptKeyword("view")) {
      boolean ifExists = ifExists();
      return new Ast.DropView(dropNames(), ifExists);
    }
    refuseOtherKinds("DROP");
    in.expectKeyword("table");
    boolean ifExists = ifExists();
    List<QualifiedName> names = new ArrayList<>();
    do {
      names.add(in.qualifiedName());
    } while (in.acceptOp(","));
    boolean purge = false;
    boolean cascade = false;
    while (true) {
      if (in.acceptKeyword("purge")) {
        purge = true;
      } else if (in.acceptKeyword("cascade")) {
        cascade = true;
      } else if (!in.acceptKeyword("restrict")) {
        break;
      }
    }
    in.expectEnd();
    return new DropTable(names, ifExists, purge, cascade);
  }

  /** The names a DROP INDEX or DROP SEQUENCE lists, to the end, with its optional CASCADE or RESTRICT. */
  private List<QualifiedName> dropNames() {
    List<QualifiedName> names = new ArrayList<>();
    do {
      names.add(in.qualifiedName());
    } while (in.acceptOp(","));
    if (!in.acceptKeyword("cascade")) {
      in.acceptKeyword("restrict");
    }
    in.expectEnd();
    return names;
  }

  /** ALTER TABLE with its comma-separated actions, from its first keyword. */
  Statement alter() {
    in.expectKeyword("alter");
    if (in.acceptKeyword("sequence")) {
      return objects.alterSequence();
    }
    refuseOtherKinds("ALTER");
    in.expectKeyword("table");
    boolean ifExists = ifExists();
    QualifiedName name = in.qualifiedName();
    List<AlterAction> actions = new ArrayList<>();
    if (in.acceptKeyword("execute")) {
      actions.add(execute());
      in.expectEnd();
      return new AlterTable(name, ifExists, actions);
    }
    do {
      actions.add(alterAction());
    } while (in.acceptOp(","));
    in.expectEnd();
    return new AlterTable(name, ifExists, actions);
  }

  /** {@code procedure([name =>] constant, ...)} after EXECUTE. */
  private Ast.Execute execute() {
    Token procedure = in.peek();
    String name = in.identifier();
    List<Ast.ProcedureArgument> arguments = new ArrayList<>();
    if (!in.peek().isOp("(")) {
      return new Ast.Execute(name, arguments, procedure.position()); // Trino's EXECUTE optimize: no arguments
    }
    in.expectOp("(");
    if (!in.acceptOp(")")) {
      do {
        Token at = in.peek();
        String argument = null;
        if (in.peekAt(1).isOp("=>")) {
          argument = in.identifier();
          in.expectOp("=>");
        }
        boolean negative = in.acceptOp("-");
        Token value = in.next();
        if (value.type() == Token.Type.NUMBER) {
          arguments.add(new Ast.ProcedureArgument(argument, (negative ? "-" : "") + value.text(), false,
              at.position()));
        } else if (value.type() == Token.Type.STRING && !negative) {
          arguments.add(new Ast.ProcedureArgument(argument, value.value(), true, at.position()));
        } else if ((value.isKeyword("true") || value.isKeyword("false")) && !negative) {
          // a boolean is given to the procedure as its text, as the string 'true' would be
          arguments.add(new Ast.ProcedureArgument(argument, value.value(), true, at.position()));
        } else {
          throw unexpected(value);
        }
      } while (in.acceptOp(","));
      in.expectOp(")");
    }
    return new Ast.Execute(name, arguments, procedure.position());
  }

  private AlterAction alterAction() {
    Token t = in.peek();
    if (in.acceptKeyword("add")) {
      int position = in.peek().position();
      Optional<String> constraintName = Optional.empty();
      if (in.acceptKeyword("constraint")) {
        constraintName = Optional.of(in.identifier());
      }
      if (constraints.atTableConstraint()) {
        return new Ast.AddConstraint(constraints.tableConstraint(constraintName, position));
      }
      if (constraintName.isPresent() || in.peek().isKeyword("primary")) {
        if (in.peek().isKeyword("primary")) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot add a PRIMARY KEY to an existing table",
              null, "Declare the primary key in CREATE TABLE.", in.peek().position(), null);
        }
        throw unexpected(in.peek());
      }
      in.acceptKeyword("column");
      boolean ifNotExists = ifNotExists();
      List<String> pk = new ArrayList<>();
      List<Ast.TableConstraint> columnConstraints = new ArrayList<>();
      ColumnDef def = columnDef(pk, columnConstraints);
      if (!pk.isEmpty()) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot add a PRIMARY KEY column", def.position());
      }
      if (!columnConstraints.isEmpty()) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "constraints on a column added by ALTER TABLE are "
            + "not supported", null, "Add the column, then ALTER TABLE ... ADD CONSTRAINT.",
            columnConstraints.get(0).position(), null);
      }
      return new AddColumn(def, ifNotExists);
    }
    if (in.peek().isKeyword("drop") && in.peekAt(1).isKeyword("constraint")) {
      in.next();
      in.next();
      boolean ifExists = ifExists();
      Token at = in.peek();
      String constraint = in.identifier();
      boolean cascade = in.acceptKeyword("cascade");
      if (!cascade) {
        in.acceptKeyword("restrict");
      }
      return new Ast.DropConstraint(constraint, ifExists, cascade, at.position());
    }
    if (in.acceptKeyword("drop")) {
      in.acceptKeyword("column");
      boolean ifExists = ifExists();
      Token col = in.peek();
      String name = in.identifier();
      in.acceptKeyword("cascade");
      in.acceptKeyword("restrict");
      return new DropColumn(name, ifExists, col.position());
    }
    if (in.peek().isKeyword("owner") && in.peekAt(1).isKeyword("to")) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "ALTER TABLE ... OWNER TO is not supported", null,
          "Floe's tables have no owner: every signed-in user may use them.", in.peek().position(), null);
    }
    if (in.acceptKeyword("rename")) {
      if (in.acceptKeyword("to")) {
        return new RenameTable(in.qualifiedName());
      }
      in.acceptKeyword("column");
      Token col = in.peek();
      String from = in.identifier();
      in.expectKeyword("to");
      String to = in.identifier();
      return new RenameColumn(from, to, col.position());
    }
    if (in.acceptKeyword("alter")) {
      in.acceptKeyword("column");
      Token col = in.peek();
      String name = in.identifier();
      if (in.peek().isKeyword("drop") && in.peekAt(1).isKeyword("default")) {
        in.next();
        in.next();
        return new Ast.SetDefault(name, Optional.empty(), col.position());
      }
      if (in.peek().isKeyword("set") && in.peekAt(1).isKeyword("default")) {
        in.next();
        in.next();
        return new Ast.SetDefault(name, Optional.of(expressionText(Set.of())), col.position());
      }
      if (in.acceptKeyword("drop")) {
        in.expectKeyword("not");
        in.expectKeyword("null");
        return new DropNotNull(name, col.position());
      }
      if (in.peek().isKeyword("set") && in.peekAt(1).isKeyword("not")) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
            "cannot make an existing Iceberg column NOT NULL", col.position());
      }
      if (in.acceptKeyword("set")) {
        in.expectKeyword("data");
      }
      in.expectKeyword("type");
      SqlType type = types.type();
      if (in.peek().isKeyword("using")) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "ALTER COLUMN TYPE ... USING is not supported", in.peek().position());
      }
      return new AlterColumnType(name, type, col.position());
    }
    if (in.acceptKeyword("set")) {
      if (in.acceptKeyword("properties")) {
        Map<String, PropertyValue> props = new LinkedHashMap<>();
        do {
          String key = propertyKey();
          in.expectOp("=");
          props.put(key, propertyValue());
        } while (in.peek().isOp(",") && !in.peekAt(1).isKeyword("set") && in.acceptOp(","));
        return new SetProperties(props);
      }
      in.acceptKeyword("tblproperties");
      return new SetProperties(properties());
    }
    if (in.acceptKeyword("reset") || in.acceptKeyword("unset")) {
      in.acceptKeyword("properties");
      in.acceptKeyword("tblproperties");
      boolean ifExists = ifExists();
      List<String> keys = new ArrayList<>();
      in.expectOp("(");
      do {
        keys.add(propertyKey());
      } while (in.acceptOp(","));
      in.expectOp(")");
      return new UnsetProperties(keys, ifExists);
    }
    throw unexpected(t);
  }

  boolean ifNotExists() {
    if (in.peek().isKeyword("if")) {
      in.next();
      in.expectKeyword("not");
      in.expectKeyword("exists");
      return true;
    }
    return false;
  }

  boolean ifExists() {
    if (in.peek().isKeyword("if")) {
      in.next();
      in.expectKeyword("exists");
      return true;
    }
    return false;
  }
}
