package dev.floe;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A remote Iceberg REST catalog that holds a warehouse's tables, views and namespaces
 * (docs/rest-catalog.md, "Floe on a REST catalog"): Floe reads and commits them through it, and keeps what is
 * its own alone (sequences, file digests, tails) in the warehouse directory.
 *
 * @param uri the catalog's base URI, e.g. {@code http://host:8181}
 * @param properties Iceberg's REST client properties: {@code token} (a bearer token), or {@code credential}
 *     ({@code id:secret} for OAuth2 client credentials) with {@code oauth2-server-uri} and {@code scope};
 *     {@code warehouse} (the warehouse the catalog serves, sent to its {@code /v1/config})
 */
public record RemoteCatalog(String uri, Map<String, String> properties) {
  public RemoteCatalog {
    Objects.requireNonNull(uri, "uri");
    URI parsed;
    try {
      parsed = URI.create(uri);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("the REST catalog URI is not a URI: " + uri);
    }
    if (!"http".equals(parsed.getScheme()) && !"https".equals(parsed.getScheme()) || parsed.getHost() == null) {
      throw new IllegalArgumentException("the REST catalog URI must be http://host[:port][/path] or https://...,"
          + " was " + uri);
    }
    properties = Map.copyOf(properties);
    String credential = properties.get("credential");
    if (credential != null && !credential.contains(":")) {
      throw new IllegalArgumentException("a REST catalog credential is ID:SECRET");
    }
  }

  /** The catalog at {@code uri}, with no credentials. */
  public static RemoteCatalog at(String uri) {
    return new RemoteCatalog(uri, Map.of());
  }

  /** This catalog with one more client property. */
  public RemoteCatalog with(String property, String value) {
    Map<String, String> p = new LinkedHashMap<>(properties);
    p.put(property, value);
    return new RemoteCatalog(uri, p);
  }

  /** Never the token or the secret. */
  @Override
  public String toString() {
    return "RemoteCatalog[" + uri + "]";
  }
}
