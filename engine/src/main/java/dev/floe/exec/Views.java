package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.SqlState;
import dev.floe.sql.Ast;
import dev.floe.sql.Lexer;
import dev.floe.sql.QualifiedName;
import dev.floe.sql.QueryBinder;
import dev.floe.types.TypeMapping;
import java.sql.PreparedStatement;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.view.ImmutableSQLViewRepresentation;
import org.apache.iceberg.view.ImmutableViewVersion;
import org.apache.iceberg.view.SQLViewRepresentation;
import org.apache.iceberg.view.ViewMetadata;
import org.apache.iceberg.view.ViewMetadataParser;
import org.apache.iceberg.view.ViewRepresentation;
import org.apache.iceberg.view.ViewVersion;

/**
 * Views: CREATE [OR REPLACE] VIEW and DROP VIEW, kept as Iceberg views in the same catalog as the tables
 * (a view metadata file, and a catalog row of type VIEW, as Iceberg's JdbcCatalog keeps them), so other
 * engines reading the catalog see them. A view is its query's text, in Floe's SQL (dialect
 * {@value #DIALECT}) with the schema its result had; a statement that names it reads the query, bound
 * again with the statement's snapshot of each table (as PostgreSQL expands a view into the query).
 */
final class Views {
  /** The dialect of the SQL a view keeps: PostgreSQL's, as Floe speaks it. */
  static final String DIALECT = "postgresql";
  /** Views within views deeper than this are a cycle (CREATE OR REPLACE can make one). */
  private static final int MAX_DEPTH = 32;
  private static final ThreadLocal<int[]> DEPTH = ThreadLocal.withInitial(() -> new int[1]);
  /** View metadata by file: a file never changes, so what was read once stays true. */
  private static final Map<String, ViewMetadata> READ = java.util.Collections.synchronizedMap(
      new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, ViewMetadata> eldest) {
          return size() > 512;
        }
      });

  private final SessionContext session;
  private final Tables tables;

  Views(SessionContext session, Tables tables) {
    this.session = session;
    this.tables = tables;
  }

  /** A view as a statement reads it: its query and its columns' names. */
  record View(TableIdentifier id, String sql, Namespace defaultNamespace, List<String> columns, Schema schema) {}

  /** The view {@code id}, if there is one. */
  static Optional<View> find(Tables tables, TableIdentifier id) {
    Optional<String> location = tables.catalog().viewLocation(id);
    if (location.isEmpty()) {
      return Optional.empty();
    }
    ViewMetadata metadata = read(tables, location.get());
    ViewVersion version = metadata.currentVersion();
    String sql = null;
    for (ViewRepresentation r : version.representations()) {
      if (r instanceof SQLViewRepresentation s && (sql == null || s.dialect().equalsIgnoreCase(DIALECT))) {
        sql = s.sql();
      }
    }
    if (sql == null) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "view \"" + id.name() + "\" has no SQL Floe can read");
    }
    Schema schema = metadata.schemasById().get(version.schemaId());
    List<String> columns = schema.columns().stream().map(Types.NestedField::name).toList();
    return Optional.of(new View(id, sql, version.defaultNamespace(), columns, schema));
  }

  /**
   * The SQL a statement reads view {@code id} by: its query bound with {@code relations} (the statement's
   * snapshots), its columns named as the view names them; empty if {@code id} is no view.
   */
  Optional<String> relationSql(TableIdentifier id, Relations relations) {
    Optional<View> view = find(tables, id);
    if (view.isEmpty()) {
      return Optional.empty();
    }
    int[] depth = DEPTH.get();
    if (depth[0] >= MAX_DEPTH) {
      throw new FloeException(SqlState.INVALID_OBJECT_DEFINITION, "infinite recursion detected in rules for relation \""
          + id.name() + "\"");
    }
    depth[0]++;
    try {
      // its names resolve where the view was created, whatever the reading session's schema
      String schema = view.get().defaultNamespace() == null || view.get().defaultNamespace().isEmpty()
          ? id.namespace().level(0) : view.get().defaultNamespace().level(0);
      QueryBinder.Bound bound = relations.inSchema(schema, () -> session.bind(view.get().sql(), o -> 0, relations));
      QueryResult.Named named = QueryResult.withColumnNames(bound);
      StringBuilder aliases = new StringBuilder();
      for (String c : view.get().columns()) {
        aliases.append(aliases.length() > 0 ? ", " : "").append(Lexer.quoteIdentifier(c));
      }
      return Optional.of("(SELECT * FROM (" + named.sql() + ") AS __floe_view(" + aliases + "))");
    } catch (FloeException e) {
      throw new FloeException(e.sqlState(), e.getMessage(), e.detail().orElse(null), e.hint().orElse(null), 0, e)
          .withContext("SQL of view \"" + id.name() + "\"");
    } finally {
      depth[0]--;
    }
  }

  Result create(Ast.CreateView s) {
    TableIdentifier id = tables.require(s.name(), session.currentSchema());
    if (tables.catalog().metadataLocation(id).isPresent()) {
      throw new FloeException(SqlState.DUPLICATE_TABLE, "relation \"" + id.name() + "\" already exists");
    }
    Schema schema = schemaOf(s);
    Optional<String> existing = tables.catalog().viewLocation(id);
    if (existing.isPresent() && !s.orReplace()) {
      throw new FloeException(SqlState.DUPLICATE_TABLE, "relation \"" + id.name() + "\" already exists");
    }
    ViewMetadata old = existing.map(l -> read(tables, l)).orElse(null);
    if (old != null) {
      checkReplaceable(id, old.schema(), schema);
    }
    ViewVersion version = ImmutableViewVersion.builder()
        .versionId(old == null ? 1 : old.currentVersionId() + 1)
        .schemaId(old == null ? 0 : old.schemas().stream().mapToInt(Schema::schemaId).max().orElse(0) + 1)
        .timestampMillis(System.currentTimeMillis())
        .defaultNamespace(Namespace.of(session.currentSchema()))
        .putSummary("engine-name", "floe")
        .addRepresentations(ImmutableSQLViewRepresentation.builder().sql(s.query().text()).dialect(DIALECT).build())
        .build();
    String location = old != null ? old.location() : tables.newLocation(Optional.empty(), id);
    ViewMetadata.Builder builder = old == null ? ViewMetadata.builder().assignUUID(UUID.randomUUID().toString())
        .setLocation(location) : ViewMetadata.buildFrom(old);
    ViewMetadata metadata = builder.setCurrentVersion(version, schema).build();
    boolean committed;
    try {
      committed = tables.catalog().commitView(id, old, metadata);
    } catch (AlreadyExistsException e) {
      committed = false;
    }
    if (!committed) {
      throw new FloeException(SqlState.SERIALIZATION_FAILURE, "could not create view \"" + id.name()
          + "\": it was created or changed concurrently");
    }
    return new CommandResult("CREATE VIEW", 0);
  }

  Result drop(Ast.DropView s) {
    List<TableIdentifier> ids = new ArrayList<>();
    for (QualifiedName n : s.names()) {
      TableIdentifier id = tables.require(n, session.currentSchema());
      if (tables.catalog().viewLocation(id).isEmpty()) {
        if (tables.catalog().metadataLocation(id).isPresent()) {
          throw new FloeException(SqlState.WRONG_OBJECT_TYPE, "\"" + id.name() + "\" is not a view", null,
              "Use DROP TABLE to remove a table.", 0, null);
        }
        if (s.ifExists()) {
          session.notice("view \"" + id.name() + "\" does not exist, skipping");
          continue;
        }
        throw new FloeException(SqlState.UNDEFINED_TABLE, "view \"" + id.name() + "\" does not exist");
      }
      ids.add(id);
    }
    for (TableIdentifier id : ids) {
      tables.catalog().dropView(id);
    }
    return new CommandResult("DROP VIEW", 0);
  }

  /** The schema of the view's result: its query's columns, named by the column list where it gives names. */
  private Schema schemaOf(Ast.CreateView s) {
    QueryBinder.Bound bound = session.bind(s.query());
    QueryResult.Named named = QueryResult.withColumnNames(bound);
    List<String> names = new ArrayList<>();
    List<String> types = new ArrayList<>();
    try (PreparedStatement ps = session.duck().prepareStatement(named.sql())) {
      ResultSetMetaData md = ps.getMetaData();
      for (int i = 1; i <= md.getColumnCount(); i++) {
        names.add(md.getColumnName(i));
        types.add(md.getColumnTypeName(i));
      }
    } catch (SQLException e) {
      throw DuckErrors.map(e, named.positions());
    }
    if (s.columns().size() > names.size()) {
      throw new FloeException(SqlState.SYNTAX_ERROR, "CREATE VIEW specifies more column names than columns");
    }
    for (int k = 0; k < s.columns().size(); k++) {
      names.set(k, s.columns().get(k));
    }
    Set<String> seen = new HashSet<>();
    List<Types.NestedField> fields = new ArrayList<>();
    for (int k = 0; k < names.size(); k++) {
      if (!seen.add(names.get(k))) {
        throw new FloeException(SqlState.DUPLICATE_COLUMN, "column \"" + names.get(k) + "\" specified more than once");
      }
      fields.add(Types.NestedField.optional(k + 1, names.get(k), icebergType(types.get(k))));
    }
    return new Schema(fields);
  }

  /** A result column's Iceberg type; a DuckDB type Iceberg has no column type for is described as text. */
  private static Type icebergType(String duckdbType) {
    try {
      return TypeMapping.toIceberg(TypeMapping.fromDuckdb(duckdbType));
    } catch (RuntimeException e) {
      return Types.StringType.get();
    }
  }

  /** PostgreSQL's rule for CREATE OR REPLACE VIEW: the old columns stay, by name and type; new ones may follow. */
  private static void checkReplaceable(TableIdentifier id, Schema old, Schema now) {
    if (now.columns().size() < old.columns().size()) {
      throw new FloeException(SqlState.INVALID_TABLE_DEFINITION, "cannot drop columns from view");
    }
    for (int k = 0; k < old.columns().size(); k++) {
      Types.NestedField a = old.columns().get(k);
      Types.NestedField b = now.columns().get(k);
      if (!a.name().equals(b.name())) {
        throw new FloeException(SqlState.INVALID_TABLE_DEFINITION, "cannot change name of view column \"" + a.name()
            + "\" to \"" + b.name() + "\"", null, "Use ALTER VIEW ... RENAME COLUMN ... to change name of view column "
            + "instead.", 0, null);
      }
      if (!a.type().equals(b.type())) {
        throw new FloeException(SqlState.INVALID_TABLE_DEFINITION, "cannot change data type of view column \""
            + a.name() + "\" from " + TypeMapping.fromIceberg(a.type(), Optional.empty()) + " to "
            + TypeMapping.fromIceberg(b.type(), Optional.empty()));
      }
    }
  }

  private static ViewMetadata read(Tables tables, String location) {
    ViewMetadata known = READ.get(location);
    if (known != null) {
      return known;
    }
    ViewMetadata metadata = ViewMetadataParser.read(tables.catalog().io(), location);
    READ.put(location, metadata);
    return metadata;
  }
}
