package dev.floe.server.rest;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.floe.IcebergCatalog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.apache.iceberg.MetadataUpdate;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.UpdateRequirement;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.rest.CatalogHandlers;
import org.apache.iceberg.rest.Endpoint;
import org.apache.iceberg.rest.RESTCatalogProperties;
import org.apache.iceberg.rest.RESTUtil;
import org.apache.iceberg.rest.requests.CommitTransactionRequest;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.RegisterTableRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.ReportMetricsRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.iceberg.rest.responses.CreateNamespaceResponse;
import org.apache.iceberg.rest.responses.LoadTableResponse;
import org.apache.iceberg.rest.responses.UpdateNamespacePropertiesResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The REST catalog's routes (the Iceberg REST OpenAPI spec, without a prefix): config, namespaces,
 * tables and multi-table transactions, over {@link IcebergCatalog}. Reads use Iceberg's own
 * {@link CatalogHandlers} on the catalog; every change goes through {@link IcebergCatalog}, so a commit
 * from Spark or Trino is the same compare-and-swap, under the same locks, as Floe's own.
 */
final class CatalogRoutes {
  private static final Logger LOG = LoggerFactory.getLogger("dev.floe.server.log");
  /** What this server implements, announced by {@code GET /v1/config}. */
  static final List<Endpoint> ENDPOINTS = List.of(Endpoint.V1_LIST_NAMESPACES, Endpoint.V1_LOAD_NAMESPACE,
      Endpoint.V1_NAMESPACE_EXISTS, Endpoint.V1_CREATE_NAMESPACE, Endpoint.V1_UPDATE_NAMESPACE,
      Endpoint.V1_DELETE_NAMESPACE, Endpoint.V1_COMMIT_TRANSACTION, Endpoint.V1_LIST_TABLES, Endpoint.V1_LOAD_TABLE,
      Endpoint.V1_TABLE_EXISTS, Endpoint.V1_CREATE_TABLE, Endpoint.V1_UPDATE_TABLE, Endpoint.V1_DELETE_TABLE,
      Endpoint.V1_RENAME_TABLE, Endpoint.V1_REGISTER_TABLE, Endpoint.V1_REPORT_METRICS, Endpoint.V1_LIST_VIEWS,
      Endpoint.V1_LOAD_VIEW, Endpoint.V1_VIEW_EXISTS, Endpoint.V1_CREATE_VIEW, Endpoint.V1_UPDATE_VIEW,
      Endpoint.V1_DELETE_VIEW, Endpoint.V1_RENAME_VIEW, Endpoint.V1_REGISTER_VIEW);

  /** An answer: status, headers and a body to serialize (null: none). */
  record Reply(int status, Map<String, String> headers, Object body) {
    static Reply json(int status, Object body) {
      return new Reply(status, Map.of(), body);
    }

    static Reply empty(int status) {
      return new Reply(status, Map.of(), null);
    }
  }

  private final IcebergCatalog catalog;
  /** What a client's {@code warehouse} may say to mean this server's warehouse: its name, its directory. */
  private final java.util.Set<String> warehouseNames;
  private final ObjectMapper json = RestJson.mapper();

  /** Whether this server hands its S3 credentials to clients that ask ({@link RestServer.Config#vendCredentials}). */
  private final boolean vends;
  /** Whether the request being answered asked for vended credentials (one request per thread). */
  private final ThreadLocal<Boolean> vendNow = ThreadLocal.withInitial(() -> false);

  CatalogRoutes(IcebergCatalog catalog, java.nio.file.Path warehouse, boolean vends) {
    this.catalog = catalog;
    this.vends = vends;
    java.util.Set<String> names = new java.util.HashSet<>(java.util.List.of(catalog.name(),
        String.valueOf(warehouse.getFileName()), warehouse.toString(), "file:" + warehouse,
        warehouse.toUri().toString()));
    catalog.objectStoreLocation().ifPresent(l -> {
      names.add(l);
      names.add(l + "/");
    });
    this.warehouseNames = java.util.Set.copyOf(names);
  }

