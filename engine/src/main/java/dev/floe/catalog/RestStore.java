package dev.floe.catalog;

import dev.floe.FloeException;
import dev.floe.RemoteCatalog;
import dev.floe.SqlState;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.iceberg.MetadataUpdate;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.UpdateRequirements;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.exceptions.RESTException;
import org.apache.iceberg.exceptions.ServiceFailureException;
import org.apache.iceberg.exceptions.ServiceUnavailableException;
import org.apache.iceberg.rest.Endpoint;
import org.apache.iceberg.rest.ErrorHandlers;
import org.apache.iceberg.rest.HTTPClient;
import org.apache.iceberg.rest.RESTClient;
import org.apache.iceberg.rest.RESTUtil;
import org.apache.iceberg.rest.ResourcePaths;
import org.apache.iceberg.rest.auth.AuthManager;
import org.apache.iceberg.rest.auth.AuthManagers;
import org.apache.iceberg.rest.auth.AuthSession;
import org.apache.iceberg.rest.requests.CommitTransactionRequest;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.ImmutableCreateViewRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.iceberg.rest.responses.GetNamespaceResponse;
import org.apache.iceberg.rest.responses.ListNamespacesResponse;
import org.apache.iceberg.rest.responses.ListTablesResponse;
import org.apache.iceberg.rest.responses.LoadTableResponse;
import org.apache.iceberg.rest.responses.LoadViewResponse;
import org.apache.iceberg.view.ViewMetadata;

/**
 * The tables, views and namespaces of a remote Iceberg REST catalog (Iceberg's own HTTP client, request and
 * response classes and authentication: a bearer token, or OAuth2 client credentials with refresh).
 *
 * <p>A commit sends the change itself: the updates the new metadata records ({@code metadata.changes()}) with
 * the requirements Iceberg derives from them ({@link UpdateRequirements}: the table's UUID, the snapshot each
 * changed branch had, the schema and spec ids a schema or spec change builds on), so the catalog applies it
 * only to the table it was made against, the compare-and-swap of a REST catalog. One table commits through its
 * own endpoint, which answers with the committed table; several through {@code /v1/transactions/commit}, all
 * or none. A created table is sent whole (its UUID, schema, spec, order, location, properties and any snapshot),
 * required not to exist.
 *
 * <p>Every table load answers with the table's metadata, which is kept (the last one per table) so the
 * operations that asked for its location need not read the file again ({@link #loaded}).
 *
 * <p>Failures of the catalog itself become SQLSTATEs here: unreachable 08000, credentials refused 28000, an
 * operation refused 42501, a failure of the service 58030; a commit whose answer was lost stays
 * {@link org.apache.iceberg.exceptions.CommitStateUnknownException}.
 */
final class RestStore implements CatalogStore {
  private static final Map<String, String> NO_HEADERS = Map.of();
  private final String uri;
  private final HTTPClient http;
  private final AuthManager auth;
  private final AuthSession session;
  private final RESTClient client;
  private final ResourcePaths paths;
  private final Set<Endpoint> endpoints;
  /** The last load of each table (its metadata file and the metadata the catalog answered with). */
  private final Map<TableIdentifier, Loaded> lastLoad = new ConcurrentHashMap<>();

  private RestStore(String uri, HTTPClient http, AuthManager auth, AuthSession session, ResourcePaths paths,
      Set<Endpoint> endpoints) {
    this.uri = uri;
    this.http = http;
    this.auth = auth;
    this.session = session;
    this.client = http.withAuthSession(session);
    this.paths = paths;
    this.endpoints = endpoints;
  }

