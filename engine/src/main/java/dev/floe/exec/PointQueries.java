package dev.floe.exec;

import dev.floe.Column;
import dev.floe.SqlType;
import dev.floe.read.PointReader;
import dev.floe.read.ScanPlan;
import dev.floe.sql.Lexer;
import dev.floe.sql.QueryBinder;
import dev.floe.sql.Token;
import dev.floe.types.TypeMapping;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.types.Type;

/**
 * Point queries read in the JVM: {@code SELECT <columns> FROM <table> WHERE <column> = <constant>
 * [LIMIT n]} on a table whose files {@link PointReader} can read, where the constant is an integer, a
 * string or a uuid of the column's own type. The table is resolved and planned exactly as for any
 * query (the same snapshot, transaction block and pruning by partition and column bounds); only the
 * reading of the few row groups that may hold the key is Floe's own instead of DuckDB's. Anything else
 * (another shape, a tail with unsealed rows, equality deletes, a file written otherwise, a lookup that
 * would read many row groups) is left to the general path, which gives the same rows
 * (docs/decisions/0005-point-reads.md).
 */
final class PointQueries {
  private PointQueries() {}

  /** A point query is short; longer statements are not tokenized a second time to find out. */
  private static final int MAX_TEXT = 4096;

  /** Point queries answered here (tests check that the path they compare was taken). */
  static final java.util.concurrent.atomic.AtomicLong served = new java.util.concurrent.atomic.AtomicLong();
  /** Table references read as the rows a point read found (Relations.TableRelation). */
  static final java.util.concurrent.atomic.AtomicLong relations = new java.util.concurrent.atomic.AtomicLong();

  /** A recognized statement: the table, the output columns and the key predicate. */
  record Shape(List<String> table, int tablePosition, List<Item> items, boolean qualifiedStar, String keyColumn,
      Constant key, long limit) {}

  /** An output column: a table column by name ({@code null}: every column), with its output name. */
  record Item(String column, String name) {}

  /**
   * A constant as written: {@code text} is a number's digits or a string's value; {@code cast} the type
   * it is cast to, or null.
   */
  record Constant(Token.Type type, String text, String cast) {}

  /** The result of {@code q} read in the JVM, or empty when the general path must run it. */
  static Optional<dev.floe.Result> run(SessionContext session, String sql, Relations relations) {
    if (!session.pointReads() || sql.length() > MAX_TEXT) {
      return Optional.empty();
    }
    Shape shape = parse(sql);
    if (shape == null) {
      return Optional.empty();
    }
    Optional<QueryBinder.Relation> resolved = relations.resolve(shape.table(), Optional.empty(),
        shape.tablePosition());
    if (resolved.isEmpty() || !(resolved.get() instanceof Relations.TableRelation r) || r.rowIds || r.historic
        || r.published.isPresent()) {
      return Optional.empty();
    }
    // a keyed tail's unsealed versions are looked up in the JVM too; an append-only tail's are not
    Optional<dev.floe.tail.Pin> unsealed = r.unsealed.filter(p -> !p.isEmpty());
    if (unsealed.isPresent() && !unsealed.get().keyed()) {
      return Optional.empty();
    }
    List<Column> tableColumns = r.columns();
    Column key = column(tableColumns, shape.keyColumn());
    if (key == null) {
      return Optional.empty();
    }
    Type keyType = r.schema.findField(key.fieldId()).type();
    Object value = value(shape.key(), key.type().kind());
    if (value == null || !PointReader.readable(keyType, key.type().kind()) || !PointReader.keyable(key.type().kind())) {
      return Optional.empty();
    }
    List<Column> selected = new ArrayList<>();
    List<String> names = new ArrayList<>();
    for (Item item : shape.items()) {
      if (item.column() == null) {
        selected.addAll(tableColumns);
        tableColumns.forEach(c -> names.add(c.name()));
        continue;
      }
      Column c = column(tableColumns, item.column());
      if (c == null) {
        return Optional.empty();
      }
      selected.add(c);
      names.add(item.name() != null ? item.name() : c.name());
    }
    List<PointReader.Field> fields = new ArrayList<>();
    for (Column c : selected) {
      Type t = r.schema.findField(c.fieldId()).type();
      if (!PointReader.readable(t, c.type().kind())) {
        return Optional.empty();
      }
      fields.add(new PointReader.Field(c.fieldId(), t, c.type().kind()));
    }
    PointReader.Field keyField = new PointReader.Field(key.fieldId(), keyType, key.type().kind());
    if (unsealed.isPresent()) {
      if (r.schema.identifierFieldIds().size() != 1 || !r.schema.identifierFieldIds().contains(key.fieldId())) {
        return Optional.empty(); // not a lookup of the key: the newest versions are DuckDB's to pick
      }
      Optional<dev.floe.tail.Pin.Version> version = unsealed.get().version(value);
      if (version.isPresent()) {
        List<Object[]> rows = new ArrayList<>();
        if (!version.get().deleted() && shape.limit() != 0) {
          rows.add(versionValues(unsealed.get(), version.get(), selected, fields));
        }
        return Optional.of(result(session, r, shape, selected, names, rows));
      }
    }

    // a uuid key is pruned by the row groups' own statistics only (ScanPlan.prunesBy)
    ScanPlan plan = ScanPlan.plan(r.planner, r.table, r.snapshot,
        ScanPlan.prunesBy(keyType) ? Expressions.equal(key.name(), value) : Expressions.alwaysTrue(), false);
    Optional<List<PointReader.Hit>> hits = PointReader.scan(plan, r.files, keyField, value, fields, shape.limit());
    if (hits.isEmpty()) {
      return Optional.empty();
    }
    List<Object[]> rows = new ArrayList<>();
    hits.get().forEach(h -> rows.add(h.values()));
    return Optional.of(result(session, r, shape, selected, names, rows));
  }