  /**
   * Answers one request; {@code delegation} is its {@code X-Iceberg-Access-Delegation} header (credentials are
   * vended only when it names {@code vended-credentials} and the server vends them).
   */
  Reply route(String method, String rawPath, Map<String, String> query, byte[] body, String ifNoneMatch,
      String delegation) {
    vendNow.set(vends && delegation != null && java.util.Arrays.stream(delegation.split(","))
        .anyMatch(d -> d.strip().equalsIgnoreCase("vended-credentials")));
    try {
      return route(method, rawPath, query, body, ifNoneMatch);
    } finally {
      vendNow.remove();
    }
  }

  /** A table's load result, with what a client needs to reach its files (docs/object-storage.md). */
  private LoadTableResponse loaded(TableMetadata m) {
    return LoadTableResponse.builder().withTableMetadata(m).addAllConfig(catalog.storageConfig(m.location(),
        vendNow.get())).build();
  }

  private Reply route(String method, String rawPath, Map<String, String> query, byte[] body, String ifNoneMatch) {
    List<String> p = segments(rawPath);
    if (p.size() < 2 || !p.get(0).equals("v1")) {
      throw notFound(method, rawPath);
    }
    String top = p.get(1);
    int n = p.size();
    if (n == 2 && top.equals("config") && method.equals("GET")) {
      String asked = query.getOrDefault("warehouse", "");
      if (!asked.isEmpty() && !warehouseNames.contains(asked) && !warehouseNames.contains(asked + "/")
          && !warehouseNames.contains(asked.replaceAll("/+$", ""))) {
        throw new RestErrors.Status(404, "NoSuchWarehouseException", "warehouse \"" + asked + "\" is not served here: "
            + "this server serves \"" + catalog.name() + "\" (leave warehouse out, or name that one)");
      }
      return Reply.json(200, ConfigResponse.builder().withEndpoints(ENDPOINTS).build());
    }
    if (top.equals("namespaces")) {
      if (n == 2) {
        return switch (method) {
          case "GET" -> listNamespaces(query);
          case "POST" -> createNamespace(read(body, CreateNamespaceRequest.class));
          default -> throw notAllowed(method, rawPath);
        };
      }
      Namespace ns = namespace(p.get(2));
      if (n == 3) {
        return switch (method) {
          case "GET" -> Reply.json(200, org.apache.iceberg.rest.responses.GetNamespaceResponse.builder()
              .withNamespace(ns).setProperties(namespaceProperties(ns)).build());
          case "HEAD" -> {
            CatalogHandlers.namespaceExists(catalog.namespaces(), ns);
            yield Reply.empty(204);
          }
          case "DELETE" -> {
            requireNamespace(ns);
            int tables = catalog.catalog().listTables(ns).size();
            int views = catalog.views().listViews(ns).size();
            if (tables + views > 0) {
              throw new org.apache.iceberg.exceptions.NamespaceNotEmptyException("Namespace %s is not empty: it holds "
                  + "%d table(s) and %d view(s)", ns, tables, views);
            }
            catalog.dropNamespace(ns);
            yield Reply.empty(204);
          }
          default -> throw notAllowed(method, rawPath);
        };
      }
      String what = p.get(3);
      if (n == 4 && what.equals("properties") && method.equals("POST")) {
        return updateNamespace(ns, read(body, UpdateNamespacePropertiesRequest.class));
      }
      if (n == 4 && what.equals("register") && method.equals("POST")) {
        RegisterTableRequest r = read(body, RegisterTableRequest.class);
        TableIdentifier id = TableIdentifier.of(ns, r.name());
        if (r.overwrite()) {
          throw new UnsupportedOperationException("register with overwrite is not supported: drop the table first");
        }
        requireNamespace(ns);
        catalog.registerTable(id, r.metadataLocation());
        return Reply.json(200, CatalogHandlers.loadTable(catalog.catalog(), id, RESTCatalogProperties.SnapshotMode.ALL));
      }
      if (n == 4 && what.equals("register-view") && method.equals("POST")) {
        org.apache.iceberg.rest.requests.RegisterViewRequest r = read(body,
            org.apache.iceberg.rest.requests.RegisterViewRequest.class);
        requireNamespace(ns);
        catalog.checkLocation("view metadata file", r.metadataLocation());
        TableIdentifier vid = TableIdentifier.of(ns, r.name());
        if (catalog.catalog().tableExists(vid)) {
          throw new org.apache.iceberg.exceptions.AlreadyExistsException("Table with same name already exists: %s",
              vid);
        }
        return Reply.json(200, CatalogHandlers.registerView(catalog.views(), ns, r));
      }
      if (what.equals("views")) {
        return views(method, rawPath, ns, p, query, body);
      }
      if (what.equals("tables")) {
        if (n == 4) {
          return switch (method) {
            case "GET" -> {
              requireNamespace(ns);
              yield Reply.json(200, paged(query)
                  ? CatalogHandlers.listTables(catalog.catalog(), ns, token(query), pageSize(query))
                  : CatalogHandlers.listTables(catalog.catalog(), ns));
            }
            case "POST" -> createTable(ns, read(body, CreateTableRequest.class));
            default -> throw notAllowed(method, rawPath);
          };
        }
        TableIdentifier id = TableIdentifier.of(ns, p.get(4));
        if (n == 5) {
          return switch (method) {
            case "GET" -> loadTable(id, query.getOrDefault("snapshots", "all"), ifNoneMatch);
            case "HEAD" -> {
              CatalogHandlers.tableExists(catalog.catalog(), id);
              yield Reply.empty(204);
            }
            case "POST" -> {
              UpdateTableRequest r = read(body, UpdateTableRequest.class);
              TableMetadata committed = catalog.commit(List.of(new IcebergCatalog.TableCommit(id, apply(id, r))))
                  .get(0);
              yield Reply.json(200, loaded(committed));
            }
            case "DELETE" -> {
              if (!catalog.catalog().tableExists(id)) {
                throw new NoSuchTableException("Table does not exist: %s", id);
              }
              catalog.dropTable(id, Boolean.parseBoolean(query.getOrDefault("purgeRequested", "false")));
              yield Reply.empty(204);
            }
            default -> throw notAllowed(method, rawPath);
          };
        }
        if (n == 6 && p.get(5).equals("metrics") && method.equals("POST")) {
          ReportMetricsRequest r = read(body, ReportMetricsRequest.class);
          LOG.info("event=rest_metrics table={} report={}", id, r.reportType());
          return Reply.empty(204);
        }
      }
    }
    if (n == 3 && top.equals("tables") && p.get(2).equals("rename") && method.equals("POST")) {
      RenameTableRequest r = read(body, RenameTableRequest.class);
      if (!catalog.catalog().tableExists(r.source())) {
        throw new NoSuchTableException("Table does not exist: %s", r.source());
      }
      requireNamespace(r.destination().namespace());
      if (catalog.catalog().tableExists(r.destination())) {
        throw new org.apache.iceberg.exceptions.AlreadyExistsException("Table already exists: %s", r.destination());
      }
      catalog.renameTable(r.source(), r.destination());
      return Reply.empty(204);
    }
    if (n == 3 && top.equals("views") && p.get(2).equals("rename") && method.equals("POST")) {
      RenameTableRequest r = read(body, RenameTableRequest.class);
      requireNamespace(r.destination().namespace());
      catalog.views().renameView(r.source(), r.destination());
      return Reply.empty(204);
    }
    if (n == 3 && top.equals("transactions") && p.get(2).equals("commit") && method.equals("POST")) {
      CommitTransactionRequest r = read(body, CommitTransactionRequest.class);
      List<IcebergCatalog.TableCommit> commits = new ArrayList<>();
      for (UpdateTableRequest change : r.tableChanges()) {
        if (change.identifier() == null) {
          throw new IllegalArgumentException("every table change of a transaction names its table");
        }
        commits.add(new IcebergCatalog.TableCommit(change.identifier(), apply(change.identifier(), change)));
      }
      catalog.commit(commits);
      return Reply.empty(204);
    }
    throw notFound(method, rawPath);
  }