  /** Connects: the catalog's configuration is read (and its credentials checked) before anything else. */
  static RestStore connect(RemoteCatalog remote) {
    Map<String, String> props = new HashMap<>(remote.properties());
    props.put("uri", remote.uri());
    boolean credentials = props.containsKey("token") || props.containsKey("credential");
    props.putIfAbsent("rest.auth.type", credentials ? "oauth2" : "none");
    if (credentials) {
      // Iceberg's default, said explicitly: where tokens are fetched, exchanged and refreshed
      props.putIfAbsent("oauth2-server-uri", RESTUtil.stripTrailingSlash(remote.uri()) + "/" + ResourcePaths.tokens());
    }
    HTTPClient http = HTTPClient.builder(props).uri(remote.uri()).withHeaders(RESTUtil.configHeaders(props)).build();
    AuthManager auth = null;
    try {
      auth = AuthManagers.loadAuthManager("floe", props);
      AuthManager initializing = auth;
      AuthSession init = mapped(remote.uri(), "authenticate", () -> initializing.initSession(http, props));
      Map<String, String> query = remote.properties().containsKey("warehouse")
          ? Map.of("warehouse", remote.properties().get("warehouse")) : Map.of();
      ConfigResponse config = mapped(remote.uri(), "read the catalog's configuration", () ->
          http.withAuthSession(init).get(ResourcePaths.config(), query, ConfigResponse.class, NO_HEADERS,
              ErrorHandlers.configErrorHandler()));
      Map<String, String> merged = config.merge(props);
      AuthManager manager = auth;
      AuthSession session = mapped(remote.uri(), "authenticate",
          () -> manager.catalogSession(http, merged));
      Set<Endpoint> endpoints = config.endpoints() == null || config.endpoints().isEmpty() ? Set.of()
          : Set.copyOf(config.endpoints());
      return new RestStore(remote.uri(), http, auth, session, ResourcePaths.forCatalogProperties(merged), endpoints);
    } catch (RuntimeException e) {
      closeQuietly(http);
      if (auth != null) {
        auth.close();
      }
      throw e;
    }
  }

  @Override
  public boolean writesMetadata() {
    return false;
  }

  // ------------------------------------------------------------------ tables

  @Override
  public Optional<String> metadataLocation(TableIdentifier id) {
    return load(id).map(LoadTableResponse::metadataLocation);
  }

