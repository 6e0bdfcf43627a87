package dev.floe.cli;

import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * Where a warehouse's tables are kept, for the commands that read or change them ({@code serve}, {@code sql},
 * {@code maintain}, {@code inspect}, {@code verify}): its own catalog.db, or a remote REST catalog
 * ({@code --catalog rest --catalog-uri ...}; docs/rest-catalog.md); and where their files are: the warehouse
 * directory, or S3 ({@code --warehouse-location s3://...}; docs/object-storage.md).
 */
final class CatalogOption {
  @Option(names = "--catalog", paramLabel = "KIND",
      description = "Where the tables, views and schemas are kept: local (the warehouse's catalog.db) or rest (a "
          + "remote Iceberg REST catalog at --catalog-uri; the warehouse directory keeps Floe's own state). Default: "
          + "$FLOE_CATALOG if set, else local.")
  String catalog;

  @Option(names = "--catalog-uri", paramLabel = "URL",
      description = "The REST catalog's base URL (http://host:8181). Default: $FLOE_CATALOG_URI.")
  String catalogUri;

  @Option(names = "--catalog-token", paramLabel = "TOKEN",
      description = "A bearer token for the REST catalog (better in $FLOE_CATALOG_TOKEN than on a command line).")
  String catalogToken;

  @Option(names = "--catalog-credential", paramLabel = "ID:SECRET",
      description = "OAuth2 client credentials for the REST catalog, exchanged for tokens at --catalog-oauth2-uri "
          + "(better in $FLOE_CATALOG_CREDENTIAL than on a command line).")
  String catalogCredential;

  @Option(names = "--catalog-oauth2-uri", paramLabel = "URL",
      description = "The OAuth2 token endpoint for --catalog-credential. Default: $FLOE_CATALOG_OAUTH2_URI, else "
          + "the catalog's own /v1/oauth/tokens.")
  String catalogOauth2Uri;

  @Option(names = "--catalog-scope", paramLabel = "SCOPE",
      description = "The OAuth2 scope asked for. Default: $FLOE_CATALOG_SCOPE, else catalog.")
  String catalogScope;

  @Option(names = "--warehouse-location", paramLabel = "LOCATION",
      description = "Where the tables' files go: s3://bucket[/prefix] puts them on S3 (credentials from the AWS "
          + "environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, a profile or an instance role). With --catalog "
          + "rest it is also the warehouse the REST catalog serves (its 'warehouse' setting), and may be a local "
          + "directory. Default: $FLOE_WAREHOUSE_LOCATION, else the warehouse directory.")
  String warehouseLocation;

  @Option(names = "--s3-endpoint", paramLabel = "URL",
      description = "An S3-compatible server's endpoint (MinIO, s3proxy, ...) instead of AWS's. Default: "
          + "$FLOE_S3_ENDPOINT.")
  String s3Endpoint;

  @Option(names = "--s3-region", paramLabel = "REGION",
      description = "The S3 region. Default: $FLOE_S3_REGION, else AWS_REGION, else us-east-1.")
  String s3Region;

  @Option(names = "--s3-cache-size", paramLabel = "SIZE",
      description = "How much local disk the copies of data files fetched from S3 may take (e.g. 20GB, 512MB); the "
          + "least recently used go first. Default: $FLOE_S3_CACHE_SIZE, else 8GB.")
  String s3CacheSize;

  @Option(names = "--s3-path-style", paramLabel = "BOOLEAN", arity = "0..1", fallbackValue = "true",
      description = "Address buckets by path (http://endpoint/bucket/key), as most S3-compatible servers need. "
          + "Default: $FLOE_S3_PATH_STYLE, else true with --s3-endpoint and false without.")
  String s3PathStyle;

  @picocli.CommandLine.Spec(picocli.CommandLine.Spec.Target.MIXEE)
  picocli.CommandLine.Model.CommandSpec command;

  /**
   * The remote REST catalog the catalog options name, if {@code --catalog} is rest: each option if given, else
   * its environment variable ({@code FLOE_CATALOG_URI}), else {@code otherwise} (a server's config file).
   *
   * @throws ParameterException for options that contradict each other or a URI that is none
   */
  /**
   * Sets the remote REST catalog and the object store the options name on {@code config}: each option if
   * given, else its environment variable ({@code FLOE_CATALOG_URI}), else {@code otherwise} (a server's config
   * file).
   *
   * @throws ParameterException for options that contradict each other, or a URI or location that is none
   */
  void configure(Environment env, java.util.function.Function<String, String> otherwise,
      dev.floe.FloeConfig.Builder config) {
    java.util.function.BiFunction<String, String, String> setting = setting(env, otherwise);
    remoteCatalog(setting).ifPresent(config::remoteCatalog);
    objectStore(setting).ifPresent(config::objectStore);
  }

  private static java.util.function.BiFunction<String, String, String> setting(Environment env,
      java.util.function.Function<String, String> otherwise) {
    return (option, name) -> option != null ? option
        : env.variable("FLOE_" + name.toUpperCase(java.util.Locale.ROOT).replace('-', '_'))
            .orElseGet(() -> otherwise.apply(name));
  }

  /** The object store {@code --warehouse-location s3://...} and the {@code --s3-*} options name, if any. */
  private java.util.Optional<dev.floe.ObjectStore> objectStore(
      java.util.function.BiFunction<String, String, String> setting) {
    String location = setting.apply(warehouseLocation, "warehouse-location");
    String endpoint = setting.apply(s3Endpoint, "s3-endpoint");
    String region = setting.apply(s3Region, "s3-region");
    String pathStyle = setting.apply(s3PathStyle, "s3-path-style");
    String cacheSize = setting.apply(s3CacheSize, "s3-cache-size");
    picocli.CommandLine cl = command.commandLine();
    if (location == null || !location.strip().startsWith("s3://")) {
      if (endpoint != null || region != null || pathStyle != null || cacheSize != null) {
        throw new ParameterException(cl, "--s3-endpoint, --s3-region, --s3-path-style and --s3-cache-size need "
            + "--warehouse-location s3://bucket[/prefix]");
      }
      return java.util.Optional.empty();
    }
    java.util.Map<String, String> props = new java.util.LinkedHashMap<>();
    if (endpoint != null) {
      try {
        java.net.URI uri = java.net.URI.create(endpoint.strip());
        if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null) {
          throw new IllegalArgumentException();
        }
      } catch (IllegalArgumentException e) {
        throw new ParameterException(cl, "--s3-endpoint must be http://host[:port] or https://..., was \""
            + endpoint + "\"");
      }
      props.put("s3.endpoint", endpoint.strip());
    }
    if (region != null) {
      props.put("client.region", region.strip());
    }
    String style = pathStyle != null ? pathStyle.strip().toLowerCase(java.util.Locale.ROOT)
        : endpoint != null ? "true" : "false";
    if (!style.equals("true") && !style.equals("false")) {
      throw new ParameterException(cl, "--s3-path-style must be true or false, was \"" + pathStyle + "\"");
    }
    props.put("s3.path-style-access", style);
    long cache = dev.floe.ObjectStore.DEFAULT_CACHE_BYTES;
    if (cacheSize != null) {
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)\\s*(\\d{1,15})\\s*(b|kb|mb|gb|tb)?\\s*")
          .matcher(cacheSize);
      if (!m.matches()) {
        throw new ParameterException(cl, "--s3-cache-size must be a size such as 20GB or 512MB, was \"" + cacheSize
            + "\"");
      }
      String unit = m.group(2) == null ? "b" : m.group(2).toLowerCase(java.util.Locale.ROOT);
      int shift = switch (unit) {
        case "kb" -> 10;
        case "mb" -> 20;
        case "gb" -> 30;
        case "tb" -> 40;
        default -> 0;
      };
      long n = Long.parseLong(m.group(1));
      if (n > Long.MAX_VALUE >> shift) {
        throw new ParameterException(cl, "--s3-cache-size is too large: \"" + cacheSize + "\"");
      }
      cache = n << shift;
    }
    try {
      return java.util.Optional.of(new dev.floe.ObjectStore(location.strip(), props, cache));
    } catch (IllegalArgumentException e) {
      throw new ParameterException(cl, "--warehouse-location: " + e.getMessage());
    }
  }

  /** The remote REST catalog the catalog options name, if {@code --catalog} is rest. */
  private java.util.Optional<dev.floe.RemoteCatalog> remoteCatalog(
      java.util.function.BiFunction<String, String, String> setting) {
    String kind = java.util.Optional.ofNullable(setting.apply(catalog, "catalog")).orElse("local").strip()
        .toLowerCase(java.util.Locale.ROOT);
    String uri = setting.apply(catalogUri, "catalog-uri");
    String token = setting.apply(catalogToken, "catalog-token");
    String credential = setting.apply(catalogCredential, "catalog-credential");
    String oauth2 = setting.apply(catalogOauth2Uri, "catalog-oauth2-uri");
    String scope = setting.apply(catalogScope, "catalog-scope");
    String location = setting.apply(warehouseLocation, "warehouse-location");
    picocli.CommandLine cl = command.commandLine();
    if (kind.equals("local")) {
      if (uri != null || token != null || credential != null || oauth2 != null || scope != null) {
        throw new ParameterException(cl, "--catalog-uri, --catalog-token, --catalog-credential, "
            + "--catalog-oauth2-uri and --catalog-scope need --catalog rest");
      }
      if (location != null && !location.strip().startsWith("s3://")) {
        throw new ParameterException(cl, "--warehouse-location with --catalog local is s3://bucket[/prefix]: a local "
            + "warehouse's tables are in its directory (--warehouse)");
      }
      return java.util.Optional.empty();
    }
    if (!kind.equals("rest")) {
      throw new ParameterException(cl, "--catalog must be local or rest, was \"" + kind + "\"");
    }
    if (uri == null) {
      throw new ParameterException(cl, "--catalog rest needs --catalog-uri");
    }
    if (token != null && credential != null) {
      throw new ParameterException(cl, "--catalog-token and --catalog-credential exclude each other");
    }
    if (credential == null && (oauth2 != null || scope != null)) {
      throw new ParameterException(cl, "--catalog-oauth2-uri and --catalog-scope go with --catalog-credential");
    }
    try {
      dev.floe.RemoteCatalog remote = dev.floe.RemoteCatalog.at(uri.strip());
      if (token != null) {
        remote = remote.with("token", token);
      }
      if (credential != null) {
        remote = remote.with("credential", credential).with("scope", scope != null ? scope : "catalog")
            .with("oauth2-server-uri", oauth2 != null ? oauth2 : uri.strip().replaceAll("/+$", "") + "/v1/oauth/tokens");
      }
      if (location != null) {
        remote = remote.with("warehouse", location.strip());
      }
      return java.util.Optional.of(remote);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(cl, e.getMessage());
    }
  }

}
