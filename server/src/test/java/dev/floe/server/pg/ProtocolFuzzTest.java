package dev.floe.server.pg;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Robustness of the protocol decoder against broken and hostile clients: random bytes before and after
 * start-up, truncated, oversized and lying lengths, unknown message types, bad UTF-8, and extended-protocol
 * messages out of order. Two parts:
 *
 * <ul>
 *   <li>{@link #handcraftedMessages()}: one exact expectation per kind of bad input;
 *   <li>{@link #randomMessagesNeverCrashHangOrLeak()}: over a million messages, mostly valid ones mutated
 *       (bit flips, truncation, corrupted lengths), checked three ways. Well-formed sequences (valid
 *       messages, and ones PostgreSQL answers with an ordinary error, such as Execute of a portal that does
 *       not exist) are checked against a {@link Model} of the exact answers. Everything else is checked
 *       against what any answer must satisfy: bad bytes get an ErrorResponse (08P01, or 22021 for bad
 *       UTF-8) before the server closes the connection, never an internal error (XX000), a silent close or a
 *       hang. And the server as a whole: a control session keeps working throughout, and connections,
 *       threads and heap come back to where they were.
 * </ul>
 *
 * <p>The random part prints its seed; {@code -Dfloe.fuzz.seed=<seed>} replays a run, and
 * {@code -Dfloe.fuzz.messages=<n>} and {@code -Dfloe.fuzz.workers=<n>} scale it. It does not stop at the
 * first misbehaviour: findings are grouped by kind (one bug, one line) and reported together at the end.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ProtocolFuzzTest {
  private static final long SEED = Long.getLong("floe.fuzz.seed", new SecureRandom().nextLong());
  private static final long MESSAGES = Long.getLong("floe.fuzz.messages", 1_000_000L);
  private static final int WORKERS = Integer.getInteger("floe.fuzz.workers", 2);

  /** Small, so that "bigger than the limit" is cheap to send and a limit-sized body is cheap to accept. */
  private static final int MAX_MESSAGE = 1 << 20;
  /** How long any read waits: a server that neither answers nor closes by then hangs. */
  private static final int READ_TIMEOUT_MS = 10_000;
  /** The whole random run; far above its expected time, so only a server that stalls for good trips it. */
  private static final long RUN_DEADLINE_MS = 10 * 60_000;
  /** A worker that found this many problems stops: more of the same would only slow the run down. */
  private static final int MAX_FINDINGS_PER_WORKER = 200;
  /** Heap growth over the random run (after GC) that means something is kept per connection or message. */
  private static final long HEAP_GROWTH_LIMIT = 64L << 20;

  /** application_name of the raw sessions: {@code SHOW application_name} answering it ends each exchange. */
  private static final String SENTINEL = "floe-fuzz-sentinel";
  private static final byte[] SENTINEL_QUERY = Frames.query("SHOW application_name");
  private static final String THREE_ROWS = "SELECT * FROM (VALUES (1), (2), (3)) AS t(x)";
  /** The target of COPY FROM STDIN. */
  private static final String COPY_TABLE = "fuzz_copy";

  private static final int PROTOCOL_3 = 196608;
  private static final int SSL_REQUEST = 80877103;
  private static final int GSSENC_REQUEST = 80877104;
  private static final int CANCEL_REQUEST = 80877102;
  private static final int MAX_STARTUP = 10_000;

  /** Frontend message types PostgreSQL accepts after start-up; any other byte is a protocol violation. */
  private static final String VALID_TYPES = "QPBDECHSXdcfF";
  /** What a FATAL error after start-up may say: bad bytes (08P01) or bad UTF-8 (22021), per PgConnection. */
  private static final Set<String> PROTOCOL_CODES = Set.of("08P01", "22021");
  /** What a refused start-up may say: PgConnection.startup() and authenticate(), one code per reason. */
  private static final Set<String> STARTUP_CODES = Set.of(
      "08P01", // bad length or layout
      "22021", // a parameter that is not UTF-8
      "0A000", // unsupported protocol version, replication
      "28000", // no user
      "3D000", // unknown database
      "22023", // invalid parameter value
      "42704", // unknown parameter
      "42601", // bad options syntax
      "55P02"); // a parameter that cannot be set

  @TempDir
  static Path dir;
  PgTestServer floe;
  int port;
  /** Rows of SHOW ALL, for the model's answers to it. */
  int showAllRows;

  @BeforeAll
  void start() throws Exception {
    floe = new PgTestServer(dir.resolve("wh"),
        PgServer.Config.defaults().withPort(0).withMaxMessageBytes(MAX_MESSAGE));
    port = floe.server.port();
    try (Wire w = session()) {
      w.send(Frames.query("SHOW ALL"));
      showAllRows = (int) w.readUntilReady().stream().filter(m -> m.type() == 'D').count();
      w.send(Frames.query("CREATE TABLE " + COPY_TABLE + " (a integer, b text)"));
      assertThat(w.readUntilReadyOrClosed().errorCodes()).isEmpty();
    }
    assertThat(showAllRows).isGreaterThan(3);
  }

  @AfterAll
  void stop() {
    floe.close();
  }

  // =================================================================== handcrafted cases

  /** One exact expectation per kind of bad input; each case runs on connections of its own. */
  @TestFactory
  Stream<DynamicTest> handcraftedMessages() {
    Map<String, Case> cases = new LinkedHashMap<>();

    // ---- start-up packet
    cases.put("startup: length below 8", () -> expectFatal(raw(new Bytes().i32(4).done()), "08P01"));
    cases.put("startup: negative length", () -> expectFatal(raw(new Bytes().i32(-1).done()), "08P01"));
    cases.put("startup: length above the start-up limit is refused before the body arrives",
        () -> expectFatal(raw(new Bytes().i32(MAX_STARTUP + 1).done()), "08P01"));
    cases.put("startup: protocol 2.0 is refused with 0A000", () -> expectFatal(raw(
        Frames.startupPacket(2 << 16, Frames.params("user", "fuzz", "database", "floe"))), "0A000"));
    cases.put("startup: a random protocol version is refused with 0A000", () -> expectFatal(raw(
        Frames.startupPacket(0x1234_5678, Frames.params("user", "fuzz"))), "0A000"));
    cases.put("startup: no user", () -> expectFatal(raw(Frames.startup("database", "floe")), "28000"));
    cases.put("startup: unknown database", () -> expectFatal(raw(Frames.startup("user", "fuzz", "database",
        "nope")), "3D000"));
    cases.put("startup: bad UTF-8 in a parameter value", () -> expectFatal(raw(Frames.startupPacket(PROTOCOL_3,
        new Bytes().str("user").raw(new byte[] {'f', (byte) 0xC3, 0x28}).i8(0).i8(0).done())), "22021"));
    cases.put("startup: bad UTF-8 in a parameter name", () -> expectFatal(raw(Frames.startupPacket(PROTOCOL_3,
        new Bytes().str("user").str("fuzz").raw(new byte[] {(byte) 0xFF, 'x'}).i8(0).str("v").i8(0).done())),
        "22021"));
    cases.put("startup: parameter list without its terminator", () -> expectFatal(raw(Frames.startupPacket(
        PROTOCOL_3, new Bytes().str("user").str("fuzz").done())), "08P01"));
    cases.put("startup: a value without its NUL", () -> expectFatal(raw(Frames.startupPacket(PROTOCOL_3,
        new Bytes().str("user").raw("fuzz".getBytes(UTF_8)).done())), "08P01"));
    cases.put("startup: bytes after the terminator", () -> expectFatal(raw(Frames.startupPacket(PROTOCOL_3,
        new Bytes().raw(Frames.params("user", "fuzz")).raw(new byte[] {1, 2, 3}).done())), "08P01"));
    cases.put("startup: truncated packet, then EOF: closed without a reply", () -> {
      byte[] packet = Frames.startup("user", "fuzz", "database", "floe");
      Wire w = raw(Arrays.copyOf(packet, packet.length - 5));
      w.halfClose();
      expectSilentClose(w);
    });
    cases.put("startup: nothing at all, then EOF", () -> {
      Wire w = raw(new byte[0]);
      w.halfClose();
      expectSilentClose(w);
    });
    cases.put("startup: SSLRequest is declined, then a normal start-up works", () -> {
      try (Wire w = raw(new Bytes().i32(8).i32(SSL_REQUEST).done())) {
        assertThat(w.readByte()).as("answer to SSLRequest").isEqualTo('N');
        w.send(Frames.startup("user", "fuzz", "database", "floe", "application_name", SENTINEL));
        w.readUntilReady();
        expectWorking(w);
      }
    });
    cases.put("startup: SSLRequest with extra bytes", () -> expectFatal(raw(new Bytes().i32(12).i32(SSL_REQUEST)
        .i32(0).done()), "08P01"));
    cases.put("startup: CancelRequest for an unknown process closes without a reply", () -> {
      Wire w = raw(new Bytes().i32(16).i32(CANCEL_REQUEST).i32(999_999).i32(42).done());
      expectSilentClose(w);
    });
    cases.put("startup: random bytes", () -> {
      byte[] junk = new byte[64];
      new Random(7).nextBytes(junk);
      junk[0] = (byte) 0x9c; // a negative length
      expectFatal(raw(junk), "08P01");
    });
    cases.put("startup: protocol 3.1 with a _pq_ option is negotiated down", () -> {
      try (Wire w = raw(Frames.startupPacket(PROTOCOL_3 + 1, Frames.params("user", "fuzz", "database", "floe",
          "application_name", SENTINEL, "_pq_.fuzz", "1")))) {
        List<Msg> reply = w.readUntilReady();
        assertThat(reply.get(0).type()).as("NegotiateProtocolVersion first: " + reply).isEqualTo('v');
        expectWorking(w);
      }
    });

    // ---- framing after start-up
    cases.put("length -1", () -> expectFatal(sessionSending(Frames.header('Q', -1)), "08P01"));
    cases.put("length 0", () -> expectFatal(sessionSending(Frames.header('Q', 0)), "08P01"));
    cases.put("length 3", () -> expectFatal(sessionSending(Frames.header('S', 3)), "08P01"));
    cases.put("length above the limit is refused before the body arrives",
        () -> expectFatal(sessionSending(Frames.header('Q', MAX_MESSAGE + 5)), "08P01"));
    cases.put("length Integer.MAX_VALUE", () -> expectFatal(sessionSending(Frames.header('P', Integer.MAX_VALUE)),
        "08P01"));
    cases.put("a body of exactly the limit is accepted", () -> {
      String sql = "SHOW application_name";
      byte[] body = new byte[MAX_MESSAGE];
      Arrays.fill(body, (byte) ' ');
      System.arraycopy(sql.getBytes(UTF_8), 0, body, 0, sql.length());
      body[body.length - 1] = 0;
      try (Wire w = sessionSending(Frames.frame('Q', body))) {
        assertThat(sentinelValue(w.readUntilReady())).isEqualTo(SENTINEL);
        expectWorking(w);
      }
    });
    cases.put("truncated message, then EOF: closed without a reply", () -> {
      Wire w = sessionSending(Arrays.copyOf(Frames.query("SELECT 1 -- a comment to cut"), 12));
      w.halfClose();
      expectSilentClose(w);
    });
    cases.put("unknown message type 'A'", () -> expectFatal(sessionSending(Frames.frame('A', new byte[3])),
        "08P01"));
    cases.put("message type 0 (a second start-up packet) is refused before its 'body' arrives", () -> {
      try (Wire w = sessionSending(Frames.startup("user", "fuzz"))) {
        w.setTimeout(3000); // the length PostgreSQL would never read is 0x1700: a server that reads it waits
        expectFatal(w, "08P01");
      }
    });
    cases.put("message type 0xFF", () -> expectFatal(sessionSending(Frames.frame(0xFF, new byte[0])), "08P01"));
    cases.put("unknown message type with a large length is refused before its body arrives", () -> {
      try (Wire w = sessionSending(Frames.header('A', 512 * 1024))) {
        w.setTimeout(3000);
        expectFatal(w, "08P01");
      }
    });
    cases.put("password message after start-up", () -> expectFatal(sessionSending(Frames.frame('p',
        new Bytes().str("secret").done())), "08P01"));
    cases.put("Sync with a body", () -> expectViolation(sessionSending(Frames.frame('S', new byte[] {1}),
        Frames.sync()), "08P01"));
    cases.put("Flush with a body", () -> expectViolation(sessionSending(Frames.frame('H', new byte[] {1, 2}),
        Frames.sync()), "08P01"));
    cases.put("Terminate closes without a reply", () -> expectSilentClose(sessionSending(Frames.terminate())));

    // ---- Query
    byte[][] badUtf8 = {
        {(byte) 0xC3, 0x28}, {(byte) 0xFF}, {(byte) 0x80}, {(byte) 0xC0, (byte) 0xAF},
        {(byte) 0xED, (byte) 0xA0, (byte) 0x80}, {(byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80},
        {(byte) 0xE2, (byte) 0x82}};
    for (byte[] bad : badUtf8) {
      // read whole, the message is an ERROR and the session goes on, as in PostgreSQL
      cases.put("Query with bad UTF-8 " + hex(bad, 8), () -> expectError(sessionSending(Frames.frame('Q',
          new Bytes().raw("SELECT '".getBytes(UTF_8)).raw(bad).raw("'".getBytes(UTF_8)).i8(0).done())), "22021"));
    }
    cases.put("Query without its NUL", () -> expectError(sessionSending(Frames.frame('Q',
        "SELECT 1".getBytes(UTF_8))), "08P01"));
    cases.put("Query with bytes after its NUL", () -> expectError(sessionSending(Frames.frame('Q',
        new Bytes().str("SELECT 1").str("SELECT 2").done())), "08P01"));
    cases.put("Query with a NUL inside the text (pgjdbc's simple mode with a NUL parameter)", () -> expectError(
        sessionSending(Frames.frame('Q', new Bytes().raw("SELECT 'a".getBytes(UTF_8)).i8(0).raw("b'".getBytes(UTF_8))
            .i8(0).done())), "08P01"));
    cases.put("deeply nested query: an ordinary error, the session survives", () -> {
      String sql = "SELECT " + "(".repeat(100_000) + "1" + ")".repeat(100_000);
      try (Wire w = sessionSending(Frames.query(sql))) {
        Reply reply = w.readUntilReadyOrClosed();
        assertThat(reply.closed()).as("closed after a deeply nested query: " + reply).isFalse();
        assertThat(reply.errorCodes()).as("errors: " + reply).isNotEmpty().doesNotContain("XX000");
        expectWorking(w);
      }
    });

    // ---- extended protocol out of order
    cases.put("Execute of a portal that does not exist", () -> expectError(sessionSending(Frames.execute("nope",
        0), Frames.describe('S', "skipped"), Frames.sync()), "34000"));
    cases.put("Bind to a statement that does not exist", () -> expectError(sessionSending(Frames.bind("", "nope"),
        Frames.execute("", 0), Frames.sync()), "26000"));
    cases.put("Describe of a statement that does not exist", () -> expectError(sessionSending(
        Frames.describe('S', "nope"), Frames.sync()), "26000"));
    cases.put("Describe of a portal that does not exist", () -> expectError(sessionSending(
        Frames.describe('P', "nope"), Frames.sync()), "34000"));
    cases.put("Execute after Sync: the unnamed portal is gone", () -> {
      try (Wire w = sessionSending(Frames.parse("", "SHOW DateStyle"), Frames.bind("", ""), Frames.sync())) {
        w.readUntilReady();
        w.send(Frames.execute("", 0), Frames.sync());
        expectError(w, "34000");
      }
    });
    cases.put("Parse of a statement name in use", () -> {
      try (Wire w = sessionSending(Frames.parse("s1", "SHOW DateStyle"), Frames.sync())) {
        w.readUntilReady();
        w.send(Frames.parse("s1", "SHOW DateStyle"), Frames.sync());
        expectError(w, "42P05");
      }
    });
    cases.put("Parse with an unknown parameter type", () -> expectError(sessionSending(Frames.parse("", "SELECT $1",
        999_999), Frames.sync()), "42704"));
    cases.put("Describe with subtype 'X'", () -> expectViolation(sessionSending(Frames.describe('X', ""),
        Frames.sync()), "08P01"));
    cases.put("Close with subtype 'X'", () -> expectViolation(sessionSending(Frames.close('X', ""), Frames.sync()),
        "08P01"));
    cases.put("Close of names that do not exist is no error", () -> {
      try (Wire w = sessionSending(Frames.close('S', "nope"), Frames.close('P', "nope"), Frames.sync())) {
        assertThat(tokens(w.readUntilReady())).containsExactly("3", "3", "Z");
      }
    });
    cases.put("Bind with too few parameters", () -> expectViolation(sessionSending(Frames.parse("", "SELECT $1"),
        Frames.bind("", ""), Frames.sync()), "08P01"));
    cases.put("Bind with too many parameters", () -> expectViolation(sessionSending(Frames.parse("", "SHOW DateStyle"),
        Frames.bind("", "", new int[0], new byte[][] {"1".getBytes(UTF_8)}, new int[0]), Frames.sync()), "08P01"));
    cases.put("Bind with parameter format code 2", () -> expectViolation(sessionSending(Frames.parse("", "SELECT $1"),
        Frames.bind("", "", new int[] {2}, new byte[][] {"1".getBytes(UTF_8)}, new int[0]), Frames.sync()),
        "08P01"));
    cases.put("Bind with result format code -1", () -> expectViolation(sessionSending(Frames.parse("",
        "SHOW DateStyle"), Frames.bind("", "", new int[0], new byte[0][], new int[] {-1}), Frames.sync()), "08P01"));
    cases.put("Bind with two parameter formats for one parameter", () -> expectViolation(sessionSending(
        Frames.parse("", "SELECT $1"), Frames.bind("", "", new int[] {0, 0}, new byte[][] {"1".getBytes(UTF_8)},
            new int[0]), Frames.sync()), "08P01"));
    cases.put("Bind with a negative parameter count", () -> expectViolation(sessionSending(
        Frames.parse("", "SELECT $1"), Frames.frame('B', new Bytes().str("").str("").i16(0).i16(-1).i16(0).done()),
        Frames.sync()), "08P01"));
    cases.put("Bind with parameter length -2", () -> expectViolation(sessionSending(Frames.parse("", "SELECT $1"),
        Frames.frame('B', new Bytes().str("").str("").i16(0).i16(1).i32(-2).i16(0).done()), Frames.sync()),
        "08P01"));
    cases.put("Bind with a parameter longer than the message", () -> expectViolation(sessionSending(
        Frames.parse("", "SELECT $1"), Frames.frame('B', new Bytes().str("").str("").i16(0).i16(1).i32(1000)
            .raw(new byte[] {'1'}).i16(0).done()), Frames.sync()), "08P01"));
    cases.put("Bind with a text parameter that is not UTF-8", () -> expectViolation(sessionSending(
        Frames.parse("", "SELECT $1"), Frames.bind("", "", new int[0], new byte[][] {{'a', (byte) 0xFE}}, new int[0]),
        Frames.sync()), "22021"));
    cases.put("Bind of a binary int4 of 3 bytes: 22P03, the session survives", () -> expectError(sessionSending(
        Frames.parse("", "SELECT $1", 23), Frames.bind("", "", new int[] {1}, new byte[][] {{0, 0, 1}},
            new int[0]), Frames.sync()), "22P03"));
    cases.put("Bind of a binary time out of range: a data error, not XX000", () -> {
      byte[] micros = new Bytes().i32(0x7fff_ffff).i32(-1).done();
      try (Wire w = sessionSending(Frames.parse("", "SELECT $1", 1083), Frames.bind("", "", new int[] {1},
          new byte[][] {micros}, new int[0]), Frames.execute("", 0), Frames.sync())) {
        Reply reply = w.readUntilReadyOrClosed();
        assertThat(reply.closed()).as(reply.toString()).isFalse();
        assertThat(reply.errorCodes()).as(reply.toString()).containsAnyOf("22P03", "22008");
        expectWorking(w);
      }
    });
    cases.put("Parse with a negative parameter type count", () -> expectViolation(sessionSending(Frames.frame('P',
        new Bytes().str("").str("SELECT 1").i16(-1).done()), Frames.sync()), "08P01"));
    cases.put("Parse with a statement name that is not UTF-8", () -> expectViolation(sessionSending(Frames.frame('P',
        new Bytes().raw(new byte[] {(byte) 0xC0, 0x41}).i8(0).str("SELECT 1").i16(0).done()), Frames.sync()),
        "22021"));
    cases.put("Execute with a negative row limit returns every row, as 0 does", () -> {
      try (Wire w = sessionSending(Frames.parse("", "SHOW DateStyle"), Frames.bind("", ""), Frames.execute("", -1),
          Frames.sync())) {
        assertThat(tokens(w.readUntilReady())).containsExactly("1", "2", "D", "C", "Z");
      }
    });
    cases.put("Describe of a portal after it ran to completion", () -> {
      try (Wire w = sessionSending(Frames.parse("", "SHOW DateStyle"), Frames.bind("", ""), Frames.execute("", 0),
          Frames.describe('P', ""), Frames.sync())) {
        assertThat(tokens(w.readUntilReady())).containsExactly("1", "2", "D", "C", "T", "Z");
      }
    });
    cases.put("two portals started by Describe, then executed in turn", () -> {
      try (Wire w = sessionSending(Frames.parse("s", "SELECT 1"), Frames.bind("p1", "s"), Frames.bind("p2", "s"),
          Frames.describe('P', "p1"), Frames.describe('P', "p2"), Frames.execute("p1", 0), Frames.execute("p2", 0),
          Frames.sync())) {
        assertThat(tokens(w.readUntilReady())).containsExactly("1", "2", "2", "T", "T", "D", "C", "D", "C", "Z");
      }
    });
    cases.put("two suspended portals read alternately", () -> {
      try (Wire w = sessionSending(Frames.parse("s", THREE_ROWS), Frames.bind("p1", "s"), Frames.bind("p2", "s"),
          Frames.execute("p1", 1), Frames.execute("p2", 1), Frames.execute("p1", 0), Frames.execute("p2", 0),
          Frames.sync())) {
        assertThat(tokens(w.readUntilReady())).containsExactly("1", "2", "2", "D", "s", "D", "s", "D", "D", "C", "D",
            "D", "C", "Z");
      }
    });
    cases.put("CommandComplete counts the rows of its own Execute, as PostgreSQL's", () -> {
      try (Wire w = sessionSending(Frames.parse("s", THREE_ROWS), Frames.bind("p1", "s"), Frames.execute("p1", 2),
          Frames.execute("p1", 0), Frames.sync())) {
        List<Msg> answer = w.readUntilReady();
        assertThat(tokens(answer)).containsExactly("1", "2", "D", "D", "s", "D", "C", "Z");
        assertThat(answer.stream().filter(m -> m.type() == 'C').map(m -> new String(m.body(), UTF_8)))
            .containsExactly("SELECT 1\0");
      }
    });
    cases.put("Describe of a statement while a portal is open", () -> {
      try (Wire w = sessionSending(Frames.parse("s", "SELECT 1"), Frames.bind("p1", "s"), Frames.describe('P', "p1"),
          Frames.parse("t", "SELECT 2"), Frames.describe('S', "t"), Frames.execute("p1", 0), Frames.sync())) {
        assertThat(tokens(w.readUntilReady())).containsExactly("1", "2", "T", "1", "t", "T", "D", "C", "Z");
      }
    });
    cases.put("Query between Bind and Execute destroys the unnamed portal", () -> {
      try (Wire w = sessionSending(Frames.parse("", "SHOW DateStyle"), Frames.bind("", ""),
          Frames.query("SHOW DateStyle"), Frames.execute("", 0), Frames.sync())) {
        assertThat(tokens(w.readUntilReady())).containsExactly("1", "2", "T", "D", "C", "Z");
        assertThat(tokens(w.readUntilReady())).containsExactly("E:34000", "Z");
      }
    });
    cases.put("FunctionCall: not supported, the session survives", () -> expectError(sessionSending(
        Frames.functionCall(), Frames.sync()), "0A000"));
    cases.put("CopyData, CopyDone and CopyFail outside COPY are ignored", () -> {
      try (Wire w = sessionSending(Frames.frame('d', new byte[] {1, 2, 3}), Frames.frame('c', new byte[0]),
          Frames.frame('f', new Bytes().str("why").done()), Frames.sync())) {
        assertThat(tokens(w.readUntilReady())).containsExactly("Z");
      }
    });
    // ---- COPY FROM STDIN
    cases.put("COPY FROM STDIN, text", () -> {
      try (Wire w = sessionSending(Frames.query("COPY " + COPY_TABLE + " FROM STDIN"), Frames.copyData("1\tone\n"),
          Frames.copyDone())) {
        assertThat(tokens(w.readUntilReady())).containsExactly("G", "C", "Z");
      }
    });
    cases.put("COPY FROM STDIN, text that is not UTF-8: 22021", () -> expectViolation(sessionSending(
        Frames.query("COPY " + COPY_TABLE + " FROM STDIN"), Frames.frame('d', new byte[] {'2', '\t', (byte) 0xC3,
            0x28, '\n'}), Frames.copyDone()), "22021"));
    cases.put("COPY FROM STDIN, csv that is not UTF-8: 22021", () -> expectViolation(sessionSending(
        Frames.query("COPY " + COPY_TABLE + " FROM STDIN WITH (FORMAT csv)"), Frames.frame('d', new byte[] {'2', ',',
            (byte) 0xFF, '\n'}), Frames.copyDone()), "22021"));
    cases.put("CopyFail with a message that is not UTF-8: the COPY fails, no internal error", () -> {
      try (Wire w = sessionSending(Frames.query("COPY " + COPY_TABLE + " FROM STDIN"), Frames.frame('f',
          new byte[] {'n', 'o', (byte) 0xFF, 0}))) {
        Reply reply = w.readUntilReadyOrClosed();
        // PostgreSQL: ERROR 57014 with the message; rejecting the message as bad UTF-8 (22021) is fine too
        assertThat(reply.errorCodes()).as(reply.toString()).hasSize(1).containsAnyOf("57014", "22021");
        if (!reply.closed()) {
          expectWorking(w);
        }
      }
    });
    cases.put("a Query during COPY FROM STDIN is a protocol violation", () -> expectViolation(sessionSending(
        Frames.query("COPY " + COPY_TABLE + " FROM STDIN"), Frames.query("SELECT 1")), "08P01"));
    cases.put("COPY FROM STDIN in the extended protocol, Sync inside the data, then a Query: FATAL, never a hang",
        () -> expectFatal(sessionSending(Frames.parse("", "COPY " + COPY_TABLE + " FROM STDIN"), Frames.bind("", ""),
            Frames.execute("", 0), Frames.copyData("2\t\\N\n"), Frames.sync(), Frames.query("SELECT 1")), "08P01"));
    cases.put("an unknown message type during COPY FROM STDIN", () -> expectViolation(sessionSending(
        Frames.query("COPY " + COPY_TABLE + " FROM STDIN"), Frames.frame('A', new byte[0])), "08P01"));
    cases.put("a length above the limit during COPY FROM STDIN: FATAL, the stream is lost", () -> {
      try (Wire w = sessionSending(Frames.query("COPY " + COPY_TABLE + " FROM STDIN"),
          Frames.header('d', MAX_MESSAGE + 5))) {
        w.setTimeout(3000); // a server that goes on reading the lost stream waits for more
        expectFatal(w, "08P01");
      }
    });
    cases.put("EOF during COPY FROM STDIN: closed without a reply after CopyInResponse", () -> {
      Wire w = sessionSending(Frames.query("COPY " + COPY_TABLE + " FROM STDIN"), Frames.copyData("3\tthree\n"));
      w.halfClose();
      try (w) {
        assertThat(tokens(w.readToEnd(false).messages())).containsExactly("G");
      }
    });

    cases.put("an unknown message type while skipping to Sync is still a protocol violation", () -> {
      try (Wire w = sessionSending(Frames.execute("nope", 0), Frames.frame('A', new byte[] {1, 2, 3, 4}),
          Frames.sync())) {
        Reply reply = w.readUntilReadyOrClosed();
        assertThat(reply.closed()).as("garbage while skipping to Sync was accepted: " + reply).isTrue();
        assertThat(reply.endsWithFatal("08P01")).as(reply.toString()).isTrue();
      }
    });

    return cases.entrySet().stream().map(e -> DynamicTest.dynamicTest(e.getKey(), () -> {
      try {
        e.getValue().run();
      } catch (SocketTimeoutException hang) {
        throw new AssertionError(e.getKey() + ": the server neither answered nor closed the connection in time",
            hang);
      } catch (AssertionError | Exception failure) {
        // the case's name in the message: reports list dynamic tests by number only
        throw new AssertionError(e.getKey() + ": " + failure, failure);
      }
    }));
  }

  private interface Case {
    void run() throws Exception;
  }

  /** A connection that has sent {@code bytes} and nothing else (no start-up). */
  private Wire raw(byte[] bytes) throws IOException {
    Wire w = new Wire(port, READ_TIMEOUT_MS);
    w.send(bytes);
    w.flush();
    return w;
  }

  /** A started session. */
  private Wire session() throws IOException {
    Wire w = new Wire(port, READ_TIMEOUT_MS);
    w.send(Frames.startup("user", "fuzz", "database", "floe", "application_name", SENTINEL));
    w.readUntilReady();
    return w;
  }

  /** A started session that has sent the frames. */
  private Wire sessionSending(byte[]... frames) throws IOException {
    Wire w = session();
    w.send(frames);
    return w;
  }

  /** The server must answer with a FATAL error with the code as its last message, then close. */
  private static void expectFatal(Wire w, String code) {
    try (w) {
      Reply reply = w.readToEndQuietly();
      assertThat(reply.endsWithFatal(code) && reply.closed()).as("expected FATAL " + code + " and the close, got "
          + reply).isTrue();
    }
  }

  /**
   * An ErrorResponse with the code, for a broken message the server could still frame: FATAL and closed
   * (PgConnection's choice), or ERROR with the session working after Sync (PostgreSQL's choice for most of
   * these). Either keeps the stream in step; what matters is the code and that nothing hangs or leaks.
   */
  private static void expectViolation(Wire w, String code) throws IOException {
    try (w) {
      Reply reply = w.readUntilReadyOrClosed();
      if (reply.closed()) {
        assertThat(reply.endsWithFatal(code)).as("expected " + code + " before the close, got " + reply).isTrue();
      } else {
        assertThat(reply.errorCodes()).as(reply.toString()).containsExactly(code);
        expectWorking(w);
      }
    }
  }

  /** An ordinary ERROR with the code; the session then works. */
  private static void expectError(Wire w, String code) throws IOException {
    try (w) {
      Reply reply = w.readUntilReadyOrClosed();
      assertThat(reply.closed()).as("closed: " + reply).isFalse();
      assertThat(reply.errorCodes()).as(reply.toString()).containsExactly(code);
      assertThat(reply.messages().stream().anyMatch(Msg::isFatal)).isFalse();
      expectWorking(w);
    }
  }

  /** The session answers a query. */
  private static void expectWorking(Wire w) throws IOException {
    w.send(SENTINEL_QUERY);
    assertThat(sentinelValue(w.readUntilReady())).as("session works").isEqualTo(SENTINEL);
  }

  /** The server closes without sending anything. */
  private static void expectSilentClose(Wire w) throws IOException {
    try (w) {
      Reply reply = w.readToEnd(false);
      assertThat(reply.messages()).as("closed without a reply").isEmpty();
    }
  }

  private static String sentinelValue(List<Msg> messages) {
    return messages.stream().filter(m -> m.type() == 'D').map(Msg::firstValue).findFirst().orElse(null);
  }

  /** The answer as short tokens ("T", "D", "E:34000"), without ParameterStatus and notices. */
  private static List<String> tokens(List<Msg> messages) {
    return messages.stream().filter(m -> m.type() != 'S' && m.type() != 'N').map(Msg::token).toList();
  }

  // =================================================================== random messages

  @Test
  void randomMessagesNeverCrashHangOrLeak() throws Exception {
    System.out.printf("ProtocolFuzzTest: seed %d (replay with -Dfloe.fuzz.seed=%d), %,d messages, %d workers%n",
        SEED, SEED, MESSAGES, WORKERS);
    Findings findings = new Findings();
    Properties p = new Properties();
    p.setProperty("socketTimeout", "30");
    try (Connection control = floe.connect(p)) {
      checkControl(control, findings); // a session opened before the fuzzing, used throughout it
      // the baseline: the control session only (connections of the handcrafted cases have gone by now)
      int baselineConnections = 1;
      awaitConnections(baselineConnections, Integer.MAX_VALUE);
      // connection threads of the whole JVM (other test classes' servers too), so the end may only be lower
      int baselineThreads = connectionThreads();

      // a first round warms up classes and JIT, so the heap baseline is not the cold start
      long warmup = Math.min(MESSAGES / 50, 20_000);
      Stats stats = fuzz("warm-up", warmup, SEED, control, findings);
      long heapBefore = usedHeapAfterGc();
      stats = stats.plus(fuzz("main", MESSAGES - warmup, SEED + 1, control, findings));

      checkControl(control, findings); // and at the end
      // every fuzz connection is gone: from the server's books and as a thread
      awaitConnections(baselineConnections, baselineThreads);
      long heapAfter = usedHeapAfterGc();
      int connectionsAfter = floe.server.connectionCount();
      int threadsAfter = connectionThreads();
      System.out.printf("ProtocolFuzzTest: %,d messages on %,d connections (%,d episodes) in %.1f s (%,.0f/s); "
              + "heap %d -> %d MiB; connections %d -> %d; connection threads %d -> %d; %d kinds of findings%n",
          stats.messages(), stats.connections(), stats.episodes(), stats.nanos() / 1e9,
          stats.messages() / (stats.nanos() / 1e9), heapBefore >> 20, heapAfter >> 20, baselineConnections,
          connectionsAfter, baselineThreads, threadsAfter, findings.kinds());
      SoftAssertions soft = new SoftAssertions();
      soft.assertThat(stats.messages()).as("messages sent").isGreaterThanOrEqualTo(MESSAGES);
      soft.assertThat(connectionsAfter).as("connections left open").isEqualTo(baselineConnections);
      soft.assertThat(threadsAfter).as("connection threads left running").isLessThanOrEqualTo(baselineThreads);
      soft.assertThat(heapAfter - heapBefore).as("heap growth (bytes) over the run").isLessThan(HEAP_GROWTH_LIMIT);
      soft.assertThat(findings.isEmpty()).as("seed %d: %s", SEED, findings.report()).isTrue();
      soft.assertAll();
    }
  }

  /** Totals of a run. */
  private record Stats(long messages, long connections, long episodes, long nanos) {
    Stats plus(Stats o) {
      return new Stats(messages + o.messages, connections + o.connections, episodes + o.episodes, nanos + o.nanos);
    }
  }

  /** Runs the workers to {@code messages} in all, checking the control session while they run. */
  private Stats fuzz(String round, long messages, long seed, Connection control, Findings findings)
      throws Exception {
    long start = System.nanoTime();
    ExecutorService pool = Executors.newFixedThreadPool(WORKERS);
    List<Worker> workers = new ArrayList<>();
    List<Future<?>> done = new ArrayList<>();
    try {
      for (int k = 0; k < WORKERS; k++) {
        Worker w = new Worker(round, k, new Random(seed * 1_000_003 + k), messages / WORKERS + 1, findings);
        workers.add(w);
        done.add(pool.submit(w::run));
      }
      for (Future<?> f : done) {
        while (!f.isDone()) {
          if (System.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(RUN_DEADLINE_MS)) {
            workers.forEach(Worker::stop);
            fail("seed " + SEED + ": the random run did not finish in " + RUN_DEADLINE_MS / 1000 + " s; findings: "
                + findings.report());
          }
          checkControl(control, findings);
          Thread.sleep(200);
        }
        f.get(); // a worker's own failure (a bug in this test) surfaces here
      }
    } finally {
      pool.shutdownNow();
    }
    long sent = workers.stream().mapToLong(w -> w.sent).sum();
    long conns = workers.stream().mapToLong(w -> w.connections).sum();
    long episodes = workers.stream().mapToLong(w -> w.episode).sum();
    return new Stats(sent, conns, episodes, System.nanoTime() - start);
  }

  /** Other sessions keep working: the control session answers SELECT 1, promptly. */
  private static void checkControl(Connection control, Findings findings) {
    long t0 = System.nanoTime();
    try (Statement st = control.createStatement(); ResultSet rs = st.executeQuery("SELECT 1")) {
      if (!rs.next() || rs.getInt(1) != 1) {
        findings.add("control session: SELECT 1 gave a wrong result", "");
      }
    } catch (SQLException e) {
      findings.add("control session: SELECT 1 failed: " + e.getSQLState(), e.toString());
    }
    long ms = (System.nanoTime() - t0) / 1_000_000;
    if (ms > 5_000) {
      findings.add("control session: SELECT 1 took over 5 s", ms + " ms");
    }
  }

  /** Waits up to 10 s for the server's connections and the JVM's connection threads to come down. */
  private void awaitConnections(int connections, int threads) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while ((floe.server.connectionCount() > connections || connectionThreads() > threads)
        && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
  }

  private static int connectionThreads() {
    return (int) Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && t.getName().matches("floe-pg-\\d+")).count();
  }

  private static long usedHeapAfterGc() throws InterruptedException {
    Runtime rt = Runtime.getRuntime();
    long least = Long.MAX_VALUE;
    for (int i = 0; i < 4; i++) {
      System.gc();
      Thread.sleep(100);
      least = Math.min(least, rt.totalMemory() - rt.freeMemory());
    }
    return least;
  }

  /**
   * One client thread of the random run: a sequence of episodes, each on a connection of its own or on
   * one kept from earlier episodes while the server keeps it open. Everything it sends comes from its
   * {@link Random}, so a seed replays the same bytes (episodes after a finding differ only in which
   * connection they use).
   */
  private final class Worker {
    final String round;
    final int id;
    final Random r;
    final long quota;
    final Findings findings;
    final Set<String> avoid = new HashSet<>();
    volatile boolean stopped;
    long sent;
    long episode;
    long connections;
    int found;
    /** The connection of model batches, and what the server holds for it. */
    Wire modelWire;
    Model model;
    /** The connection of mutation episodes (kept while the server keeps it open). */
    Wire mutationWire;

    Worker(String round, int id, Random r, long quota, Findings findings) {
      this.round = round;
      this.id = id;
      this.r = r;
      this.quota = quota;
      this.findings = findings;
    }

    void stop() {
      stopped = true;
    }

    void run() {
      try {
        while (sent < quota && found < MAX_FINDINGS_PER_WORKER && !stopped) {
          episode++;
          int pick = r.nextInt(100);
          if (pick < 45) {
            modelBatch();
          } else if (pick < 75) {
            mutation(false);
          } else if (pick < 85) {
            mutation(true);
          } else if (pick < 93) {
            startup();
          } else {
            garbage();
          }
        }
      } catch (IOException e) {
        // connecting failed: the server stopped accepting
        finding("could not connect: " + e.getClass().getSimpleName(), e.toString());
      } finally {
        closeQuietly(modelWire);
        closeQuietly(mutationWire);
      }
    }

    private Wire connect() throws IOException {
      connections++;
      return new Wire(port, READ_TIMEOUT_MS);
    }

    /** A started session; a start-up failure is a finding (and null). */
    private Wire startedSession() throws IOException {
      Wire w = connect();
      w.send(Frames.startup("user", "fuzz", "database", "floe", "application_name", SENTINEL));
      sent++;
      Reply reply = w.readUntilReadyOrClosedQuietly();
      if (reply.closed() || reply.timedOut() || reply.broken() != null) {
        finding("a valid start-up failed", reply.toString());
        closeQuietly(w);
        return null;
      }
      return w;
    }

    // ---------------------------------------------------------------- episode: model batch

    /**
     * 20 to 250 well-formed messages, valid ones and ones PostgreSQL answers with an ordinary error,
     * in random order, then Sync and the sentinel query; the answers must be exactly the model's.
     */
    void modelBatch() throws IOException {
      if (modelWire == null) {
        modelWire = startedSession();
        model = new Model(showAllRows);
        if (modelWire == null) {
          return;
        }
      }
      List<Model.Step> steps = new ArrayList<>();
      int n = 20 + r.nextInt(230);
      for (int i = 0; i < n; i++) {
        steps.add(model.randomStep(r, avoid));
      }
      steps.add(model.sync());
      steps.add(model.sentinel());
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      List<String> expected = new ArrayList<>();
      List<Model.Step> owner = new ArrayList<>(); // the step each expected token answers
      for (Model.Step s : steps) {
        bytes.writeBytes(s.frame());
        for (String t : s.expected()) {
          expected.add(t);
          owner.add(s);
        }
      }
      modelWire.send(bytes.toByteArray());
      sent += steps.size();
      Reply reply = modelWire.readUntilSentinel();
      List<Msg> answers = reply.messages().stream().filter(m -> m.type() != 'S' && m.type() != 'N').toList();
      int mismatch = -1;
      for (int i = 0; i < Math.max(expected.size(), answers.size()); i++) {
        String want = i < expected.size() ? expected.get(i) : "nothing";
        String got = i < answers.size() ? answers.get(i).token() : reply.ending();
        if (!want.equals(got)) {
          mismatch = i;
          break;
        }
      }
      if (mismatch < 0 && reply.sentinel()) {
        return;
      }
      int at = mismatch < 0 ? expected.size() - 1 : Math.min(mismatch, expected.size() - 1);
      Model.Step step = owner.get(at);
      Msg got = mismatch >= 0 && mismatch < answers.size() ? answers.get(mismatch) : null;
      String gotText = got == null ? reply.ending() : got.isError() ? got.token() + " (" + normalise(got.message())
          + ")" : got.token();
      String wantText = mismatch >= 0 && mismatch < expected.size() ? expected.get(mismatch) : "nothing more";
      int index = steps.indexOf(step);
      StringBuilder context = new StringBuilder("sent (last steps up to the mismatch): ");
      for (int i = Math.max(0, index - 12); i <= index; i++) {
        context.append(steps.get(i).label()).append(i == index ? "  <== " : "; ");
      }
      finding("model: " + step.kind() + ": expected " + wantText + ", got " + gotText,
          context + "\nreceived: " + reply);
      if (step.kind().startsWith(Model.AVOIDABLE)) {
        avoid.add(step.kind()); // reported once; later batches leave it out so they test the rest
      }
      closeQuietly(modelWire);
      modelWire = null;
    }

    // ---------------------------------------------------------------- episode: mutation

    /**
     * A short valid scenario (Query; Parse/Bind/Describe/Execute/Close; FunctionCall; COPY messages; ...)
     * with one message mutated. Keeping the framing, the scenario is followed by Sync and the sentinel
     * query and the connection is kept if the server keeps it; breaking it (a lying length, a cut), the
     * client stops sending and reads to the end.
     */
    void mutation(boolean breakFraming) throws IOException {
      if (mutationWire == null) {
        mutationWire = startedSession();
        if (mutationWire == null) {
          return;
        }
      }
      List<byte[]> frames = Scenarios.random(r);
      // keeping the framing, now and then nothing is mutated: valid scenarios (odd parameter values) too
      int target = r.nextInt(frames.size() + (breakFraming ? 0 : 1));
      Mutator mutator = new Mutator(r);
      Mutation m = target == frames.size() ? new Mutation(new byte[0], "none")
          : breakFraming ? mutator.breakFraming(frames.get(target), true)
          : mutator.keepFraming(frames.get(target), true);
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      for (int i = 0; i < frames.size(); i++) {
        if (i == target) {
          bytes.writeBytes(m.bytes());
        } else if (i < target || !breakFraming || r.nextBoolean()) {
          bytes.writeBytes(frames.get(i));
        }
      }
      if (!breakFraming) {
        bytes.writeBytes(Frames.sync());
        bytes.writeBytes(SENTINEL_QUERY);
      }
      byte[] stream = bytes.toByteArray();
      FrameCheck check = FrameCheck.of(stream);
      sent += check.frames();
      mutationWire.send(stream);
      Reply reply;
      if (breakFraming) {
        mutationWire.halfClose();
        reply = mutationWire.readToEndQuietly();
      } else {
        reply = mutationWire.readUntilSentinel();
      }
      String what = target == frames.size() ? "no mutation"
          : "mutated " + describeFrame(frames.get(target)) + ": " + m.description();
      judge(breakFraming ? "mutation (framing broken)" : "mutation", what, stream, check, reply, breakFraming);
      if (breakFraming || !reply.sentinel()) {
        closeQuietly(mutationWire);
        mutationWire = null;
      }
    }

    // ---------------------------------------------------------------- episode: start-up

    /**
     * A start-up packet (sometimes after an SSLRequest), valid or mutated, or random bytes, then the
     * sentinel query, then EOF: the server must answer each packet as PostgreSQL does or refuse it
     * with one of the documented codes, and close.
     */
    void startup() throws IOException {
      byte[] packet = Scenarios.startupPacket(r);
      String what;
      int kind = r.nextInt(10);
      if (kind < 2) {
        packet = randomBytes(r, 1 + r.nextInt(r.nextBoolean() ? 16 : 300));
        what = "random bytes";
      } else if (kind < 9) {
        Mutator mutator = new Mutator(r);
        Mutation m = r.nextInt(4) == 0 ? mutator.breakFraming(packet, false) : mutator.keepFraming(packet, false);
        packet = m.bytes();
        what = "mutated start-up packet: " + m.description();
      } else {
        what = "valid start-up packet";
      }
      if (r.nextInt(8) == 0) {
        packet = concat(new Bytes().i32(8).i32(r.nextBoolean() ? SSL_REQUEST : GSSENC_REQUEST).done(), packet);
        what = "SSLRequest/GSSENCRequest, then " + what;
      }
      byte[] stream = concat(packet, SENTINEL_QUERY);
      StartupCheck expect = StartupCheck.of(packet);
      Wire w = connect();
      try (w) {
        w.send(stream);
        sent += 2;
        w.halfClose();
        Reply reply = w.readToEndQuietly(true);
        judgeStartup(what, stream, expect, reply);
      }
    }

    // ---------------------------------------------------------------- episode: garbage after start-up

    /** A started session, then random bytes (raw, or frame-shaped with random types and lengths), then EOF. */
    void garbage() throws IOException {
      Wire w = startedSession();
      if (w == null) {
        return;
      }
      byte[] junk;
      String what;
      if (r.nextBoolean()) {
        junk = randomBytes(r, 1 + r.nextInt(2000));
        what = "random bytes";
      } else {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int frames = 1 + r.nextInt(20);
        for (int i = 0; i < frames; i++) {
          int type = r.nextInt(3) == 0 ? r.nextInt(256) : VALID_TYPES.charAt(r.nextInt(VALID_TYPES.length()));
          byte[] body = randomBytes(r, r.nextInt(64));
          byte[] f = Frames.frame(type, body);
          if (r.nextInt(6) == 0) {
            f = new Mutator(r).breakFraming(f, true).bytes();
          }
          b.writeBytes(f);
        }
        junk = b.toByteArray();
        what = "frame-shaped garbage";
      }
      FrameCheck check = FrameCheck.of(junk);
      try (w) {
        w.send(junk);
        sent += check.frames();
        w.halfClose();
        judge("garbage after start-up", what, junk, check, w.readToEndQuietly(), true);
      }
    }

    // ---------------------------------------------------------------- oracles

    /**
     * What any answer to bytes after start-up must satisfy: no internal error; a FATAL error is the last
     * message and says 08P01 or 22021; a message type or length PostgreSQL rejects gets 08P01 (the
     * connection does not stay open, nor close silently); a connection closes silently only after
     * Terminate or at EOF; no hang.
     */
    void judge(String episodeKind, String what, byte[] stream, FrameCheck check, Reply reply, boolean eofSent) {
      Supplier<String> details = () -> episodeKind + ", " + what + "\nsent " + stream.length + " bytes: "
          + hex(stream, 400) + "\nframing: " + check + "\nreceived: " + reply;
      if (reply.timedOut()) {
        finding("hang: no answer and no close within " + READ_TIMEOUT_MS / 1000 + " s (" + episodeKind + ")", details);
        return;
      }
      if (reply.broken() != null) {
        finding("malformed answer: " + reply.broken(), details);
        return;
      }
      checkErrors(reply, PROTOCOL_CODES, details);
      boolean fatal = reply.last() != null && reply.last().isFatal();
      if (reply.closed()) {
        if (fatal) {
          return;
        }
        switch (check.framing()) {
          case INVALID -> finding("invalid message " + check.problem() + " closed without an ErrorResponse 08P01"
              + " (" + episodeKind + ")", details);
          case OK -> {
            if (!eofSent) {
              finding("connection closed without an ErrorResponse (" + episodeKind + ")", details);
            }
          }
          default -> {
            // Terminate, or EOF inside a message: closing silently is right
          }
        }
      } else if (check.framing() == Framing.INVALID) {
        finding("invalid message " + check.problem() + " accepted: the connection stayed open (" + episodeKind
            + ")", details);
      } else if (check.framing() == Framing.TERMINATED) {
        finding("Terminate ignored: the connection stayed open", details);
      }
    }

    /** The start-up oracle: PostgreSQL's answer to the packet, or a refusal with a documented code. */
    void judgeStartup(String what, byte[] stream, StartupCheck expect, Reply reply) {
      Supplier<String> details = () -> "start-up, " + what + "\nsent " + stream.length + " bytes: "
          + hex(stream, 400) + "\nexpected: " + expect + "\nreceived: " + reply;
      if (reply.timedOut()) {
        finding("hang at start-up: no answer and no close within " + READ_TIMEOUT_MS / 1000 + " s", details);
        return;
      }
      if (reply.broken() != null) {
        finding("malformed answer at start-up: " + reply.broken(), details);
        return;
      }
      boolean authenticated = reply.messages().stream().anyMatch(m -> m.type() == 'R');
      checkErrors(reply, authenticated ? PROTOCOL_CODES : STARTUP_CODES, details);
      Msg last = reply.last();
      if (last != null && "XX000".equals(last.code())) {
        return; // reported as an internal error
      }
      boolean fatal = last != null && last.isFatal();
      switch (expect) {
        case FATAL_PROTOCOL, FATAL_VERSION -> {
          String code = expect == StartupCheck.FATAL_PROTOCOL ? "08P01" : "0A000";
          if (authenticated || !fatal || !code.equals(last.code())) {
            finding("start-up: " + expect.description + " not refused with FATAL " + code + " (got "
                + (last == null ? "a silent close" : last.token()) + ")", details);
          }
        }
        case ANSWER -> {
          if (!authenticated && !fatal) {
            finding("start-up: a complete packet got no answer before the close", details);
          }
        }
        default -> {
          // cut short or a CancelRequest: closing without a word is right (an 08P01 is too)
        }
      }
    }

    /** No internal errors; a FATAL error is the last message and carries one of the codes. */
    void checkErrors(Reply reply, Set<String> fatalCodes, Supplier<String> details) {
      List<Msg> messages = reply.messages();
      for (int i = 0; i < messages.size(); i++) {
        Msg m = messages.get(i);
        if (!m.isError()) {
          continue;
        }
        if ("XX000".equals(m.code())) {
          finding("internal error (XX000): " + normalise(m.message()), details);
        } else if (m.isFatal() && !fatalCodes.contains(m.code())) {
          finding("FATAL with unexpected SQLSTATE " + m.code() + ": " + normalise(m.message()), details);
        }
        if (m.isFatal() && i != messages.size() - 1) {
          finding("messages after a FATAL error", details);
        }
      }
    }

    void finding(String kind, String details) {
      finding(kind, () -> details);
    }

    /** Records a finding; the details are only formatted for the first of its kind. */
    void finding(String kind, Supplier<String> details) {
      found++;
      findings.add(kind, () -> "seed " + SEED + ", " + round + " round, worker " + id + ", episode " + episode + ": "
          + details.get());
    }
  }

  // =================================================================== the model

  /**
   * What the server holds for one connection (prepared statements, portals, whether it is skipping to
   * Sync), enough to predict its exact answer to every well-formed message: PostgreSQL's answers, and
   * PgConnection's where the protocol leaves a choice (it looks ahead, so a portal whose last row was
   * sent completes instead of suspending).
   */
  static final class Model {
    /**
     * Step kinds a worker leaves out once they failed (see Worker.avoid), so that one frequent bug does not
     * end nearly every later batch before the rest of it is tested.
     */
    static final String AVOIDABLE = "(avoidable) ";
    static final String DESCRIBE_FINISHED_PORTAL = AVOIDABLE + "Describe of a portal that ran to completion";
    static final String NEGATIVE_ROW_LIMIT = AVOIDABLE + "Execute with a negative row limit";

    /** A statement the model knows the answers to: {@code rows} -1 for no result set, MAX_VALUE for SHOW ALL. */
    enum Sql {
      SHOW("SHOW DateStyle", 1, 0, 30),
      SHOW_ALL("SHOW ALL", Integer.MAX_VALUE, 0, 10),
      SET("SET extra_float_digits = 1", -1, 0, 12),
      EMPTY("", -1, 0, 6),
      SELECT("SELECT 1", 1, 0, 6),
      THREE_ROWS(ProtocolFuzzTest.THREE_ROWS, 3, 0, 4),
      /** A parameter of unknown type: bound as text. */
      UNTYPED_PARAM("SELECT $1::int4", 1, 1, 5),
      /** A parameter declared int4: bound as text or binary. */
      TYPED_PARAM("SELECT $1", 1, 1, 6),
      /** Parse fails: 42601. */
      TWO_STATEMENTS("SHOW DateStyle; SHOW DateStyle", -1, 0, 4);

      final String text;
      final int rows;
      final int params;
      final int weight;

      Sql(String text, int rows, int params, int weight) {
        this.text = text;
        this.rows = rows;
        this.params = params;
        this.weight = weight;
      }

      static Sql random(Random r) {
        int total = Arrays.stream(values()).mapToInt(s -> s.weight).sum();
        int k = r.nextInt(total);
        for (Sql s : values()) {
          k -= s.weight;
          if (k < 0) {
            return s;
          }
        }
        throw new AssertionError();
      }
    }

    static final class Portal {
      final Sql sql;
      final String statement;
      int remaining;
      boolean done;

      Portal(Sql sql, String statement, int rows) {
        this.sql = sql;
        this.statement = statement;
        this.remaining = rows;
      }
    }

    /** One message, a label for reports, and the answer tokens the server must send for it. */
    record Step(String kind, String label, byte[] frame, List<String> expected) {}

    private static final String[] STATEMENTS = {"", "s1", "s2", "s3"};
    private static final String[] PORTALS = {"", "p1", "p2"};
    private final int showAllRows;
    /** TreeMaps: iteration order, and so the replay of a seed, does not depend on hashing. */
    private final Map<String, Sql> statements = new TreeMap<>();
    private final Map<String, Portal> portals = new TreeMap<>();
    /**
     * Portals whose statement was closed or replaced: PostgreSQL's documentation says that closes them,
     * PgConnection keeps them. Their names are not used until Sync or Query ends every portal.
     */
    private final Set<String> unsure = new HashSet<>();
    private boolean skip;

    Model(int showAllRows) {
      this.showAllRows = showAllRows;
    }

    Step randomStep(Random r, Set<String> avoid) {
      int k = r.nextInt(100);
      if (k < 14) {
        return parse(r);
      } else if (k < 30) {
        return bind(r);
      } else if (k < 40) {
        return describe(r, avoid);
      } else if (k < 56) {
        return execute(r, avoid);
      } else if (k < 63) {
        return close(r);
      } else if (k < 74) {
        return sync();
      } else if (k < 78) {
        return new Step("Flush", "Flush", Frames.flush(), List.of());
      } else if (k < 85) {
        int type = "dcf".charAt(r.nextInt(3));
        return new Step("COPY message outside COPY", "Copy" + (char) type, Frames.frame(type, randomBytes(r,
            r.nextInt(16))), List.of());
      } else if (k < 87) {
        return answer("FunctionCall", "FunctionCall", Frames.functionCall(), () -> error("0A000"));
      } else if (k < 91) {
        return query(r);
      } else {
        return missingName(r);
      }
    }

    /** An Execute, Bind or Describe of a name that does not exist: an ERROR, then skipping to Sync. */
    private Step missingName(Random r) {
      return switch (r.nextInt(4)) {
        case 0 -> answer("Execute of a missing portal", "Execute(nope)", Frames.execute("nope", 0),
            () -> error("34000"));
        case 1 -> answer("Bind to a missing statement", "Bind(nope)", Frames.bind("", "nope"), () -> error("26000"));
        case 2 -> answer("Describe of a missing statement", "DescribeS(nope)", Frames.describe('S', "nope"),
            () -> error("26000"));
        default -> answer("Describe of a missing portal", "DescribeP(nope)", Frames.describe('P', "nope"),
            () -> error("34000"));
      };
    }

    private Step parse(Random r) {
      String name = STATEMENTS[r.nextInt(STATEMENTS.length)];
      Sql sql = Sql.random(r);
      byte[] frame = sql == Sql.TYPED_PARAM ? Frames.parse(name, sql.text, 23) : Frames.parse(name, sql.text);
      return answer("Parse", "Parse(" + name + ", " + sql + ")", frame, () -> {
        if (!name.isEmpty() && statements.containsKey(name)) {
          return error("42P05");
        }
        if (name.isEmpty()) {
          // PostgreSQL drops the unnamed statement before parsing; PgConnection keeps it on failure, so its
          // state is unknown: the model forgets it (and never names it until it is parsed again)
          forgetStatement("");
        }
        if (sql == Sql.TWO_STATEMENTS) {
          return error("42601");
        }
        statements.put(name, sql);
        return List.of("1");
      });
    }

    private Step bind(Random r) {
      String portal = portalName(r);
      String name = existingOr(r, statements.keySet(), "nostmt");
      Sql sql = statements.get(name);
      int params = sql == null ? r.nextInt(2) : sql.params;
      int[] formats = new int[0];
      byte[][] values = new byte[params][];
      String shown = "";
      if (params == 1) {
        int v = r.nextInt(1000) - 500;
        if (r.nextInt(8) == 0) {
          values[0] = null;
          shown = "NULL";
        } else if (sql == Sql.TYPED_PARAM && r.nextBoolean()) {
          formats = new int[] {1};
          values[0] = new Bytes().i32(v).done();
          shown = "int4 " + v;
        } else {
          values[0] = Integer.toString(v).getBytes(UTF_8);
          shown = "'" + v + "'";
        }
      }
      int[] results = switch (r.nextInt(3)) {
        case 0 -> new int[0];
        case 1 -> new int[] {0};
        default -> new int[] {1};
      };
      byte[] frame = Frames.bind(portal, name, formats, values, results);
      return answer("Bind", "Bind(" + portal + ", " + name + ", " + shown + ")", frame, () -> {
        if (sql == null) {
          return error("26000");
        }
        if (!portal.isEmpty() && portals.containsKey(portal)) {
          return error("42P03");
        }
        portals.put(portal, new Portal(sql, name, sql == Sql.SHOW_ALL ? showAllRows : Math.max(sql.rows, 0)));
        return List.of("2");
      });
    }

    private Step describe(Random r, Set<String> avoid) {
      if (r.nextBoolean()) {
        String name = existingOr(r, statements.keySet(), "nostmt");
        return answer("Describe statement", "DescribeS(" + name + ")", Frames.describe('S', name), () -> {
          Sql sql = statements.get(name);
          if (sql == null) {
            return error("26000");
          }
          return List.of("t", sql.rows >= 0 ? "T" : "n");
        });
      }
      String name = existingOr(r, portals.keySet(), "noportal");
      Portal p = portals.get(name);
      if (p != null && p.done && p.sql.rows >= 0 && avoid.contains(DESCRIBE_FINISHED_PORTAL)) {
        return sync();
      }
      String kind = p != null && p.done && p.sql.rows >= 0 && !skip ? DESCRIBE_FINISHED_PORTAL : "Describe portal";
      return answer(kind, "DescribeP(" + name + ")", Frames.describe('P', name), () -> {
        if (p == null) {
          return error("34000");
        }
        return List.of(p.sql.rows >= 0 ? "T" : "n");
      });
    }

    private Step execute(Random r, Set<String> avoid) {
      String name = existingOr(r, portals.keySet(), "noportal");
      int k = r.nextInt(1000);
      int max = k < 500 ? 0 : k < 990 ? 1 + r.nextInt(3) : k < 998 || avoid.contains(NEGATIVE_ROW_LIMIT)
          ? Integer.MAX_VALUE : -1 - r.nextInt(3);
      Portal p = portals.get(name);
      boolean negative = max < 0 && p != null && !p.done && p.remaining > 0 && !skip;
      String kind = negative ? NEGATIVE_ROW_LIMIT : "Execute";
      return answer(kind, "Execute(" + name + ", " + max + ")", Frames.execute(name, max), () -> {
        if (p == null) {
          return error("34000");
        }
        if (p.sql == Sql.EMPTY) {
          return List.of("I");
        }
        if (p.done || p.sql.rows < 0) {
          p.done = true;
          return List.of("C");
        }
        // a row limit of 0, or below 0, means all rows (PostgreSQL's exec_execute_message)
        int n = max <= 0 ? p.remaining : Math.min(max, p.remaining);
        p.remaining -= n;
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          out.add("D");
        }
        if (max > 0 && n == max && p.remaining > 0) {
          out.add("s");
        } else {
          out.add("C");
          p.done = true;
        }
        return out;
      });
    }

    private Step close(Random r) {
      boolean statement = r.nextBoolean();
      String name = statement ? STATEMENTS[r.nextInt(STATEMENTS.length)] : portalName(r);
      if (statement && name.isEmpty() && !statements.containsKey("")) {
        name = "s1"; // the unnamed statement's state may be unknown (see parse)
      }
      String n = name;
      return answer("Close", "Close" + (statement ? "S(" : "P(") + name + ")", Frames.close(statement ? 'S' : 'P',
          name), () -> {
            if (statement) {
              forgetStatement(n);
            } else {
              portals.remove(n);
            }
            return List.of("3");
          });
    }

    /** A statement goes away: the model forgets it, and the portals made from it (see {@link #unsure}). */
    private void forgetStatement(String name) {
      statements.remove(name);
      portals.entrySet().removeIf(e -> {
        if (e.getValue().statement.equals(name)) {
          unsure.add(e.getKey());
          return true;
        }
        return false;
      });
    }

    Step sync() {
      skip = false;
      portals.clear(); // outside a transaction block, portals end with their implicit transaction
      unsure.clear();
      return new Step("Sync", "Sync", Frames.sync(), List.of("Z"));
    }

    private Step query(Random r) {
      String[][] queries = {
          {"SHOW DateStyle", "T", "D", "C", "Z"}, {"", "I", "Z"}, {"SELECT 1", "T", "D", "C", "Z"},
          {"SHOW DateStyle; SHOW DateStyle", "T", "D", "C", "T", "D", "C", "Z"}, {"SELEC 1", "E:42601", "Z"}};
      String[] q = queries[r.nextInt(queries.length)];
      return answer("Query", "Query(" + q[0] + ")", Frames.query(q[0]), () -> {
        queryEffects();
        return List.of(q).subList(1, q.length);
      });
    }

    /** The sentinel query that ends a batch; its answer is read apart from the model's. */
    Step sentinel() {
      queryEffects();
      return new Step("sentinel", "Query(SHOW application_name)", SENTINEL_QUERY, List.of());
    }

    /**
     * A simple Query ends the implicit transaction: portals are gone. PostgreSQL also drops the unnamed
     * statement and PgConnection does not, so the model forgets it.
     */
    private void queryEffects() {
      portals.clear();
      unsure.clear();
      statements.remove("");
    }

    private interface Answer {
      List<String> apply();
    }

    /** A message of the extended protocol: nothing while skipping to Sync; an error starts skipping. */
    private Step answer(String kind, String label, byte[] frame, Answer answer) {
      if (skip) {
        return new Step(kind, label, frame, List.of());
      }
      List<String> out = answer.apply();
      if (out.size() == 1 && out.get(0).startsWith("E:") && !kind.equals("Query")) {
        skip = true;
      }
      return new Step(kind, label, frame, out);
    }

    private static List<String> error(String code) {
      return List.of("E:" + code);
    }

    /** A portal name to bind or close: any but the unsure ones (then a fresh name). */
    private String portalName(Random r) {
      String name = PORTALS[r.nextInt(PORTALS.length)];
      for (int k = 9; unsure.contains(name); k++) {
        name = "p" + k;
      }
      return name;
    }

    private static String existingOr(Random r, Set<String> names, String missing) {
      if (names.isEmpty() || r.nextInt(10) == 0) {
        return missing;
      }
      return new ArrayList<>(names).get(r.nextInt(names.size()));
    }
  }

  // =================================================================== scenarios and mutations

  /** Valid message sequences to mutate (or, now and then, to send as they are). */
  static final class Scenarios {
    private static final String[] QUERIES = {
        "SELECT 1", "SHOW DateStyle", "SET extra_float_digits = 2", "SHOW ALL", "",
        "SELECT 'h\u00e9llo' AS t, E'\\x41' AS e, $$dollar$$ AS d -- comment\n/* block */"};

    static List<byte[]> random(Random r) {
      return switch (r.nextInt(12)) {
        case 0, 1 -> List.of(Frames.query(QUERIES[r.nextInt(QUERIES.length)]));
        case 2, 3, 4 -> extended(r);
        case 5 -> {
          String name = r.nextBoolean() ? "" : "m1";
          yield List.of(Frames.parse(name, "SELECT $1::text, $2", 0, 17), Frames.describe('S', name),
              Frames.close('S', name));
        }
        case 6 -> List.of(Frames.functionCall());
        case 7 -> List.of(Frames.frame('d', new byte[] {1, 2, 3}), Frames.frame('c', new byte[0]),
            Frames.frame('f', new Bytes().str("stop").done()));
        case 8 -> List.of(r.nextBoolean() ? Frames.flush() : Frames.sync());
        case 9 -> List.of(r.nextInt(4) == 0 ? Frames.terminate() : Frames.query("SHOW DateStyle"));
        // COPY commits to the table: rarer than the rest, which costs no I/O
        case 10 -> r.nextInt(8) == 0 ? copyIn(r) : typedParameter(r);
        default -> typedParameter(r);
      };
    }

    /** Parse, Bind with parameters in text or binary, Describe, Execute, Close. */
    private static List<byte[]> extended(Random r) {
      String stmt = r.nextBoolean() ? "" : "m" + r.nextInt(3);
      String portal = r.nextBoolean() ? "" : "q" + r.nextInt(3);
      byte[] parse;
      byte[] bind;
      switch (r.nextInt(4)) {
        case 0 -> {
          parse = Frames.parse(stmt, "SELECT $1::int4");
          bind = Frames.bind(portal, stmt, new int[0], new byte[][] {"42".getBytes(UTF_8)}, new int[] {0});
        }
        case 1 -> {
          parse = Frames.parse(stmt, "SELECT $1, $2", 23, 17);
          bind = Frames.bind(portal, stmt, new int[] {1, 1}, new byte[][] {new Bytes().i32(7).done(), {0, 1, 2}},
              new int[] {1});
        }
        case 2 -> {
          parse = Frames.parse(stmt, "SELECT $1 AS t", 25);
          bind = Frames.bind(portal, stmt, new int[] {0}, new byte[][] {"caf\u00e9".getBytes(UTF_8)}, new int[0]);
        }
        default -> {
          parse = Frames.parse(stmt, "SHOW DateStyle");
          bind = Frames.bind(portal, stmt);
        }
      }
      return List.of(parse, bind, Frames.describe('P', portal), Frames.execute(portal, r.nextInt(3)),
          Frames.close('P', portal), Frames.close('S', stmt));
    }

    /** COPY FROM STDIN (text or csv, simple or extended protocol): its data, then CopyDone or CopyFail. */
    private static List<byte[]> copyIn(Random r) {
      boolean csv = r.nextBoolean();
      String sql = "COPY " + COPY_TABLE + " FROM STDIN" + (csv ? " WITH (FORMAT csv)" : "");
      List<byte[]> frames = new ArrayList<>();
      if (r.nextBoolean()) {
        frames.add(Frames.query(sql));
      } else {
        frames.addAll(List.of(Frames.parse("", sql), Frames.bind("", ""), Frames.execute("", 0)));
      }
      String[] rows = csv ? new String[] {"1,one\n", "2,\n", "3,\"th,ree\"\n", ",\"\"\n"}
          : new String[] {"1\tone\n", "2\t\\N\n", "3\tt\\x41b\\tc\n", "\\N\t\\\\\n"};
      for (int i = r.nextInt(3); i >= 0; i--) {
        frames.add(Frames.copyData(rows[r.nextInt(rows.length)]));
      }
      frames.add(r.nextInt(6) == 0 ? Frames.frame('f', new Bytes().str("client gave up").done()) : Frames.copyDone());
      return frames;
    }

    /** Type OIDs a parameter can be declared as, with their binary size (-1: variable). */
    private static final int[][] TYPES = {
        {16, 1}, {21, 2}, {23, 4}, {20, 8}, {700, 4}, {701, 8}, {17, -1}, {1082, 4}, {1083, 8}, {1114, 8},
        {1184, 8}, {2950, 16}, {1700, -1}, {1186, 16}, {25, -1}, {26, 4}, {1043, -1}};
    private static final String[] TEXTS = {
        "42", "-1", "1e400", "NaN", "-Infinity", "2024-02-30", "24:00:01", "infinity", "\\x0g", "\\xff", "\\\\",
        "\\123", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "1 day", "99999999999999999999999999", "", "true", "maybe",
        "2024-02-29 13:14:15+02", "'; DROP TABLE x; --", "0x10", " 7 ", "1_000"};

    /**
     * Parse, Bind and Execute of {@code SELECT $1} with a declared parameter type and an odd value: binary
     * of the right or a wrong size, or text that may not parse as the type. Any answer but an internal error
     * is right.
     */
    private static List<byte[]> typedParameter(Random r) {
      int[] type = TYPES[r.nextInt(TYPES.length)];
      boolean binary = r.nextBoolean();
      byte[] value;
      if (!binary) {
        value = TEXTS[r.nextInt(TEXTS.length)].getBytes(UTF_8);
      } else if (type[0] == 1700 && r.nextBoolean()) {
        // a numeric with a consistent length, and random weight, sign, scale and digits
        int digits = r.nextInt(5);
        Bytes b = new Bytes().i16(digits).i16(r.nextInt(65536)).i16(new int[] {0, 0x4000, 0xC000, 0xD000, 0xF000,
            r.nextInt(65536)}[r.nextInt(6)]).i16(r.nextInt(65536));
        for (int i = 0; i < digits; i++) {
          b.i16(r.nextBoolean() ? r.nextInt(10_000) : r.nextInt(65536));
        }
        value = b.done();
      } else {
        value = randomBytes(r, type[1] < 0 || r.nextInt(5) == 0 ? r.nextInt(20) : type[1]);
      }
      return List.of(Frames.parse("", "SELECT $1", type[0]), Frames.bind("", "", new int[] {binary ? 1 : 0},
          new byte[][] {value}, new int[0]), Frames.execute("", 0));
    }

    /** A valid start-up packet with a random choice of parameters. */
    static byte[] startupPacket(Random r) {
      List<String> kv = new ArrayList<>(List.of("user", "fuzz", "database", "floe"));
      String[][] optional = {
          {"application_name", SENTINEL}, {"client_encoding", "UTF8"}, {"DateStyle", "ISO, MDY"},
          {"TimeZone", "UTC"}, {"extra_float_digits", "2"}, {"options", "-c extra_float_digits=3"},
          {"_pq_.fuzz", "1"}, {"replication", "false"}};
      for (String[] o : optional) {
        if (r.nextInt(3) == 0) {
          kv.add(o[0]);
          kv.add(o[1]);
        }
      }
      int version = r.nextInt(10) == 0 ? PROTOCOL_3 + 1 : PROTOCOL_3;
      return Frames.startupPacket(version, Frames.params(kv.toArray(new String[0])));
    }
  }

  record Mutation(byte[] bytes, String description) {}

  /** Turns valid messages into broken ones, saying what it did (for the report). */
  static final class Mutator {
    private static final byte[] BYTES = {0, 1, (byte) 0x7f, (byte) 0x80, (byte) 0xff, (byte) 0xc0, (byte) 0xc3,
        (byte) 0xed, (byte) 0xf4, (byte) 0xf8, (byte) 0xfe, '$', '\'', '"', ';', '\\'};
    private static final int[] INTS = {0, 1, -1, 2, 3, 4, 7, 8, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x10000,
        Integer.MAX_VALUE, Integer.MIN_VALUE, MAX_MESSAGE, MAX_MESSAGE + 1, MAX_MESSAGE + 4};
    private static final int[] LENGTHS = {-1, 0, 1, 3, 4, 7, 8, MAX_MESSAGE + 4, MAX_MESSAGE + 5, Integer.MAX_VALUE,
        Integer.MIN_VALUE, MAX_STARTUP, MAX_STARTUP + 1, 65536};
    private static final int[] VERSIONS = {PROTOCOL_3, PROTOCOL_3 + 1, 2 << 16, 4 << 16, SSL_REQUEST, GSSENC_REQUEST,
        CANCEL_REQUEST, 0, -1};
    private static final byte[][] BAD_UTF8 = {
        {(byte) 0xC3, 0x28}, {(byte) 0xFF}, {(byte) 0x80}, {(byte) 0xC0, (byte) 0xAF},
        {(byte) 0xED, (byte) 0xA0, (byte) 0x80}, {(byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80},
        {(byte) 0xE2, (byte) 0x82}};

    private final Random r;

    Mutator(Random r) {
      this.r = r;
    }

    /**
     * One or two changes that keep the length field true to the body, so the server stays in step with
     * the stream: bit flips, odd bytes, a cut or longer body, bad UTF-8, odd counts and lengths inside the
     * body, a missing NUL, another type byte (or, for a start-up packet, another protocol version).
     *
     * @param typed a message with a type byte (false: a start-up packet)
     */
    Mutation keepFraming(byte[] packet, boolean typed) {
      int header = typed ? 5 : 4;
      int type = typed ? packet[0] & 0xff : -1;
      byte[] body = Arrays.copyOfRange(packet, header, packet.length);
      List<String> did = new ArrayList<>();
      int changes = r.nextInt(3) == 0 ? 2 : 1;
      for (int c = 0; c < changes; c++) {
        switch (r.nextInt(8)) {
          case 0 -> {
            if (body.length > 0) {
              int i = r.nextInt(body.length);
              int bit = r.nextInt(8);
              body[i] ^= (byte) (1 << bit);
              did.add("flip bit " + bit + " of body byte " + i);
            }
          }
          case 1 -> {
            if (body.length > 0) {
              int i = r.nextInt(body.length);
              body[i] = BYTES[r.nextInt(BYTES.length)];
              did.add("body byte " + i + " = " + hex(new byte[] {body[i]}, 1));
            }
          }
          case 2 -> {
            int n = r.nextInt(body.length + 1);
            body = Arrays.copyOf(body, n);
            did.add("body cut to " + n + " bytes");
          }
          case 3 -> {
            byte[] extra = randomBytes(r, 1 + r.nextInt(8));
            body = concat(body, extra);
            did.add(extra.length + " random bytes appended");
          }
          case 4 -> {
            byte[] bad = BAD_UTF8[r.nextInt(BAD_UTF8.length)];
            int at = nulPosition(body);
            if (at < 0 || r.nextInt(4) == 0) {
              at = r.nextInt(body.length + 1);
            }
            body = concat(Arrays.copyOf(body, at), bad, Arrays.copyOfRange(body, at, body.length));
            did.add("bad UTF-8 " + hex(bad, 8) + " inserted at " + at);
          }
          case 5 -> {
            if (body.length >= 2) {
              int width = body.length >= 4 && r.nextBoolean() ? 4 : 2;
              int at = r.nextInt(body.length - width + 1);
              int v = INTS[r.nextInt(INTS.length)];
              putInt(body, at, v, width);
              did.add("int" + width * 8 + " at " + at + " = " + v);
            }
          }
          case 6 -> {
            int at = nulPosition(body);
            if (at >= 0) {
              body[at] = 'x';
              did.add("NUL at " + at + " replaced");
            }
          }
          default -> {
            if (typed) {
              type = r.nextBoolean() ? VALID_TYPES.charAt(r.nextInt(VALID_TYPES.length())) : r.nextInt(256);
              did.add("type byte = " + printable(type));
            } else if (body.length >= 4) {
              int v = VERSIONS[r.nextInt(VERSIONS.length)];
              putInt(body, 0, v, 4);
              did.add("protocol code = " + v);
            }
          }
        }
      }
      byte[] out = typed ? Frames.frame(type, body) : concat(new Bytes().i32(body.length + 4).done(), body);
      return new Mutation(out, did.isEmpty() ? "unchanged" : String.join(", ", did));
    }

    /** A change that breaks the framing: a lying length field, a cut, or random bytes after the message. */
    Mutation breakFraming(byte[] packet, boolean typed) {
      int at = typed ? 1 : 0;
      int length = readInt(packet, at);
      byte[] out = packet.clone();
      switch (r.nextInt(4)) {
        case 0 -> {
          int d = r.nextInt(16) - 8;
          d = d == 0 ? 1 : d;
          putInt(out, at, length + d, 4);
          return new Mutation(out, "length " + length + " -> " + (length + d));
        }
        case 1 -> {
          int v = r.nextInt(4) == 0 ? r.nextInt() : LENGTHS[r.nextInt(LENGTHS.length)];
          v = v == length ? -1 : v;
          putInt(out, at, v, 4);
          return new Mutation(out, "length " + length + " -> " + v);
        }
        case 2 -> {
          int cut = 1 + r.nextInt(packet.length - 1);
          return new Mutation(Arrays.copyOf(packet, cut), "cut after " + cut + " of " + packet.length + " bytes");
        }
        default -> {
          byte[] junk = randomBytes(r, 1 + r.nextInt(64));
          return new Mutation(concat(packet, junk), "followed by " + junk.length + " random bytes");
        }
      }
    }

    /** Where a random NUL (a string's end) is, or -1. */
    private int nulPosition(byte[] body) {
      List<Integer> nuls = new ArrayList<>();
      for (int i = 0; i < body.length; i++) {
        if (body[i] == 0) {
          nuls.add(i);
        }
      }
      return nuls.isEmpty() ? -1 : nuls.get(r.nextInt(nuls.size()));
    }
  }

  // =================================================================== expectations from framing alone

  enum Framing { OK, TERMINATED, TRUNCATED, INVALID }

  /**
   * How PostgreSQL frames a byte stream sent after start-up: message by message until a type byte it
   * does not know or a length outside [4, 4 + limit] (a protocol violation: FATAL 08P01; PostgreSQL checks
   * the type before it reads the length), a Terminate, or the end (inside a message or between two).
   */
  record FrameCheck(Framing framing, int frames, String reason) {
    /** What is wrong with an INVALID stream, in words that do not vary with the bytes. */
    String problem() {
      return reason.contains("type byte") ? "type byte" : "length";
    }

    static FrameCheck of(byte[] s) {
      int p = 0;
      int n = 0;
      while (p < s.length) {
        n++;
        int type = s[p] & 0xff;
        if (VALID_TYPES.indexOf(type) < 0) {
          return new FrameCheck(Framing.INVALID, n, "message " + n + " has type byte " + printable(type));
        }
        if (s.length - p < 5) {
          return new FrameCheck(Framing.TRUNCATED, n, "EOF in the length of message " + n);
        }
        int length = readInt(s, p + 1);
        if (length < 4 || length - 4 > MAX_MESSAGE) {
          return new FrameCheck(Framing.INVALID, n, "message " + n + " (" + printable(type) + ") has length "
              + length);
        }
        if (s.length - p - 1 < length) {
          return new FrameCheck(Framing.TRUNCATED, n, "EOF in the body of message " + n);
        }
        if (type == 'X') {
          return new FrameCheck(Framing.TERMINATED, n, "Terminate is message " + n);
        }
        p += 1 + length;
      }
      return new FrameCheck(Framing.OK, Math.max(n, 1), n + " messages");
    }
  }

  /** What a start-up stream must get, from its packets' lengths and codes alone (as PostgreSQL reads them). */
  enum StartupCheck {
    FATAL_PROTOCOL("a bad start-up length or layout"),
    FATAL_VERSION("an unsupported protocol version"),
    /** Cut short, or a CancelRequest: the server may close without a word. */
    SILENT("a cut packet or CancelRequest"),
    /** A complete v3 packet: authentication, or a refusal with a documented code. */
    ANSWER("a complete v3 start-up packet");

    final String description;

    StartupCheck(String description) {
      this.description = description;
    }

    static StartupCheck of(byte[] s) {
      int p = 0;
      while (true) {
        if (s.length - p < 4) {
          return SILENT;
        }
        int length = readInt(s, p);
        if (length < 8 || length > MAX_STARTUP) {
          return FATAL_PROTOCOL;
        }
        if (s.length - p < length) {
          return SILENT;
        }
        int code = readInt(s, p + 4);
        if (code == CANCEL_REQUEST) {
          return SILENT;
        }
        if (code == SSL_REQUEST || code == GSSENC_REQUEST) {
          if (length != 8) {
            return FATAL_PROTOCOL;
          }
          p += 8;
          continue;
        }
        return code >>> 16 == 3 ? ANSWER : FATAL_VERSION;
      }
    }
  }

  // =================================================================== the raw client

  /** A protocol client driven by hand over a plain socket. */
  static final class Wire implements Closeable {
    private final Socket socket;
    private final DataInputStream in;
    private final BufferedOutputStream out;
    private boolean writeFailed;

    Wire(int port, int timeoutMs) throws IOException {
      socket = new Socket();
      socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), timeoutMs);
      socket.setSoTimeout(timeoutMs);
      socket.setTcpNoDelay(true);
      in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 64 * 1024));
      out = new BufferedOutputStream(socket.getOutputStream(), 64 * 1024);
    }

    void setTimeout(int ms) throws SocketException {
      socket.setSoTimeout(ms);
    }

    /**
     * Sends and flushes. A server that already hung up is not an error here: what it answered before
     * is judged when reading.
     */
    void send(byte[]... frames) {
      try {
        if (!writeFailed) {
          for (byte[] f : frames) {
            out.write(f);
          }
          out.flush();
        }
      } catch (IOException e) {
        writeFailed = true;
      }
    }

    void flush() {
      send();
    }

    /** EOF for the server, while its answers can still be read. */
    void halfClose() {
      try {
        socket.shutdownOutput();
      } catch (IOException e) {
        // already closed by the server
      }
    }

    int readByte() throws IOException {
      return in.read();
    }

    /**
     * The next message; null once the server closed the connection. {@code sslAnswer}: before
     * authentication, a lone 'N' is the answer to SSLRequest (reported as type '~').
     */
    Msg read(boolean sslAnswer) throws IOException {
      int type;
      try {
        type = in.read();
      } catch (SocketException e) {
        return null; // reset: the server closed with our bytes unread
      }
      if (type < 0) {
        return null;
      }
      if (sslAnswer && type == 'N') {
        return new Msg('~', new byte[0]);
      }
      try {
        int length = in.readInt();
        if (length < 4 || length > 64 << 20) {
          throw new MalformedAnswer("message '" + printable(type) + "' with length " + length);
        }
        byte[] body = new byte[length - 4];
        in.readFully(body);
        return new Msg((char) type, body);
      } catch (EOFException | SocketException e) {
        throw new MalformedAnswer("the connection closed inside a message '" + printable(type) + "'");
      }
    }

    /** Up to ReadyForQuery; fails on a close or an error before it (for sessions that must work). */
    List<Msg> readUntilReady() throws IOException {
      Reply reply = readUntilReadyOrClosed();
      if (reply.closed()) {
        throw new AssertionError("session closed: " + reply);
      }
      return reply.messages();
    }

    /** Up to ReadyForQuery or the close; a timeout propagates (a hang fails the case). */
    Reply readUntilReadyOrClosed() throws IOException {
      List<Msg> messages = new ArrayList<>();
      while (true) {
        Msg m = read(false);
        if (m == null) {
          return new Reply(messages, true, false, false, null);
        }
        messages.add(m);
        if (m.type() == 'Z') {
          return new Reply(messages, false, false, false, null);
        }
      }
    }

    /** As readUntilReadyOrClosed, with a timeout or malformed answer in the Reply instead of thrown. */
    Reply readUntilReadyOrClosedQuietly() {
      List<Msg> messages = new ArrayList<>();
      try {
        while (true) {
          Msg m = read(false);
          if (m == null) {
            return new Reply(messages, true, false, false, null);
          }
          messages.add(m);
          if (m.type() == 'Z') {
            return new Reply(messages, false, false, false, null);
          }
        }
      } catch (SocketTimeoutException e) {
        return new Reply(messages, false, true, false, null);
      } catch (MalformedAnswer e) {
        return new Reply(messages, false, false, false, e.getMessage());
      } catch (IOException e) {
        return new Reply(messages, true, false, false, null);
      }
    }

    /** Everything until the server closes; a timeout propagates. */
    Reply readToEnd(boolean startup) throws IOException {
      List<Msg> messages = new ArrayList<>();
      while (true) {
        Msg m = read(startup && messages.stream().noneMatch(x -> x.type() == 'R'));
        if (m == null) {
          return new Reply(messages, true, false, false, null);
        }
        messages.add(m);
      }
    }

    Reply readToEndQuietly() {
      return readToEndQuietly(false);
    }

    /** Everything until the server closes, with a timeout or malformed answer in the Reply. */
    Reply readToEndQuietly(boolean startup) {
      List<Msg> messages = new ArrayList<>();
      try {
        boolean authenticated = false;
        while (true) {
          Msg m = read(startup && !authenticated);
          if (m == null) {
            return new Reply(messages, true, false, false, null);
          }
          authenticated |= m.type() == 'R';
          messages.add(m);
        }
      } catch (SocketTimeoutException e) {
        return new Reply(messages, false, true, false, null);
      } catch (MalformedAnswer e) {
        return new Reply(messages, false, false, false, e.getMessage());
      } catch (IOException e) {
        return new Reply(messages, true, false, false, null);
      }
    }

    /**
     * Until the sentinel query's answer (its RowDescription, DataRow, CommandComplete and ReadyForQuery
     * are left out of the Reply) or the close.
     */
    Reply readUntilSentinel() {
      List<Msg> messages = new ArrayList<>();
      try {
        while (true) {
          Msg m = read(false);
          if (m == null) {
            return new Reply(messages, true, false, false, null);
          }
          if (m.type() == 'D' && SENTINEL.equals(m.firstValue())) {
            if (!messages.isEmpty() && messages.get(messages.size() - 1).type() == 'T') {
              messages.remove(messages.size() - 1);
            }
            Msg complete = read(false);
            Msg ready = read(false);
            if (complete == null || complete.type() != 'C' || ready == null || ready.type() != 'Z') {
              return new Reply(messages, false, false, false, "the sentinel query's answer ended with "
                  + complete + ", " + ready);
            }
            return new Reply(messages, false, false, true, null);
          }
          messages.add(m);
        }
      } catch (SocketTimeoutException e) {
        return new Reply(messages, false, true, false, null);
      } catch (MalformedAnswer e) {
        return new Reply(messages, false, false, false, e.getMessage());
      } catch (IOException e) {
        return new Reply(messages, true, false, false, null);
      }
    }

    @Override
    public void close() {
      try {
        socket.close();
      } catch (IOException e) {
        // closing anyway
      }
    }
  }

  /** An answer that breaks the protocol (the server's fault, never the client's). */
  static final class MalformedAnswer extends IOException {
    MalformedAnswer(String message) {
      super(message);
    }
  }

  /**
   * What came back: the messages, and how it ended (closed, timed out, the sentinel's answer seen, or a
   * malformed answer).
   */
  record Reply(List<Msg> messages, boolean closed, boolean timedOut, boolean sentinel, String broken) {
    Msg last() {
      return messages.isEmpty() ? null : messages.get(messages.size() - 1);
    }

    /** The last message is a FATAL error with the code. */
    boolean endsWithFatal(String code) {
      Msg last = last();
      return last != null && last.isFatal() && code.equals(last.code());
    }

    List<String> errorCodes() {
      return messages.stream().filter(Msg::isError).map(Msg::code).toList();
    }

    String ending() {
      return timedOut ? "a hang" : broken != null ? "a malformed answer" : closed ? "the close" : "the sentinel";
    }

    @Override
    public String toString() {
      List<Msg> shown = messages.size() <= 40 ? messages : messages.subList(messages.size() - 40, messages.size());
      return (messages.size() > 40 ? "[... " + (messages.size() - 40) + " more, " : "[") + shown.stream()
          .map(Msg::toString).reduce((a, b) -> a + ", " + b).orElse("") + "] then " + ending()
          + (broken != null ? " (" + broken + ")" : "");
    }
  }

  /** One backend message. */
  record Msg(char type, byte[] body) {
    /** A field of an ErrorResponse or NoticeResponse ('V' severity, 'C' code, 'M' message). */
    String field(char code) {
      int i = 0;
      while (i < body.length && body[i] != 0) {
        char f = (char) body[i];
        int end = i + 1;
        while (end < body.length && body[end] != 0) {
          end++;
        }
        if (f == code) {
          return new String(body, i + 1, end - i - 1, UTF_8);
        }
        i = end + 1;
      }
      return null;
    }

    boolean isError() {
      return type == 'E';
    }

    boolean isFatal() {
      return isError() && "FATAL".equals(field('V') != null ? field('V') : field('S'));
    }

    String code() {
      return field('C');
    }

    String message() {
      return field('M');
    }

    /** The first column of a DataRow, as text. */
    String firstValue() {
      if (type != 'D' || body.length < 6) {
        return null;
      }
      int length = readInt(body, 2);
      return length < 0 || 6 + length > body.length ? null : new String(body, 6, length, UTF_8);
    }

    String token() {
      return isError() ? "E:" + code() : String.valueOf(type);
    }

    @Override
    public String toString() {
      return switch (type) {
        case 'E' -> (isFatal() ? "FATAL " : "ERROR ") + code() + " \"" + message() + "\"";
        case 'C' -> "C(" + new String(body, 0, Math.max(0, body.length - 1), UTF_8) + ")";
        case '~' -> "N(ssl refused)";
        default -> String.valueOf(type);
      };
    }
  }

  // =================================================================== building messages

  /** Big-endian fields, as the protocol has them. */
  static final class Bytes {
    private final ByteArrayOutputStream b = new ByteArrayOutputStream();

    Bytes i8(int v) {
      b.write(v);
      return this;
    }

    Bytes i16(int v) {
      b.write(v >>> 8);
      b.write(v);
      return this;
    }

    Bytes i32(int v) {
      i16(v >>> 16);
      return i16(v);
    }

    Bytes raw(byte[] v) {
      b.writeBytes(v);
      return this;
    }

    Bytes str(String s) {
      return raw(s.getBytes(UTF_8)).i8(0);
    }

    byte[] done() {
      return b.toByteArray();
    }
  }

  /** Frontend messages. */
  static final class Frames {
    static byte[] frame(int type, byte[] body) {
      return new Bytes().i8(type).i32(body.length + 4).raw(body).done();
    }

    /** A type byte and a length, with no body: for lengths that lie. */
    static byte[] header(int type, int length) {
      return new Bytes().i8(type).i32(length).done();
    }

    static byte[] params(String... namesAndValues) {
      Bytes b = new Bytes();
      for (String s : namesAndValues) {
        b.str(s);
      }
      return b.i8(0).done();
    }

    static byte[] startupPacket(int code, byte[] rest) {
      return new Bytes().i32(8 + rest.length).i32(code).raw(rest).done();
    }

    static byte[] startup(String... namesAndValues) {
      return startupPacket(PROTOCOL_3, params(namesAndValues));
    }

    static byte[] query(String sql) {
      return frame('Q', new Bytes().str(sql).done());
    }

    static byte[] parse(String name, String sql, int... parameterTypes) {
      Bytes b = new Bytes().str(name).str(sql).i16(parameterTypes.length);
      for (int oid : parameterTypes) {
        b.i32(oid);
      }
      return frame('P', b.done());
    }

    static byte[] bind(String portal, String statement) {
      return bind(portal, statement, new int[0], new byte[0][], new int[0]);
    }

    static byte[] bind(String portal, String statement, int[] formats, byte[][] values, int[] resultFormats) {
      Bytes b = new Bytes().str(portal).str(statement).i16(formats.length);
      for (int f : formats) {
        b.i16(f);
      }
      b.i16(values.length);
      for (byte[] v : values) {
        if (v == null) {
          b.i32(-1);
        } else {
          b.i32(v.length).raw(v);
        }
      }
      b.i16(resultFormats.length);
      for (int f : resultFormats) {
        b.i16(f);
      }
      return frame('B', b.done());
    }

    static byte[] describe(char what, String name) {
      return frame('D', new Bytes().i8(what).str(name).done());
    }

    static byte[] execute(String portal, int maxRows) {
      return frame('E', new Bytes().str(portal).i32(maxRows).done());
    }

    static byte[] close(char what, String name) {
      return frame('C', new Bytes().i8(what).str(name).done());
    }

    static byte[] sync() {
      return frame('S', new byte[0]);
    }

    static byte[] flush() {
      return frame('H', new byte[0]);
    }

    static byte[] terminate() {
      return frame('X', new byte[0]);
    }

    static byte[] copyData(String data) {
      return frame('d', data.getBytes(UTF_8));
    }

    static byte[] copyDone() {
      return frame('c', new byte[0]);
    }

    /** FunctionCall of OID 1 with no arguments. */
    static byte[] functionCall() {
      return frame('F', new Bytes().i32(1).i16(0).i16(0).i16(0).done());
    }
  }

  // =================================================================== findings and small helpers

  /** Misbehaviour found by the random run, grouped by kind: one line, a count and a first example each. */
  static final class Findings {
    private final Map<String, String> examples = new LinkedHashMap<>();
    private final Map<String, Integer> counts = new LinkedHashMap<>();

    void add(String kind, String example) {
      add(kind, () -> example);
    }

    synchronized void add(String kind, Supplier<String> example) {
      if (!examples.containsKey(kind)) {
        examples.put(kind, example.get());
      }
      counts.merge(kind, 1, Integer::sum);
    }

    synchronized boolean isEmpty() {
      return examples.isEmpty();
    }

    synchronized int kinds() {
      return examples.size();
    }

    synchronized String report() {
      StringBuilder b = new StringBuilder(examples.size() + " kinds of misbehaviour:");
      for (Map.Entry<String, String> e : examples.entrySet()) {
        b.append("\n\n* ").append(e.getKey()).append(" (").append(counts.get(e.getKey())).append("x)\n  first: ")
            .append(e.getValue().replace("\n", "\n  "));
      }
      return b.toString();
    }
  }

  /** An error message with numbers and quoted names blanked, so one bug groups as one kind. */
  private static String normalise(String message) {
    if (message == null) {
      return "";
    }
    String s = message.replaceAll("\"[^\"]*\"", "\"…\"").replaceAll("0x\\p{XDigit}+", "0xN")
        .replaceAll("-?\\b\\d+\\b", "N");
    return s.length() > 140 ? s.substring(0, 140) + "…" : s;
  }

  private static String describeFrame(byte[] frame) {
    return "'" + printable(frame[0] & 0xff) + "' message of " + frame.length + " bytes";
  }

  private static String printable(int b) {
    return b >= 0x20 && b < 0x7f ? String.valueOf((char) b) : String.format("0x%02x", b);
  }

  static String hex(byte[] b, int max) {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < Math.min(b.length, max); i++) {
      s.append(String.format("%02x", b[i] & 0xff));
      if (i % 4 == 3) {
        s.append(' ');
      }
    }
    return (b.length > max ? s + "…" : s.toString()).trim();
  }

  static int readInt(byte[] b, int at) {
    return ((b[at] & 0xff) << 24) | ((b[at + 1] & 0xff) << 16) | ((b[at + 2] & 0xff) << 8) | (b[at + 3] & 0xff);
  }

  static void putInt(byte[] b, int at, int v, int width) {
    for (int i = 0; i < width; i++) {
      b[at + i] = (byte) (v >>> (8 * (width - 1 - i)));
    }
  }

  static byte[] randomBytes(Random r, int n) {
    byte[] b = new byte[n];
    r.nextBytes(b);
    return b;
  }

  static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      b.writeBytes(p);
    }
    return b.toByteArray();
  }

  private static void closeQuietly(Closeable c) {
    if (c != null) {
      try {
        c.close();
      } catch (IOException e) {
        // closing anyway
      }
    }
  }
}