  /**
   * Loads a table, conditionally when it was loaded before: a catalog that tags its answers ({@code ETag}) answers
   * 304 when the table did not change, and the metadata kept from the last load stands.
   */
  private Optional<LoadTableResponse> load(TableIdentifier id) {
    Loaded before = lastLoad.get(id);
    Map<String, String> headers = before == null || before.etag() == null ? NO_HEADERS
        : Map.of("If-None-Match", before.etag());
    Map<String, String> answered = new HashMap<>();
    try {
      LoadTableResponse r = call("load table " + id, () -> client.get(paths.table(id), Map.of("snapshots", "all"),
          LoadTableResponse.class, headers, ErrorHandlers.tableErrorHandler(), answered::putAll));
      if (r == null && before != null) {
        return Optional.of(before.response()); // 304: not changed since
      }
      String etag = answered.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase("ETag"))
          .map(Map.Entry::getValue).findFirst().orElse(null);
      lastLoad.put(id, new Loaded(r, etag));
      return Optional.of(r);
    } catch (NoSuchTableException e) {
      lastLoad.remove(id);
      return Optional.empty();
    }
  }

  /** A table's last load, with the tag its catalog gave it (null when none). */
  private record Loaded(LoadTableResponse response, String etag) {}

  @Override
  public Optional<String> previousMetadataLocation(TableIdentifier id) {
    return load(id).flatMap(r -> {
      List<TableMetadata.MetadataLogEntry> log = r.tableMetadata().previousFiles();
      return log.isEmpty() ? Optional.empty() : Optional.of(log.get(log.size() - 1).file());
    });
  }

  @Override
  public Optional<TableMetadata> loaded(TableIdentifier id, String location) {
    Loaded last = lastLoad.get(id);
    LoadTableResponse r = last == null ? null : last.response();
    if (r == null || !location.equals(r.metadataLocation())) {
      return Optional.empty();
    }
    return Optional.of(withLocation(r.tableMetadata(), r.metadataLocation()));
  }

  private static TableMetadata withLocation(TableMetadata metadata, String location) {
    return location.equals(metadata.metadataFileLocation()) ? metadata
        : TableMetadata.buildFrom(metadata).discardChanges().withMetadataLocation(location).build();
  }

  @Override
  public Map<TableIdentifier, String> tableLocations() {
    Map<TableIdentifier, String> out = new LinkedHashMap<>();
    for (Namespace ns : namespaces(Namespace.empty())) {
      for (TableIdentifier id : tables(ns)) {
        metadataLocation(id).ifPresent(l -> out.put(id, l));
      }
    }
    return out;
  }

  @Override
  public List<TableIdentifier> tables(Namespace namespace) {
    return identifiers(paths.tables(namespace), "list the tables of " + namespace);
  }

  /** Every table or view a listing endpoint names, page by page, by name. */
  private List<TableIdentifier> identifiers(String path, String what) {
    List<TableIdentifier> out = new ArrayList<>();
    String token = null;
    do {
      Map<String, String> query = token == null ? Map.of() : Map.of("pageToken", token);
      ListTablesResponse page = call(what, () -> client.get(path, query, ListTablesResponse.class, NO_HEADERS,
          ErrorHandlers.namespaceErrorHandler()));
      out.addAll(page.identifiers());
      token = page.nextPageToken();
    } while (token != null && !token.isEmpty());
    out.sort(java.util.Comparator.comparing(TableIdentifier::name));
    return out;
  }

  @Override
  public boolean swapAll(List<FloeTableOperations.Prepared> swaps, List<FileDigests.Digest> digests) {
    CommitGate.pass();
    if (swaps.size() == 1) {
      FloeTableOperations.Prepared p = swaps.get(0);
      UpdateTableRequest request = new UpdateTableRequest(requirements(p), updates(p));
      try {
        LoadTableResponse r = commit("commit to " + p.id(), () -> client.post(paths.table(p.id()), request,
            LoadTableResponse.class, NO_HEADERS, ErrorHandlers.tableCommitHandler()));
        lastLoad.put(p.id(), new Loaded(r, null)); // a commit's answer carries no tag
        p.landed(r.metadataLocation(), withLocation(r.tableMetadata(), r.metadataLocation()));
        return true;
      } catch (CommitFailedException e) {
        return false;
      }
    }
    List<UpdateTableRequest> changes = new ArrayList<>();
    for (FloeTableOperations.Prepared p : swaps) {
      changes.add(UpdateTableRequest.create(p.id(), requirements(p), updates(p)));
    }
    try {
      commit("commit " + swaps.size() + " tables", () -> client.post(paths.commitTransaction(),
          new CommitTransactionRequest(changes), null, NO_HEADERS, ErrorHandlers.tableCommitHandler()));
    } catch (CommitFailedException e) {
      return false;
    }
    for (FloeTableOperations.Prepared p : swaps) {
      lastLoad.remove(p.id());
      p.landed(null, null); // the catalog did not say where: each table is loaded again when next used
    }
    return true;
  }

  private static List<org.apache.iceberg.UpdateRequirement> requirements(FloeTableOperations.Prepared p) {
    return p.base() == null ? UpdateRequirements.forCreateTable(updates(p))
        : UpdateRequirements.forUpdateTable(p.base(), updates(p));
  }

  private static List<MetadataUpdate> updates(FloeTableOperations.Prepared p) {
    return p.base() == null ? createUpdates(p.metadata()) : p.metadata().changes();
  }

  /** A new table, whole: what the catalog builds it from, as Iceberg's own REST client sends a create. */
  static List<MetadataUpdate> createUpdates(TableMetadata m) {
    List<MetadataUpdate> out = new ArrayList<>();
    out.add(new MetadataUpdate.AssignUUID(m.uuid()));
    out.add(new MetadataUpdate.UpgradeFormatVersion(m.formatVersion()));
    boolean single = m.schemas().size() == 1;
    for (Schema s : m.schemas()) {
      out.add(new MetadataUpdate.AddSchema(s));
    }
    out.add(new MetadataUpdate.SetCurrentSchema(single ? -1 : m.currentSchemaId()));
    for (PartitionSpec spec : m.specs()) {
      out.add(new MetadataUpdate.AddPartitionSpec(spec));
    }
    out.add(new MetadataUpdate.SetDefaultPartitionSpec(m.specs().size() == 1 ? -1 : m.defaultSpecId()));
    for (SortOrder order : m.sortOrders()) {
      out.add(new MetadataUpdate.AddSortOrder(order));
    }
    out.add(new MetadataUpdate.SetDefaultSortOrder(m.sortOrders().size() == 1 ? -1 : m.defaultSortOrderId()));
    out.add(new MetadataUpdate.SetLocation(m.location()));
    if (!m.properties().isEmpty()) {
      out.add(new MetadataUpdate.SetProperties(m.properties()));
    }
    for (Snapshot s : m.snapshots()) {
      out.add(new MetadataUpdate.AddSnapshot(s));
    }
    for (Map.Entry<String, SnapshotRef> e : m.refs().entrySet()) {
      SnapshotRef ref = e.getValue();
      out.add(new MetadataUpdate.SetSnapshotRef(e.getKey(), ref.snapshotId(), ref.type(), ref.minSnapshotsToKeep(),
          ref.maxSnapshotAgeMs(), ref.maxRefAgeMs()));
    }
    return out;
  }

  @Override
  public boolean dropTable(TableIdentifier id) {
    try {
      call("drop table " + id, () -> client.delete(paths.table(id), null, NO_HEADERS,
          ErrorHandlers.tableErrorHandler()));
      lastLoad.remove(id);
      return true;
    } catch (NoSuchTableException e) {
      return false;
    }
  }

  @Override
  public void renameTable(TableIdentifier from, TableIdentifier to) {
    RenameTableRequest request = RenameTableRequest.builder().withSource(from).withDestination(to).build();
    call("rename table " + from, () -> client.post(paths.rename(), request, null, NO_HEADERS,
        ErrorHandlers.tableErrorHandler()));
    lastLoad.remove(from);
  }

  /** Where the catalog would put the table: asked with a staged create, which creates nothing. */
  @Override
  public String newTableLocation(TableIdentifier id) {
    CreateTableRequest request = CreateTableRequest.builder().withName(id.name()).withSchema(new Schema())
        .stageCreate().build();
    LoadTableResponse r = call("place table " + id, () -> client.post(paths.tables(id.namespace()), request,
        LoadTableResponse.class, NO_HEADERS, ErrorHandlers.tableErrorHandler()));
    return r.tableMetadata().location();
  }

  // ------------------------------------------------------------------ views

  private boolean hasViews() {
    return endpoints.isEmpty() || endpoints.contains(Endpoint.V1_LIST_VIEWS);
  }

  @Override
  public Optional<String> viewLocation(TableIdentifier id) {
    if (!hasViews()) {
      return Optional.empty();
    }
    try {
      LoadViewResponse r = call("load view " + id, () -> client.get(paths.view(id), LoadViewResponse.class,
          NO_HEADERS, ErrorHandlers.viewErrorHandler()));
      return Optional.of(r.metadataLocation());
    } catch (NoSuchViewException e) {
      return Optional.empty();
    }
  }

  @Override
  public List<TableIdentifier> views(Namespace namespace) {
    if (!hasViews()) {
      return List.of();
    }
    return identifiers(paths.views(namespace), "list the views of " + namespace);
  }

  @Override
  public Map<TableIdentifier, String> viewLocations() {
    Map<TableIdentifier, String> out = new LinkedHashMap<>();
    if (!hasViews()) {
      return out;
    }
    for (Namespace ns : namespaces(Namespace.empty())) {
      for (TableIdentifier id : views(ns)) {
        viewLocation(id).ifPresent(l -> out.put(id, l));
      }
    }
    return out;
  }

  @Override
  public boolean commitView(TableIdentifier id, ViewMetadata base, ViewMetadata metadata, String file) {
    CommitGate.pass();
    if (base == null) {
      ImmutableCreateViewRequest request = ImmutableCreateViewRequest.builder().name(id.name())
          .location(metadata.location()).schema(metadata.schema()).viewVersion(metadata.currentVersion())
          .properties(metadata.properties()).build();
      call("create view " + id, () -> client.post(paths.views(id.namespace()), request, LoadViewResponse.class,
          NO_HEADERS, ErrorHandlers.viewErrorHandler()));
      return true;
    }
    UpdateTableRequest request = new UpdateTableRequest(
        UpdateRequirements.forReplaceView(base, metadata.changes()), metadata.changes());
    try {
      call("replace view " + id, () -> client.post(paths.view(id), request, LoadViewResponse.class, NO_HEADERS,
          ErrorHandlers.viewCommitHandler()));
      return true;
    } catch (CommitFailedException e) {
      return false;
    }
  }

  @Override
  public void renameView(TableIdentifier from, TableIdentifier to) {
    RenameTableRequest request = RenameTableRequest.builder().withSource(from).withDestination(to).build();
    call("rename view " + from, () -> client.post(paths.renameView(), request, null, NO_HEADERS,
        ErrorHandlers.viewErrorHandler()));
  }

  @Override
  public boolean dropView(TableIdentifier id) {
    try {
      call("drop view " + id, () -> client.delete(paths.view(id), null, NO_HEADERS,
          ErrorHandlers.viewErrorHandler()));
      return true;
    } catch (NoSuchViewException e) {
      return false;
    }
  }

  // ------------------------------------------------------------------ namespaces

  @Override
  public List<Namespace> namespaces(Namespace parent) {
    List<Namespace> out = new ArrayList<>();
    String token = null;
    do {
      Map<String, String> query = new HashMap<>();
      if (!parent.isEmpty()) {
        query.put("parent", RESTUtil.namespaceToQueryParam(parent));
      }
      if (token != null) {
        query.put("pageToken", token);
      }
      ListNamespacesResponse page = call("list namespaces", () -> client.get(paths.namespaces(), query,
          ListNamespacesResponse.class, NO_HEADERS, ErrorHandlers.namespaceErrorHandler()));
      out.addAll(page.namespaces());
      token = page.nextPageToken();
    } while (token != null && !token.isEmpty());
    out.sort(java.util.Comparator.comparing(Namespace::toString));
    return out;
  }

  @Override
  public boolean namespaceExists(Namespace namespace) {
    if (namespace.isEmpty()) {
      return false;
    }
    try {
      namespaceProperties(namespace);
      return true;
    } catch (NoSuchNamespaceException e) {
      return false;
    }
  }

  @Override
  public Map<String, String> namespaceProperties(Namespace namespace) {
    GetNamespaceResponse r = call("load namespace " + namespace, () -> client.get(paths.namespace(namespace),
        GetNamespaceResponse.class, NO_HEADERS, ErrorHandlers.namespaceErrorHandler()));
    return r.properties();
  }

  @Override
  public void createNamespace(Namespace namespace, Map<String, String> properties) {
    CreateNamespaceRequest request = CreateNamespaceRequest.builder().withNamespace(namespace)
        .setProperties(new HashMap<>(properties)).build(); // a HashMap: Iceberg asks it whether it has a null key
    call("create namespace " + namespace, () -> client.post(paths.namespaces(), request,
        org.apache.iceberg.rest.responses.CreateNamespaceResponse.class, NO_HEADERS,
        ErrorHandlers.namespaceErrorHandler()));
  }

  @Override
  public void dropNamespace(Namespace namespace) {
    call("drop namespace " + namespace, () -> client.delete(paths.namespace(namespace), null, NO_HEADERS,
        ErrorHandlers.dropNamespaceErrorHandler()));
  }

  @Override
  public void setNamespaceProperties(Namespace namespace, Map<String, String> properties) {
    updateNamespace(namespace, UpdateNamespacePropertiesRequest.builder().updateAll(new HashMap<>(properties)).build());
  }

  @Override
  public void removeNamespaceProperties(Namespace namespace, Set<String> properties) {
    updateNamespace(namespace, UpdateNamespacePropertiesRequest.builder().removeAll(new java.util.HashSet<>(properties)).build());
  }

  private void updateNamespace(Namespace namespace, UpdateNamespacePropertiesRequest request) {
    call("update namespace " + namespace, () -> client.post(paths.namespaceProperties(namespace), request,
        org.apache.iceberg.rest.responses.UpdateNamespacePropertiesResponse.class, NO_HEADERS,
        ErrorHandlers.namespaceErrorHandler()));
  }

  // ------------------------------------------------------------------ failures

  private <T> T call(String what, Supplier<T> request) {
    return mapped(uri, what, request);
  }

  /** A commit's request: when the exchange itself fails (not the catalog), the catalog may have applied it. */
  private <T> T commit(String what, Supplier<T> request) {
    return call(what, () -> {
      try {
        return request.get();
      } catch (RESTException e) {
        if (e.getClass() == RESTException.class) {
          throw new org.apache.iceberg.exceptions.CommitStateUnknownException(e);
        }
        throw e;
      }
    });
  }

  /**
   * Runs a request, turning the catalog's own failures into SQLSTATEs; what the caller acts on (no such
   * table, a commit that lost, a commit whose outcome is unknown) passes through as Iceberg raised it.
   */
  private static <T> T mapped(String uri, String what, Supplier<T> request) {
    try {
      return request.get();
    } catch (NotAuthorizedException e) {
      throw new FloeException(SqlState.INVALID_AUTHORIZATION_SPECIFICATION, "the REST catalog at " + uri
          + " did not accept Floe's credentials to " + what + ": " + e.getMessage(), e);
    } catch (ForbiddenException e) {
      throw new FloeException(SqlState.INSUFFICIENT_PRIVILEGE, "the REST catalog at " + uri + " refused to "
          + what + ": " + e.getMessage(), e);
    } catch (ServiceFailureException | ServiceUnavailableException e) {
      throw new FloeException(SqlState.IO_ERROR, "the REST catalog at " + uri + " failed to " + what + ": "
          + e.getMessage(), e);
    } catch (org.apache.iceberg.exceptions.BadRequestException e) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "the REST catalog at " + uri + " refused to "
          + what + ": " + e.getMessage(), e);
    } catch (RESTException e) {
      throw new FloeException(SqlState.CONNECTION_EXCEPTION, "cannot reach the REST catalog at " + uri + " to "
          + what + ": " + e.getMessage(), e);
    }
  }

  private static void closeQuietly(HTTPClient http) {
    try {
      http.close();
    } catch (IOException ignored) {
      // nothing more to release
    }
  }

  @Override
  public void close() {
    try {
      session.close();
      auth.close();
    } finally {
      closeQuietly(http);
    }
  }
}