  /** The selected columns of a keyed tail's version, as a point read of a file gives them. */
  private static Object[] versionValues(dev.floe.tail.Pin pin, dev.floe.tail.Pin.Version v,
      List<Column> selected, List<PointReader.Field> fields) {
    List<org.apache.iceberg.types.Types.NestedField> columns = pin.columns();
    Object[] row = new Object[selected.size()];
    for (int k = 0; k < selected.size(); k++) {
      Column c = selected.get(k);
      if (c.name().equals(dev.floe.tail.TailLog.OFFSET_COLUMN)) {
        row[k] = v.offset();
        continue;
      }
      for (int i = 0; i < columns.size(); i++) {
        if (columns.get(i).fieldId() == c.fieldId()) {
          row[k] = PointReader.rowValue(v.values()[i], fields.get(k));
        }
      }
    }
    return row;
  }

  /** The rows found, as the result the general path would give. */
  private static dev.floe.Result result(SessionContext session, Relations.TableRelation r, Shape shape,
      List<Column> selected, List<String> names, List<Object[]> rows) {
    // as QueryBinder says where output columns come from: a lone * or plain column references only
    boolean stars = shape.items().stream().anyMatch(i -> i.column() == null);
    boolean traced = !stars || shape.items().size() == 1 && !shape.qualifiedStar();
    List<Column> out = new ArrayList<>();
    List<Optional<QueryBinder.Origin>> origins = new ArrayList<>();
    for (int k = 0; k < selected.size(); k++) {
      Column c = selected.get(k);
      SqlType duck = TypeMapping.fromDuckdb(TypeMapping.duckdbType(c, r.schema.findField(c.fieldId()).type()));
      // the declared type where both are strings (varchar(n)), as QueryResult.withOrigins reports it
      out.add(Column.result(names.get(k), traced && duck.isString() && c.type().isString() ? c.type() : duck));
      origins.add(traced ? Optional.of(new QueryBinder.Origin(r.qualifiedName(), c)) : Optional.empty());
    }
    served.incrementAndGet();
    return new RowsResult(List.copyOf(out), rows, session.engine().allocator(), origins,
        o -> session.engine().pgCatalog().origin(o));
  }

  /** The table column named exactly {@code name}, when no other column has that name in another case. */
  private static Column column(List<Column> columns, String name) {
    Column found = null;
    for (Column c : columns) {
      if (c.name().equalsIgnoreCase(name)) {
        if (found != null || !c.name().equals(name)) {
          return null; // DuckDB matches names case-insensitively: leave the ambiguity to it
        }
        found = c;
      }
    }
    return found;
  }