  /** The view routes under a namespace: list and create, then load, exists, replace and drop of one view. */
  private Reply views(String method, String rawPath, Namespace ns, List<String> p, Map<String, String> query,
      byte[] body) {
    org.apache.iceberg.catalog.ViewCatalog views = catalog.views();
    if (p.size() == 4) {
      return switch (method) {
        case "GET" -> {
          requireNamespace(ns);
          yield Reply.json(200, paged(query) ? CatalogHandlers.listViews(views, ns, token(query), pageSize(query))
              : CatalogHandlers.listViews(views, ns));
        }
        case "POST" -> {
          org.apache.iceberg.rest.requests.CreateViewRequest r = read(body,
              org.apache.iceberg.rest.requests.CreateViewRequest.class);
          requireNamespace(ns);
          if (r.location() != null) {
            catalog.checkLocation("view location", r.location());
          }
          checkViewProperties(r.properties());
          TableIdentifier vid = TableIdentifier.of(ns, r.name());
          if (catalog.catalog().tableExists(vid)) {
            throw new org.apache.iceberg.exceptions.AlreadyExistsException("Table with same name already exists: %s",
                vid);
          }
          yield Reply.json(200, CatalogHandlers.createView(views, ns, r));
        }
        default -> throw notAllowed(method, rawPath);
      };
    }
    if (p.size() != 5) {
      throw notFound(method, rawPath);
    }
    TableIdentifier id = TableIdentifier.of(ns, p.get(4));
    return switch (method) {
      case "GET" -> Reply.json(200, CatalogHandlers.loadView(views, id));
      case "HEAD" -> {
        CatalogHandlers.viewExists(views, id);
        yield Reply.empty(204);
      }
      case "POST" -> {
        UpdateTableRequest r = read(body, UpdateTableRequest.class);
        for (MetadataUpdate u : r.updates()) {
          if (u instanceof MetadataUpdate.SetLocation l) {
            catalog.checkLocation("view location", l.location());
          } else if (u instanceof MetadataUpdate.SetProperties props) {
            checkViewProperties(props.updated());
          }
        }
        yield Reply.json(200, CatalogHandlers.updateView(views, id, r));
      }
      case "DELETE" -> {
        CatalogHandlers.dropView(views, id);
        yield Reply.empty(204);
      }
      default -> throw notAllowed(method, rawPath);
    };
  }

