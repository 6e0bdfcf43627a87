package dev.floe.server.auth;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * The server's TLS identity: a certificate chain and private key in PEM files (the key in PKCS#8, as
 * {@code openssl genpkey} writes it), or a self-signed certificate for development, generated once
 * with the JDK's keytool into the warehouse.
 */
public final class Tls {
  private static final char[] DEV_PASSWORD = "floe-self-signed".toCharArray();

  private Tls() {}

  /** An SSL context serving the certificate chain and key of two PEM files. */
  public static SSLContext fromPem(Path certFile, Path keyFile) throws IOException {
    try {
      CertificateFactory cf = CertificateFactory.getInstance("X.509");
      List<Certificate> chain = new ArrayList<>();
      try (InputStream in = Files.newInputStream(certFile)) {
        chain.addAll(cf.generateCertificates(in));
      }
      if (chain.isEmpty()) {
        throw new IOException("no certificate in " + certFile);
      }
      PrivateKey key = privateKey(keyFile);
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(null, null);
      ks.setKeyEntry("floe", key, DEV_PASSWORD, chain.toArray(new Certificate[0]));
      return context(ks);
    } catch (GeneralSecurityException e) {
      throw new IOException("cannot use the certificate " + certFile + " and key " + keyFile + ": " + e.getMessage(),
          e);
    }
  }

  private static PrivateKey privateKey(Path keyFile) throws IOException, GeneralSecurityException {
    PrivateFiles.check(keyFile, "TLS private key file");
    String pem = Files.readString(keyFile, StandardCharsets.US_ASCII);
    if (pem.contains("BEGIN RSA PRIVATE KEY") || pem.contains("BEGIN EC PRIVATE KEY")) {
      throw new IOException(keyFile + " holds a PKCS#1/SEC1 key; convert it to PKCS#8: "
          + "openssl pkcs8 -topk8 -nocrypt -in " + keyFile + " -out key.pk8.pem");
    }
    if (pem.contains("BEGIN ENCRYPTED PRIVATE KEY")) {
      throw new IOException(keyFile + " is encrypted; give an unencrypted PKCS#8 key");
    }
    int begin = pem.indexOf("-----BEGIN PRIVATE KEY-----");
    int end = pem.indexOf("-----END PRIVATE KEY-----");
    if (begin < 0 || end < 0) {
      throw new IOException(keyFile + " holds no PEM private key (-----BEGIN PRIVATE KEY-----)");
    }
    byte[] der = Base64.getMimeDecoder().decode(pem.substring(begin + 27, end));
    PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
    for (String algorithm : new String[] {"RSA", "EC", "Ed25519", "EdDSA"}) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(spec);
      } catch (GeneralSecurityException e) {
        // try the next algorithm
      }
    }
    throw new IOException("cannot read the private key in " + keyFile + " (RSA, EC or Ed25519 expected)");
  }

  /**
   * An SSL context with a self-signed certificate for {@code localhost}/127.0.0.1, made once with keytool
   * into {@code dir/self-signed.p12} and reused. For development: clients must not verify the server
   * (psql's {@code sslmode=require} does not).
   */
  public static SSLContext selfSigned(Path dir) throws IOException {
    Path store = dir.resolve("self-signed.p12");
    if (!Files.exists(store)) {
      Files.createDirectories(dir);
      String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
      Path tmp = dir.resolve("self-signed.p12.tmp");
      Files.deleteIfExists(tmp);
      Process p = new ProcessBuilder(keytool, "-genkeypair", "-alias", "floe", "-keyalg", "RSA", "-keysize", "2048",
          "-validity", "3650", "-dname", "CN=localhost", "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-keystore",
          tmp.toString(), "-storetype", "PKCS12", "-storepass", new String(DEV_PASSWORD), "-keypass",
          new String(DEV_PASSWORD)).redirectErrorStream(true).start();
      String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      try {
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
          throw new IOException("keytool could not make a self-signed certificate: " + output);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while making a self-signed certificate", e);
      }
      PrivateFiles.restrict(tmp);
      Files.move(tmp, store, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }
    PrivateFiles.check(store, "TLS key store");
    try {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      try (InputStream in = new ByteArrayInputStream(Files.readAllBytes(store))) {
        ks.load(in, DEV_PASSWORD);
      }
      return context(ks);
    } catch (GeneralSecurityException e) {
      throw new IOException("cannot read " + store + ": " + e.getMessage(), e);
    }
  }

  private static SSLContext context(KeyStore ks) throws GeneralSecurityException {
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, DEV_PASSWORD);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf.getKeyManagers(), null, null);
    return ctx;
  }
}