  private static final Pattern INTEGER = Pattern.compile("-?[0-9]{1,19}");
  private static final Pattern UUID_TEXT =
      Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");
  private static final Set<String> INTEGER_TYPES = Set.of("smallint", "int2", "integer", "int", "int4", "bigint",
      "int8");
  private static final Set<String> STRING_TYPES = Set.of("text", "varchar");

  /**
   * The constant as an Iceberg value of the key column's kind, or null when its meaning is not plainly
   * that (the general path then decides, and raises the error a bad cast deserves).
   */
  static Object value(Constant c, SqlType.Kind kind) {
    switch (kind) {
      case SMALLINT, INTEGER, BIGINT -> {
        boolean number = c.type() == Token.Type.NUMBER && c.cast() == null;
        boolean cast = c.type() == Token.Type.STRING && c.cast() != null && INTEGER_TYPES.contains(c.cast());
        // a plain string takes the column's type, as an unknown-typed literal does in PostgreSQL (pgbench
        // and other clients that do not declare parameter types send them so)
        boolean untyped = c.type() == Token.Type.STRING && c.cast() == null;
        if (!(number || cast || untyped) || !INTEGER.matcher(c.text()).matches()) {
          return null;
        }
        BigInteger v = new BigInteger(c.text());
        BigInteger[] range = number ? new BigInteger[] {BigInteger.valueOf(Long.MIN_VALUE),
            BigInteger.valueOf(Long.MAX_VALUE)} : range(untyped ? kind.name().toLowerCase(Locale.ROOT) : c.cast());
        if (v.compareTo(range[0]) < 0 || v.compareTo(range[1]) > 0) {
          return null; // out of the literal's or the cast's range: DuckDB's typing or its error
        }
        return v.longValue();
      }
      case TEXT, VARCHAR -> {
        boolean plain = c.type() == Token.Type.STRING && (c.cast() == null || STRING_TYPES.contains(c.cast()));
        return plain ? c.text() : null;
      }
      case UUID -> {
        boolean cast = c.type() == Token.Type.STRING && (c.cast() == null || "uuid".equals(c.cast()));
        return cast && UUID_TEXT.matcher(c.text()).matches() ? UUID.fromString(c.text()) : null;
      }
      default -> {
        return null;
      }
    }
  }

  private static BigInteger[] range(String type) {
    long[] r = switch (type) {
      case "smallint", "int2" -> new long[] {Short.MIN_VALUE, Short.MAX_VALUE};
      case "integer", "int", "int4" -> new long[] {Integer.MIN_VALUE, Integer.MAX_VALUE};
      default -> new long[] {Long.MIN_VALUE, Long.MAX_VALUE};
    };
    return new BigInteger[] {BigInteger.valueOf(r[0]), BigInteger.valueOf(r[1])};
  }

  // ------------------------------------------------------------------ recognizing the statement

  /**
   * Words an unquoted name cannot be here: every keyword DuckDB does not list as unreserved
   * ({@code duckdb_keywords()}: reserved, type_function and column_name), PostgreSQL's reserved words
   * and functions written without parentheses, and the time-travel words.
   */
  private static final Set<String> RESERVED = Set.of(
      "all", "analyse", "analyze", "and", "anti", "any", "array", "as", "asc", "asof", "asymmetric", "at",
      "authorization", "between", "bigint", "binary", "bit", "boolean", "both", "by", "case", "cast", "char",
      "character", "check", "coalesce", "collate", "collation", "column", "columns", "concurrently", "constraint",
      "create", "cross", "current_catalog", "current_date", "current_role", "current_schema", "current_time",
      "current_timestamp", "current_user", "dec", "decimal", "default", "deferrable", "desc", "describe", "distinct",
      "do", "else", "end", "except", "exists", "extract", "false", "fetch", "float", "for", "foreign", "freeze",
      "from", "full", "generated", "glob", "grant", "group", "grouping", "grouping_id", "having", "ilike", "in",
      "initially", "inner", "inout", "int", "integer", "intersect", "interval", "into", "is", "isnull", "join",
      "lambda", "lateral", "leading", "left", "like", "limit", "localtime", "localtimestamp", "map", "national",
      "natural", "nchar", "none", "not", "notnull", "null", "nullif", "numeric", "of", "offset", "on", "only", "or",
      "order", "out", "outer", "overlaps", "overlay", "pivot", "pivot_longer", "pivot_wider", "placing", "position",
      "positional", "precision", "primary", "qualify", "real", "references", "returning", "right", "row", "sample",
      "select", "semi", "session_user", "setof", "show", "similar", "smallint", "some", "struct", "substring",
      "summarize", "symmetric", "system_time", "system_user", "table", "tablesample", "then", "time", "timestamp",
      "to", "trailing", "treat", "trim", "true", "try_cast", "tuple", "union", "unique", "unpack", "unpivot", "user",
      "using", "values", "varchar", "variadic", "verbose", "version", "when", "where", "window", "with",
      "xmlattributes", "xmlconcat", "xmlelement", "xmlexists", "xmlforest", "xmlnamespaces", "xmlparse", "xmlpi",
      "xmlroot", "xmlserialize", "xmltable");

