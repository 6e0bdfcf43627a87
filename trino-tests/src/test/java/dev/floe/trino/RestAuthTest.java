package dev.floe.trino;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.HttpURLConnection;
import java.net.URI;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Trino on a {@code floe serve --auth scram-sha-256}: its catalog {@code floe_auth} logs in as a {@code floe user}
 * with OAuth2's client-credentials grant at Floe's token endpoint (docs/rest-catalog.md, Trino), and works as on the
 * unauthenticated server.
 */
class RestAuthTest {
  private TrinoFloe tf;

  @BeforeEach
  void start() {
    tf = TrinoFloe.get(); // the first test starts both servers; each test is skipped if no Java 24+ exists
  }

  @Test
  void trinoLogsInAsAFloeUserAndBothSidesReadEachOther() throws Exception {
    // the catalog refuses a request without a token
    HttpURLConnection anonymous = (HttpURLConnection) URI.create(tf.floeAuth.restUri + "/v1/namespaces").toURL()
        .openConnection();
    assertThat(anonymous.getResponseCode()).isEqualTo(401);
    anonymous.disconnect();

    tf.trino("CREATE SCHEMA floe_auth.secure WITH (location = '" + tf.authWarehouse.resolve("secure") + "')");
    tf.trino("CREATE TABLE floe_auth.secure.notes (id bigint, body varchar)");
    tf.trino("INSERT INTO floe_auth.secure.notes VALUES (1, 'one'), (2, 'two')");
    tf.floeAuth.exec("UPDATE secure.notes SET body = 'TWO' WHERE id = 2");
    tf.trino("DELETE FROM floe_auth.secure.notes WHERE id = 1");
    tf.floeAuth.exec("INSERT INTO secure.notes VALUES (3, 'three')");
    List<List<String>> expected = List.of(List.of("long:2", "text:TWO"), List.of("long:3", "text:three"));
    assertThat(tf.trino("SELECT id, body FROM floe_auth.secure.notes ORDER BY id")).isEqualTo(expected);
    assertThat(tf.floeAuth.rows("SELECT id, body FROM secure.notes ORDER BY id")).isEqualTo(expected);
  }
}
