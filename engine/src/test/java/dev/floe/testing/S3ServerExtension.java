package dev.floe.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One {@link S3Server} for a test class, with the AWS default chain set to its keys: started before the class's
 * tests in a temporary directory of its own, stopped and deleted after them.
 *
 * <pre>{@code @RegisterExtension static final S3ServerExtension S3 = new S3ServerExtension();}</pre>
 */
public final class S3ServerExtension implements BeforeAllCallback, AfterAllCallback {
  private S3Server server;
  private Path dir;

  /** The running server. */
  public S3Server server() {
    if (server == null) {
      throw new IllegalStateException("the S3 server starts before the class's tests");
    }
    return server;
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    S3Server.useCredentials();
    dir = Files.createTempDirectory("floe-s3-");
    server = S3Server.start(dir);
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    if (server != null) {
      server.close();
      server = null;
    }
    if (dir != null) {
      try (var files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }
}
