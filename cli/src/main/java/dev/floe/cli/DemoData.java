package dev.floe.cli;

import java.time.LocalDate;
import java.time.Month;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.List;

/**
 * The demo dataset: a {@code zones} dimension of 265 taxi zones and a {@code trips} fact table of taxi rides
 * through 2024. Every value derives from the trip id through DuckDB's {@code hash}, so the same row count
 * always gives the same data, and DuckDB generates it in place: nothing is downloaded.
 *
 * <p>Trip {@code i} of {@code n} falls on day {@code i * 366 / n} of the (leap) year, so ids grow with the
 * date and each month is one contiguous id range, loaded as one or more commits.
 */
final class DemoData {
  static final int YEAR = 2024;
  static final int DAYS = LocalDate.of(YEAR, 1, 1).lengthOfYear();
  static final int ZONES = 265;
  /** Above this, a month is loaded in several commits, so that progress moves and memory stays bounded. */
  static final long MAX_ROWS_PER_COMMIT = 1_000_000;

  private DemoData() {}

  static final String CREATE_ZONES = """
      CREATE TABLE zones (
        zone_id integer NOT NULL,
        borough text NOT NULL,
        zone_name text NOT NULL,
        service_zone text NOT NULL
      )""";

  static final String CREATE_TRIPS = """
      CREATE TABLE trips (
        trip_id bigint NOT NULL,
        vendor_id smallint NOT NULL,
        pickup_at timestamptz NOT NULL,
        dropoff_at timestamptz NOT NULL,
        pickup_zone_id integer NOT NULL,
        dropoff_zone_id integer NOT NULL,
        passenger_count smallint,
        distance_miles double precision NOT NULL,
        fare numeric(8,2) NOT NULL,
        tip numeric(8,2) NOT NULL,
        tolls numeric(8,2) NOT NULL,
        total numeric(8,2) NOT NULL,
        payment_type varchar(12) NOT NULL
      ) WITH (
        format_version = 2,
        partitioning = ARRAY['month(pickup_at)'],
        sorted_by = ARRAY['pickup_at']
      )""";

  /** Boroughs in zone id order with how many zones each has; the last three zones are the airports. */
  private static final Object[][] BOROUGHS = {
      {"Manhattan", 69, "Yellow Zone", new String[] {
          "Midtown", "Chelsea", "Harlem", "SoHo", "Tribeca", "Upper East Side", "Upper West Side",
          "Greenwich Village", "East Village", "Financial District", "Murray Hill", "Gramercy", "Inwood",
          "Washington Heights", "Lower East Side", "Hell's Kitchen", "Kips Bay"}},
      {"Brooklyn", 61, "Boro Zone", new String[] {
          "Williamsburg", "Park Slope", "Bushwick", "DUMBO", "Bay Ridge", "Flatbush", "Crown Heights",
          "Bedford-Stuyvesant", "Red Hook", "Greenpoint", "Sunset Park", "Coney Island", "Brighton Beach"}},
      {"Queens", 67, "Boro Zone", new String[] {
          "Astoria", "Flushing", "Jamaica", "Long Island City", "Forest Hills", "Jackson Heights", "Elmhurst",
          "Sunnyside", "Ridgewood", "Bayside", "Rockaway", "Woodside", "Corona"}},
      {"Bronx", 43, "Boro Zone", new String[] {
          "Fordham", "Riverdale", "Mott Haven", "Pelham Bay", "Throgs Neck", "Kingsbridge", "Morrisania",
          "Soundview", "Parkchester", "Hunts Point"}},
      {"Staten Island", 22, "Boro Zone", new String[] {
          "St. George", "Tottenville", "Great Kills", "New Dorp", "Port Richmond", "Stapleton"}},
  };
  private static final String[] QUARTERS = {"North", "South", "East", "West", "Center", "Park"};

  /** Zone ids of the airports trips start and end at more often: JFK and LaGuardia (Queens), Newark (EWR). */
  static final int JFK = 263;
  static final int LAGUARDIA = 264;
  static final int NEWARK = 265;

  /** {@code INSERT INTO zones VALUES ...} with all 265 zones. */
  static String insertZones() {
    List<String> rows = new ArrayList<>();
    int id = 1;
    for (Object[] borough : BOROUGHS) {
      String name = (String) borough[0];
      int count = (Integer) borough[1];
      String service = (String) borough[2];
      String[] places = (String[]) borough[3];
      for (int k = 0; k < count; k++) {
        String place = places[k % places.length];
        String zone = k < places.length ? place : place + " " + QUARTERS[(k / places.length - 1) % QUARTERS.length];
        rows.add(row(id++, name, zone, service));
      }
    }
    rows.add(row(JFK, "Queens", "JFK Airport", "Airports"));
    rows.add(row(LAGUARDIA, "Queens", "LaGuardia Airport", "Airports"));
    rows.add(row(NEWARK, "EWR", "Newark Airport", "EWR"));
    if (rows.size() != ZONES) {
      throw new IllegalStateException("zone list has " + rows.size() + " zones, expected " + ZONES);
    }
    return "INSERT INTO zones VALUES\n  " + String.join(",\n  ", rows);
  }

  private static String row(int id, String borough, String zone, String service) {
    return "(" + id + ", " + quote(borough) + ", " + quote(zone) + ", " + quote(service) + ")";
  }

  private static String quote(String s) {
    return "'" + s.replace("'", "''") + "'";
  }

  /**
   * One commit of the load: trip ids {@code [from, to)} of a dataset of {@code total} trips.
   *
   * @param month the month these trips were picked up in
   */
  record Batch(YearMonth month, long from, long to) {
    long rows() {
      return to - from;
    }
  }