  /** The statement's shape, or null if it is not a point query. */
  static Shape parse(String sql) {
    List<Token> t;
    try {
      t = Lexer.tokenize(sql);
    } catch (dev.floe.FloeException e) {
      return null; // the general path reports it
    }
    int[] at = {0};
    if (!keyword(t, at, "select")) {
      return null;
    }
    List<Item> items = new ArrayList<>();
    List<List<String>> qualifiers = new ArrayList<>();
    boolean qualifiedStar = false;
    do {
      if (op(t, at, "*")) {
        items.add(new Item(null, null));
        qualifiers.add(List.of());
        continue;
      }
      List<String> ref = name(t, at);
      if (ref == null || ref.size() > 2) {
        return null;
      }
      if (ref.get(ref.size() - 1).equals("*")) {
        qualifiedStar = true;
        items.add(new Item(null, null)); // t.*
        qualifiers.add(ref.subList(0, ref.size() - 1));
        continue;
      }
      String name = null;
      if (keyword(t, at, "as")) {
        name = alias(t, at);
        if (name == null) {
          return null;
        }
      } else if (isAlias(t.get(at[0]))) {
        name = alias(t, at);
      }
      items.add(new Item(ref.get(ref.size() - 1), name));
      qualifiers.add(ref.subList(0, ref.size() - 1));
    } while (op(t, at, ","));
    if (!keyword(t, at, "from")) {
      return null;
    }
    int tablePosition = t.get(at[0]).position();
    List<String> table = name(t, at);
    if (table == null || table.size() > 2) {
      return null;
    }
    String alias = null;
    if (keyword(t, at, "as")) {
      alias = alias(t, at);
      if (alias == null) {
        return null;
      }
    } else if (isAlias(t.get(at[0]))) {
      alias = alias(t, at);
    }
    String qualifier = alias != null ? alias : table.get(table.size() - 1);
    for (List<String> q : qualifiers) {
      if (!q.isEmpty() && !q.get(0).equals(qualifier)) {
        return null;
      }
    }
    if (!keyword(t, at, "where")) {
      return null;
    }
    String keyColumn;
    Constant key;
    List<String> left = name(t, at);
    if (left != null) {
      if (!op(t, at, "=")) {
        return null;
      }
      key = constant(t, at);
      keyColumn = unqualified(left, qualifier);
    } else {
      key = constant(t, at);
      if (key == null || !op(t, at, "=")) {
        return null;
      }
      List<String> right = name(t, at);
      keyColumn = right == null ? null : unqualified(right, qualifier);
    }
    if (key == null || keyColumn == null) {
      return null;
    }
    long limit = Long.MAX_VALUE;
    if (keyword(t, at, "limit")) {
      Token n = t.get(at[0]);
      if (n.type() != Token.Type.NUMBER || !n.text().matches("[0-9]{1,18}")) {
        return null;
      }
      limit = Long.parseLong(n.text());
      at[0]++;
    }
    op(t, at, ";");
    return t.get(at[0]).type() == Token.Type.EOF ? new Shape(table, tablePosition, items,
        qualifiedStar, keyColumn, key, limit)
        : null;
  }

  static String unqualified(List<String> ref, String qualifier) {
    if (ref.size() > 2 || ref.size() == 2 && !ref.get(0).equals(qualifier)) {
      return null;
    }
    return ref.get(ref.size() - 1);
  }

