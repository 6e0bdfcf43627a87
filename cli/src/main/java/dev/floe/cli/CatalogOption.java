package dev.floe.cli;

import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * Where a warehouse's tables are kept, for the commands that read or change them ({@code serve}, {@code sql},
 * {@code maintain}, {@code inspect}, {@code verify}): its own catalog.db, or a remote REST catalog
 * ({@code --catalog rest --catalog-uri ...}; docs/rest-catalog.md).
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
      description = "The warehouse the REST catalog serves (its 'warehouse' setting); a local directory is also "
          + "where tables may be read. Default: $FLOE_WAREHOUSE_LOCATION, else the catalog's default.")
  String warehouseLocation;

  @picocli.CommandLine.Spec(picocli.CommandLine.Spec.Target.MIXEE)
  picocli.CommandLine.Model.CommandSpec command;

  /**
   * The remote REST catalog the catalog options name, if {@code --catalog} is rest: each option if given, else
   * its environment variable ({@code FLOE_CATALOG_URI}), else {@code otherwise} (a server's config file).
   *
   * @throws ParameterException for options that contradict each other or a URI that is none
   */
  java.util.Optional<dev.floe.RemoteCatalog> remoteCatalog(Environment env,
      java.util.function.Function<String, String> otherwise) {
    java.util.function.BiFunction<String, String, String> setting = (option, name) -> option != null ? option
        : env.variable("FLOE_" + name.toUpperCase(java.util.Locale.ROOT).replace('-', '_'))
            .orElseGet(() -> otherwise.apply(name));
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
      if (uri != null || token != null || credential != null || oauth2 != null || scope != null || location != null) {
        throw new ParameterException(cl, "--catalog-uri, --catalog-token, --catalog-credential, "
            + "--catalog-oauth2-uri, --catalog-scope and --warehouse-location need --catalog rest");
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