  /** The commits that load {@code total} trips: each month's ids, split at {@link #MAX_ROWS_PER_COMMIT}. */
  static List<Batch> batches(long total) {
    List<Batch> batches = new ArrayList<>();
    for (Month m : Month.values()) {
      YearMonth month = YearMonth.of(YEAR, m);
      long from = firstTripOfDay(month.atDay(1).getDayOfYear() - 1, total);
      long to = m == Month.DECEMBER ? total : firstTripOfDay(month.plusMonths(1).atDay(1).getDayOfYear() - 1, total);
      for (long start = from; start < to; start += MAX_ROWS_PER_COMMIT) {
        batches.add(new Batch(month, start, Math.min(to, start + MAX_ROWS_PER_COMMIT)));
      }
    }
    return batches;
  }

  /** The smallest id {@code i} with {@code i * DAYS / total >= day}. */
  private static long firstTripOfDay(long day, long total) {
    return Math.floorDiv(Math.multiplyExact(day, total) + DAYS - 1, DAYS);
  }

  /** A uniform number in [0, 1) drawn from the trip id, independent for each {@code stream}. */
  private static String uniform(int stream) {
    return "(hash(i, " + stream + ") % 1000000)::DOUBLE / 1000000";
  }

  /**
   * {@code INSERT INTO trips ... SELECT} generating one batch. The shapes are plausible rather than
   * measured: pickups peak in the morning and evening rush hours, are few at night, and concentrate in Manhattan and at the
   * airports, distances are exponential, fares follow a metered tariff, card payments tip 12 to 28 percent.
   */
  static String insertTrips(Batch batch, long total) {
    StringBuilder draws = new StringBuilder();
    for (int k = 1; k <= 16; k++) {
      draws.append(", ").append(uniform(k)).append(" AS u").append(k);
    }
    return """
        INSERT INTO trips (trip_id, vendor_id, pickup_at, dropoff_at, pickup_zone_id, dropoff_zone_id,
          passenger_count, distance_miles, fare, tip, tolls, total, payment_type)
        SELECT trip_id, vendor_id, pickup_at, dropoff_at, pickup_zone_id, dropoff_zone_id,
          passenger_count, distance_miles, fare, tip, tolls, fare + tip + tolls, payment_type
        FROM (
          SELECT *,
            round(3.00 + 2.50 * distance_miles + 0.50 * minutes, 2)::DECIMAL(8,2) AS fare,
            CASE WHEN payment_type <> 'card' OR u14 < 0.12 THEN 0
                 ELSE round((3.00 + 2.50 * distance_miles + 0.50 * minutes) * (0.12 + 0.16 * u15), 2)
            END::DECIMAL(8,2) AS tip,
            CASE WHEN distance_miles > 9 AND u16 < 0.6 THEN 6.94 ELSE 0 END::DECIMAL(8,2) AS tolls,
            pickup_at + to_seconds(round(minutes * 60)::BIGINT) AS dropoff_at
          FROM (
            SELECT *, distance_miles * (2.0 + 2.5 * u9) + 2 + 3 * u10 AS minutes
            FROM (
              SELECT i AS trip_id, u9, u10, u14, u15, u16,
                CASE WHEN u12 < 0.45 THEN 1 ELSE 2 END::SMALLINT AS vendor_id,
                TIMESTAMPTZ '%d-01-01 00:00:00+00'
                  + to_seconds(day * 86400 + floor(CASE
                      WHEN u1 < 0.30 THEN 30600 + (u2 + u3 - 1) * 7200
                      WHEN u1 < 0.65 THEN 66600 + (u2 + u3 - 1) * 10800
                      WHEN u1 < 0.95 THEN 25200 + u2 * 57600
                      ELSE u2 * 86400 END)::BIGINT) AS pickup_at,
                CASE WHEN u5 < 0.04 THEN CASE WHEN u6 < 0.6 THEN %d ELSE %d END
                     ELSE 1 + floor(262 * pow(u6, 2.2))::INTEGER END AS pickup_zone_id,
                CASE WHEN u7 < 0.05 THEN CASE WHEN u8 < 0.5 THEN %d WHEN u8 < 0.85 THEN %d ELSE %d END
                     ELSE 1 + floor(262 * pow(u8, 1.8))::INTEGER END AS dropoff_zone_id,
                CASE WHEN u11 < 0.02 THEN NULL WHEN u11 < 0.72 THEN 1 WHEN u11 < 0.86 THEN 2 WHEN u11 < 0.91 THEN 3
                     WHEN u11 < 0.94 THEN 4 WHEN u11 < 0.98 THEN 5 ELSE 6 END::SMALLINT AS passenger_count,
                round(0.3 + least(-ln(1 - u4) * 2.6, 35) + CASE WHEN u5 < 0.04 OR u7 < 0.05 THEN 11 ELSE 0 END,
                  2)::DOUBLE AS distance_miles,
                CASE WHEN u13 < 0.70 THEN 'card' WHEN u13 < 0.96 THEN 'cash' WHEN u13 < 0.99 THEN 'no charge'
                     ELSE 'dispute' END AS payment_type
              FROM (
                SELECT i, (i * %d) // %d AS day%s
                FROM range(%d, %d) AS r(i)
              ) AS draws
            ) AS trip
          ) AS timed
        ) AS priced""".formatted(YEAR, JFK, LAGUARDIA, JFK, LAGUARDIA, NEWARK, DAYS, total, draws, batch.from(),
        batch.to());
  }
}
