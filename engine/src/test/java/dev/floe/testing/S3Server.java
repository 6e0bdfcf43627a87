package dev.floe.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real S3-compatible server for tests and benchmarks: s3proxy (copied to
 * {@code target/s3proxy/s3proxy.jar} by the build, or where {@code floe.s3proxy.jar} says) in its own JVM, storing objects in a local directory. It can be stopped and started again on
 * the same port and directory, to cut a client off from "S3" and bring it back.
 */
public final class S3Server implements AutoCloseable {
  public static final String ACCESS_KEY = "floe-test-access";
  public static final String SECRET_KEY = "floe-test-secret";
  public static final String BUCKET = "floe";

  private final Path dir;
  private final int port;
  private Process process;

  private S3Server(Path dir, int port) {
    this.dir = dir;
    this.port = port;
  }

  /** Starts a server storing in {@code dir}, with one bucket {@value #BUCKET}. */
  public static S3Server start(Path dir) throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Files.createDirectories(dir.resolve("data").resolve(BUCKET));
    S3Server server = new S3Server(dir, port);
    server.start();
    return server;
  }

  /**
   * Sets the AWS default credential chain's system properties to this server's keys: Floe never takes
   * credentials any other way.
   */
  public static void useCredentials() {
    System.setProperty("aws.accessKeyId", ACCESS_KEY);
    System.setProperty("aws.secretAccessKey", SECRET_KEY);
  }

  public String endpoint() {
    return "http://127.0.0.1:" + port;
  }

  /** S3FileIO properties reaching this server. */
  public Map<String, String> storage() {
    return Map.of("s3.endpoint", endpoint(), "s3.path-style-access", "true", "client.region", "us-east-1");
  }

  /**
   * Reads the published table at {@code location} as any engine would: with Iceberg's generic reader,
   * from the metadata file its {@code metadata/current} object names.
   */
  public java.util.List<org.apache.iceberg.data.Record> readPublished(String location) throws IOException {
    try (org.apache.iceberg.aws.s3.S3FileIO io = new org.apache.iceberg.aws.s3.S3FileIO()) {
      Map<String, String> props = new java.util.HashMap<>(storage());
      props.put("http-client.type", "urlconnection");
      io.initialize(props);
      String metadata;
      try (java.io.InputStream in = io.newInputFile(location + "/metadata/current").newStream()) {
        metadata = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).strip();
      }
      org.apache.iceberg.Table t = new org.apache.iceberg.BaseTable(
          new org.apache.iceberg.StaticTableOperations(metadata, io), location);
      java.util.List<org.apache.iceberg.data.Record> out = new java.util.ArrayList<>();
      try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.data.Record> it =
          org.apache.iceberg.data.IcebergGenerics.read(t).build()) {
        it.forEach(out::add);
      }
      return out;
    }
  }

  /** Where the server keeps the objects of {@code key} in the bucket. */
  public Path objects(String key) {
    return dir.resolve("data").resolve(BUCKET).resolve(key);
  }

  /** (Re)starts the server on its port and directory; returns once it accepts connections. */
  public void start() throws IOException {
    if (process != null && process.isAlive()) {
      return;
    }
    Path conf = dir.resolve("s3proxy.conf");
    Files.writeString(conf, String.join("\n",
        "s3proxy.endpoint=" + endpoint(),
        "s3proxy.authorization=aws-v2-or-v4",
        "s3proxy.identity=" + ACCESS_KEY,
        "s3proxy.credential=" + SECRET_KEY,
        "jclouds.provider=filesystem-nio2",
        "jclouds.filesystem.basedir=" + dir.resolve("data")) + "\n");
    Path jar = Path.of(System.getProperty("floe.s3proxy.jar", "target/s3proxy/s3proxy.jar")).toAbsolutePath();
    if (!Files.exists(jar)) {
      throw new IllegalStateException(jar + " is missing: the build copies it (mvn process-test-resources)");
    }
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    process = new ProcessBuilder(java, "-Xmx256m", "-cp", jar.toString(), "org.gaul.s3proxy.Main", "--properties",
        conf.toString()).redirectErrorStream(true).redirectOutput(dir.resolve("s3proxy.log").toFile()).start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("s3proxy exited: " + Files.readString(dir.resolve("s3proxy.log")));
      }
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return;
      } catch (IOException notYet) {
        try {
          Thread.sleep(50);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException(e);
        }
      }
    }
    throw new IllegalStateException("s3proxy did not start within 60 s");
  }

  /** Stops the server (kill -9): clients get connection refused until {@link #start}. */
  public void stop() throws InterruptedException {
    if (process != null) {
      process.destroyForcibly();
      process.waitFor(30, TimeUnit.SECONDS);
    }
  }

  @Override
  public void close() throws InterruptedException {
    stop();
  }
}