  private void checkViewProperties(Map<String, String> properties) {
    String metadata = properties == null ? null : properties.get("write.metadata.path");
    if (metadata != null && !metadata.isEmpty()) {
      catalog.checkLocation("\"write.metadata.path\"", metadata);
    }
  }

  /**
   * A commit request as a change of the table's metadata: its requirements checked against the table as it
   * is (CommitFailedException, 409, when one no longer holds), then its updates applied in order.
   */
  static UnaryOperator<TableMetadata> apply(TableIdentifier id, UpdateTableRequest request) {
    boolean create = request.requirements().stream().anyMatch(r -> r instanceof UpdateRequirement.AssertTableDoesNotExist);
    return base -> {
      if (base == null && !create) {
        throw new NoSuchTableException("Table does not exist: %s", id);
      }
      for (UpdateRequirement r : request.requirements()) {
        r.validate(base);
      }
      TableMetadata.Builder builder = base != null ? TableMetadata.buildFrom(base)
          : createdVersion(request).map(TableMetadata::buildFromEmpty).orElseGet(TableMetadata::buildFromEmpty);
      for (MetadataUpdate u : request.updates()) {
        u.applyTo(builder);
      }
      return builder.build();
    };
  }

  /** The format version a create asks for (its upgrade-format-version update), else Iceberg's default. */
  private static java.util.Optional<Integer> createdVersion(UpdateTableRequest request) {
    return request.updates().stream().filter(u -> u instanceof MetadataUpdate.UpgradeFormatVersion)
        .map(u -> ((MetadataUpdate.UpgradeFormatVersion) u).formatVersion()).findFirst();
  }

