package dev.floe.catalog;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.aws.s3.S3FileIO;

/**
 * How Floe reaches S3 (or an S3-compatible server): one {@link S3FileIO} configuration for a warehouse's
 * tables and for published tails alike, with credentials only ever from the AWS default chain.
 */
public final class S3 {
  private static final Set<String> CREDENTIALS = Set.of("s3.access-key-id", "s3.secret-access-key",
      "s3.session-token", "client.credentials-provider", "rest.access-key-id", "rest.secret-access-key",
      "rest.session-token");

  private S3() {}

  /**
   * An S3FileIO for {@code storage} (S3FileIO properties: endpoint, path-style access, region), over the one
   * HTTP client Floe ships, failing fast when the store cannot be reached.
   */
  public static S3FileIO fileIO(Map<String, String> storage) {
    Map<String, String> props = new HashMap<>();
    props.put("http-client.type", "urlconnection");
    props.put("http-client.urlconnection.connection-timeout-ms", "5000");
    props.put("http-client.urlconnection.socket-timeout-ms", "30000");
    // a machine cut off from S3 learns it within a second or two, not after Iceberg's default 2-20 s waits
    props.put("s3.retry.num-retries", "3");
    props.put("s3.retry.min-wait-ms", "100");
    props.put("s3.retry.max-wait-ms", "1000");
    if (System.getenv("AWS_REGION") == null && System.getProperty("aws.region") == null) {
      props.put("client.region", "us-east-1"); // S3-compatible servers ignore it; AWS redirects
    }
    props.putAll(storage);
    S3FileIO io = new S3FileIO();
    io.initialize(props);
    return io;
  }

  /**
   * Why {@code storage} is not acceptable, or empty: credentials come from the AWS default chain
   * (environment, system properties, profile, instance role) and are never written down.
   */
  public static Optional<String> propertiesProblem(Map<String, String> storage) {
    for (String k : storage.keySet()) {
      String n = k.toLowerCase(Locale.ROOT);
      if (CREDENTIALS.contains(n) || n.startsWith("client.credentials-provider.") || n.contains("secret")) {
        return Optional.of("storage property \"" + k + "\" is not accepted: credentials come from the AWS default "
            + "chain (environment, system properties, profile, instance role) and are never stored");
      }
    }
    return Optional.empty();
  }

  /** Refuses credentials among {@code storage} (22023). */
  public static void checkProperties(Map<String, String> storage) {
    propertiesProblem(storage).ifPresent(p -> {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, p);
    });
  }

  /**
   * The failure to reach object storage that {@code failure} is (its cause chain holds an AWS SDK exception, the
   * way S3FileIO fails), as 58030 naming what the store said; empty for any other failure.
   */
  public static Optional<FloeException> unreachable(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof FloeException) {
        return Optional.empty(); // already says what happened
      }
      if (t instanceof software.amazon.awssdk.core.exception.SdkException sdk) {
        String message = sdk.getMessage() == null ? sdk.getClass().getSimpleName() : sdk.getMessage();
        return Optional.of(new FloeException(SqlState.IO_ERROR, "could not reach object storage: " + message, null,
            "Run the statement again once the store answers.", 0, failure));
      }
    }
    return Optional.empty();
  }

  /** Whether a location is on object storage ({@code s3://}, {@code s3a://}, ...), not the local file system. */
  public static boolean remote(String location) {
    return location.contains("://") && !location.startsWith("file:");
  }
}