  /** A constant: a number, a plain string, {@code CAST('..' AS type)} or {@code '..'::type}. */
  static Constant constant(List<Token> t, int[] at) {
    Token first = t.get(at[0]);
    if (first.isOp("-") && peek(t, at[0] + 1).type() == Token.Type.NUMBER) {
      at[0] += 2;
      return new Constant(Token.Type.NUMBER, "-" + t.get(at[0] - 1).text(), null);
    }
    if (first.type() == Token.Type.NUMBER) {
      at[0]++;
      return new Constant(Token.Type.NUMBER, first.text(), null);
    }
    if (first.isKeyword("cast") && peek(t, at[0] + 1).isOp("(")) {
      int save = at[0];
      at[0] += 2;
      Token s = t.get(at[0]);
      if (plainString(s)) {
        at[0]++;
        if (keyword(t, at, "as")) {
          String type = typeName(t, at);
          if (type != null && op(t, at, ")")) {
            return new Constant(Token.Type.STRING, s.value(), type);
          }
        }
      }
      at[0] = save;
      return null;
    }
    if (plainString(first)) {
      at[0]++;
      if (op(t, at, "::")) {
        String type = typeName(t, at);
        return type == null ? null : new Constant(Token.Type.STRING, first.value(), type);
      }
      return new Constant(Token.Type.STRING, first.value(), null);
    }
    return null;
  }

  private static boolean plainString(Token s) {
    return s.type() == Token.Type.STRING && s.text().startsWith("'");
  }

  /** A one-word type name (followed by neither a modifier nor an array bracket). */
  private static String typeName(List<Token> t, int[] at) {
    Token n = t.get(at[0]);
    Token next = peek(t, at[0] + 1);
    if (n.type() != Token.Type.IDENT || next.isOp("(") || next.isOp("[") || next.type() == Token.Type.IDENT) {
      return null;
    }
    at[0]++;
    return n.value().toLowerCase(Locale.ROOT);
  }

  /** A possibly qualified name ({@code a}, {@code a.b}, or {@code a.*} as [a, *]); null if none is here. */
  static List<String> name(List<Token> t, int[] at) {
    Token first = t.get(at[0]);
    if (!plainName(first)) {
      return null;
    }
    List<String> parts = new ArrayList<>();
    parts.add(first.value());
    at[0]++;
    while (t.get(at[0]).isOp(".")) {
      Token n = peek(t, at[0] + 1);
      if (n.isOp("*")) {
        parts.add("*");
        at[0] += 2;
        return parts;
      }
      if (!plainName(n)) {
        return null;
      }
      parts.add(n.value());
      at[0] += 2;
    }
    return parts;
  }

  /**
   * A quoted identifier, or an unquoted one already in lower case: DuckDB keeps the case of what it is
   * given where PostgreSQL folds it, so names written otherwise are left to the general path.
   */
  private static boolean plainName(Token t) {
    return t.type() == Token.Type.QUOTED_IDENT
        || t.type() == Token.Type.IDENT && t.text().equals(t.value()) && !RESERVED.contains(t.value());
  }

  private static boolean isAlias(Token t) {
    return t.type() == Token.Type.QUOTED_IDENT || t.type() == Token.Type.IDENT && !RESERVED.contains(t.value());
  }

  /** An alias as PostgreSQL names the output: quoted as written, unquoted only when already lower case. */
  private static String alias(List<Token> t, int[] at) {
    Token a = t.get(at[0]);
    if (!isAlias(a) || a.type() == Token.Type.IDENT && !a.text().equals(a.value())) {
      return null;
    }
    at[0]++;
    return a.value();
  }

  /** The token at {@code i}, or the closing EOF past it. */
  private static Token peek(List<Token> t, int i) {
    return t.get(Math.min(i, t.size() - 1));
  }

  static boolean keyword(List<Token> t, int[] at, String word) {
    if (t.get(at[0]).isKeyword(word)) {
      at[0]++;
      return true;
    }
    return false;
  }

  static boolean op(List<Token> t, int[] at, String op) {
    if (t.get(at[0]).isOp(op)) {
      at[0]++;
      return true;
    }
    return false;
  }
}