  private Reply listNamespaces(Map<String, String> query) {
    String parent = query.get("parent");
    Namespace ns = parent == null || parent.isEmpty() ? Namespace.empty()
        : Namespace.of(parent.split("\u001f", -1));
    if (!ns.isEmpty()) {
      requireNamespace(ns);
    }
    return Reply.json(200, paged(query)
        ? CatalogHandlers.listNamespaces(catalog.namespaces(), ns, token(query), pageSize(query))
        : CatalogHandlers.listNamespaces(catalog.namespaces(), ns));
  }

  /** Whether a listing asks for a page: a page size, or the token of a page after the first. */
  private static boolean paged(Map<String, String> query) {
    return !query.getOrDefault("pageSize", "").isEmpty() || !query.getOrDefault("pageToken", "").isEmpty();
  }

  private static String token(Map<String, String> query) {
    String t = query.getOrDefault("pageToken", "");
    return t.isEmpty() ? null : t;
  }

  /** The page size asked for (a positive integer), or 1,000 when only a token came. */
  private static String pageSize(Map<String, String> query) {
    String size = query.getOrDefault("pageSize", "");
    if (size.isEmpty()) {
      return "1000";
    }
    try {
      if (Integer.parseInt(size) > 0) {
        return size;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new IllegalArgumentException("pageSize must be a positive integer, was \"" + size + "\"");
  }

  private Reply createNamespace(CreateNamespaceRequest r) {
    if (catalog.namespaces().namespaceExists(r.namespace())) {
      throw new org.apache.iceberg.exceptions.AlreadyExistsException("Namespace already exists: %s", r.namespace());
    }
    catalog.createNamespace(r.namespace(), r.properties());
    return Reply.json(200, CreateNamespaceResponse.builder().withNamespace(r.namespace())
        .setProperties(namespaceProperties(r.namespace())).build());
  }

  /**
   * A namespace's properties, with its {@code location} (the schema's directory in the warehouse) unless one was
   * set: engines place a new table under it (Trino stages its create there; without one it creates at once and
   * then finds the directory Floe's create filled).
   */
  private Map<String, String> namespaceProperties(Namespace ns) {
    Map<String, String> properties = new java.util.HashMap<>(catalog.namespaces().loadNamespaceMetadata(ns));
    properties.putIfAbsent("location", catalog.namespaceLocation(ns));
    return properties;
  }

  private Reply updateNamespace(Namespace ns, UpdateNamespacePropertiesRequest r) {
    Map<String, String> before = catalog.namespaces().loadNamespaceMetadata(ns);
    Set<String> removals = new HashSet<>(r.removals());
    for (String k : r.updates().keySet()) {
      if (removals.contains(k)) {
        throw new IllegalArgumentException("property \"" + k + "\" is both updated and removed");
      }
    }
    List<String> removed = new ArrayList<>();
    List<String> missing = new ArrayList<>();
    for (String k : removals) {
      (before.containsKey(k) ? removed : missing).add(k);
    }
    catalog.updateNamespace(ns, r.updates(), new HashSet<>(removed));
    return Reply.json(200, UpdateNamespacePropertiesResponse.builder().addUpdated(r.updates().keySet())
        .addRemoved(removed).addMissing(missing).build());
  }

  private Reply createTable(Namespace ns, CreateTableRequest r) {
    r.validate();
    TableIdentifier id = TableIdentifier.of(ns, r.name());
    TableMetadata m = catalog.createTable(id, r.schema(), r.spec(), r.writeOrder(), r.location(), r.properties(),
        r.stageCreate());
    return Reply.json(200, loaded(m));
  }

  private Reply loadTable(TableIdentifier id, String snapshots, String ifNoneMatch) {
    RESTCatalogProperties.SnapshotMode mode;
    try {
      mode = RESTCatalogProperties.SnapshotMode.valueOf(snapshots.toUpperCase(java.util.Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("snapshots must be all or refs, was \"" + snapshots + "\"");
    }
    catalog.freshen(id); // a tail's acknowledged rows, older than its freshness bound, are in what is loaded
    if (ifNoneMatch != null && catalog.metadataLocation(id).map(l -> etag(l, mode)).filter(ifNoneMatch::equals)
        .isPresent()) {
      return new Reply(304, Map.of("ETag", ifNoneMatch), null); // unchanged: no metadata file read or sent
    }
    LoadTableResponse response = CatalogHandlers.loadTable(catalog.catalog(), id, mode);
    Map<String, String> storage = catalog.storageConfig(response.tableMetadata().location(), vendNow.get());
    if (!storage.isEmpty()) {
      response = LoadTableResponse.builder().withTableMetadata(response.tableMetadata()).addAllConfig(storage).build();
    }
    String etag = etag(response.metadataLocation(), mode);
    if (ifNoneMatch != null && ifNoneMatch.equals(etag)) {
      return new Reply(304, Map.of("ETag", etag), null);
    }
    return new Reply(200, Map.of("ETag", etag), response);
  }

  /** The same metadata file loaded the same way has the same tag (RFC 9110 strong validator). */
  static String etag(String metadataLocation, RESTCatalogProperties.SnapshotMode mode) {
    try {
      byte[] digest = java.security.MessageDigest.getInstance("SHA-256")
          .digest((metadataLocation + "\n" + mode).getBytes(StandardCharsets.UTF_8));
      return "\"" + java.util.HexFormat.of().formatHex(digest, 0, 16) + "\"";
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private void requireNamespace(Namespace ns) {
    if (!catalog.namespaces().namespaceExists(ns)) {
      throw new NoSuchNamespaceException("Namespace does not exist: %s", ns);
    }
  }

  private <T> T read(byte[] body, Class<T> type) {
    if (body.length == 0) {
      throw new RestErrors.Status(400, "BadRequestException", "the request has no body: expected a "
          + type.getSimpleName());
    }
    T value;
    try {
      value = json.readValue(body, type);
    } catch (IOException | RuntimeException e) {
      // Iceberg's parsers throw their own exceptions for an unknown update or requirement type
      String why = e instanceof com.fasterxml.jackson.core.JsonProcessingException j ? j.getOriginalMessage()
          : e.getMessage();
      throw new RestErrors.Status(400, "BadRequestException", "malformed " + type.getSimpleName() + ": " + why);
    }
    if (value == null) {
      throw new IllegalArgumentException("the request body is not a " + type.getSimpleName());
    }
    if (value instanceof org.apache.iceberg.rest.RESTRequest request) {
      request.validate();
    }
    return value;
  }

  /** The namespace of a path segment: levels separated by the unit separator (%1F), each URL-encoded. */
  static Namespace namespace(String raw) {
    String[] parts = raw.split("%1[Ff]", -1);
    String[] levels = new String[parts.length];
    for (int i = 0; i < parts.length; i++) {
      levels[i] = RESTUtil.decodeString(parts[i]);
    }
    return Namespace.of(levels);
  }

  private static List<String> segments(String rawPath) {
    List<String> out = new ArrayList<>();
    for (String s : rawPath.split("/")) {
      if (!s.isEmpty()) {
        out.add(s);
      }
    }
    // table names are URL-decoded by the route; the namespace keeps its raw form for its separator
    for (int i = 0; i < out.size(); i++) {
      if (!(i == 2 && out.get(1).equals("namespaces"))) {
        out.set(i, RESTUtil.decodeString(out.get(i)));
      }
    }
    return out;
  }

  private static RestErrors.Status notFound(String method, String path) {
    return new RestErrors.Status(404, "NotFoundException", "no route for " + method + " " + path);
  }

  private static RestErrors.Status notAllowed(String method, String path) {
    return new RestErrors.Status(405, "MethodNotAllowedException", method + " is not allowed on " + path);
  }
}
