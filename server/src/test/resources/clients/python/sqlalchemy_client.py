"""Run by SqlAlchemyTest with /usr/bin/python3: SQLAlchemy (Debian's python3-sqlalchemy, 1.4 on Debian 12)
over psycopg2, and pandas (python3-pandas) through it, against the server that PGHOST/PGPORT/PGUSER/
PGDATABASE name. `sqlalchemy_client.py SCENARIO` prints one line per checked value; the Java test compares
them with what the same scenario prints against PostgreSQL."""
import datetime
import logging
import os
import sys
import warnings
from decimal import Decimal

import sqlalchemy as sa
from sqlalchemy.orm import Session, declarative_base

warnings.simplefilter("ignore")
if os.environ.get("SQL_ECHO"):
    # every statement SQLAlchemy sends (on stderr), to see what a server must answer
    logging.basicConfig(stream=sys.stderr, format="%(message)s")
    logging.getLogger("sqlalchemy.engine").setLevel(logging.INFO)


def engine():
    url = sa.engine.URL.create("postgresql+psycopg2", username=os.environ["PGUSER"], host=os.environ["PGHOST"],
                               port=int(os.environ["PGPORT"]), database=os.environ["PGDATABASE"])
    return sa.create_engine(url)


def out(*values):
    print(*values, flush=True)


metadata = sa.MetaData()
users = sa.Table(
    "sa_users", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("name", sa.String(50), nullable=False, index=True),
    sa.Column("born", sa.Date),
    sa.Column("score", sa.Numeric(10, 2)),
    sa.Column("active", sa.Boolean),
    sa.Column("created", sa.DateTime),
)


def scenario_core():
    e = engine()
    metadata.create_all(e)  # CREATE TABLE, then CREATE INDEX ix_sa_users_name (index=True)
    with e.connect() as conn:
        out("indexes", conn.execute(sa.text("SELECT indexname FROM pg_indexes WHERE tablename = 'sa_users' "
                                            "ORDER BY 1")).scalars().all())
    out("reflected", [(i["name"], i["column_names"], i["unique"]) for i in sa.inspect(e).get_indexes("sa_users")])
    with e.begin() as conn:
        r = conn.execute(users.insert().values(id=1, name="it's ann", born=datetime.date(1990, 1, 2),
                                               score=Decimal("12.50"), active=True,
                                               created=datetime.datetime(2024, 2, 29, 13, 14, 15)))
        out("insert", r.rowcount)
        r = conn.execute(users.insert(), [
            {"id": 2, "name": "bob", "born": None, "score": Decimal("-1"), "active": False, "created": None},
            {"id": 3, "name": "cy", "born": datetime.date(2000, 12, 31), "score": None, "active": None,
             "created": datetime.datetime(2000, 1, 1)},
        ])
        out("insert many", r.rowcount)
    with e.connect() as conn:
        for row in conn.execute(sa.select(users).order_by(users.c.id)):
            out(tuple(row))
        out(conn.execute(sa.select(users.c.name).where(users.c.score > 0)).scalars().all())
        out(conn.execute(sa.select(sa.func.count()).select_from(users).where(users.c.name.like("%b%"))).scalar())
        out(conn.execute(sa.text("SELECT name FROM sa_users WHERE id = :id"), {"id": 3}).scalar())
    with e.begin() as conn:
        out("update", conn.execute(users.update().where(users.c.id == 2).values(name="bobby", active=True)).rowcount)
        out("delete", conn.execute(users.delete().where(users.c.id == 3)).rowcount)
    with e.connect() as conn:
        out(conn.execute(sa.select(users.c.id, users.c.name, users.c.active).order_by(users.c.id)).all())
    metadata.drop_all(e)
    e.dispose()


Base = declarative_base()


class Item(Base):
    __tablename__ = "sa_items"
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=False)
    name = sa.Column(sa.String(40), nullable=False)
    price = sa.Column(sa.Numeric(8, 2))
    added = sa.Column(sa.Date)

    def __repr__(self):
        return "Item(%r, %r, %r, %r)" % (self.id, self.name, self.price, self.added)


def scenario_orm():
    e = engine()
    Base.metadata.create_all(e)
    with Session(e) as s:
        s.add_all([Item(id=1, name="pen", price=Decimal("1.20"), added=datetime.date(2024, 1, 1)),
                   Item(id=2, name="ink", price=Decimal("7.00")),
                   Item(id=3, name="pad", price=None, added=datetime.date(2023, 6, 30))])
        s.commit()
    with Session(e) as s:
        out(s.execute(sa.select(Item).order_by(Item.id)).scalars().all())
        item = s.get(Item, 2)
        out("get", item)
        item.price = Decimal("8.50")
        s.delete(s.get(Item, 3))
        s.commit()
        out(s.execute(sa.select(Item).where(Item.price > 5)).scalars().all())
        out(s.execute(sa.select(sa.func.count(Item.id))).scalar())
        out(s.query(Item).filter_by(name="pen").one())
    e.dispose()


class Note(Base):
    """The ORM's default integer primary key: SERIAL, values from the server (RETURNING)."""
    __tablename__ = "sa_notes"
    id = sa.Column(sa.Integer, primary_key=True)
    text = sa.Column(sa.String(40), nullable=False)


def scenario_autoincrement():
    e = engine()
    Note.__table__.create(e)
    with Session(e) as s:
        notes = [Note(text="first"), Note(text="second")]
        s.add_all(notes)
        s.commit()
        out([n.id for n in notes])
        s.add(Note(text="third"))
        s.commit()
        out([(n.id, n.text) for n in s.execute(sa.select(Note).order_by(Note.id)).scalars()])
    insp = sa.inspect(e)
    col = [c for c in insp.get_columns("sa_notes") if c["name"] == "id"][0]
    out("autoincrement", col.get("autoincrement"), "nextval" in (col.get("default") or ""))
    e.dispose()


def scenario_inspector():
    e = engine()
    md = sa.MetaData()
    sa.Table("sa_inspected", md,
             sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
             sa.Column("name", sa.String(30), nullable=False),
             sa.Column("amount", sa.Numeric(12, 3)),
             sa.Column("at", sa.DateTime),
             sa.Column("flag", sa.Boolean),
             sa.Column("big", sa.BigInteger))
    md.create_all(e)
    insp = sa.inspect(e)
    out("has_table", insp.has_table("sa_inspected"), insp.has_table("no_such_table"))
    out("schemas", "public" in insp.get_schema_names())
    out("tables", [t for t in insp.get_table_names() if t.startswith("sa_insp")])
    for c in insp.get_columns("sa_inspected"):
        out(c["name"], repr(c["type"]), c["nullable"])
    out("pk", insp.get_pk_constraint("sa_inspected")["constrained_columns"])
    reflected = sa.Table("sa_inspected", sa.MetaData(), autoload_with=e)
    out("reflected", [c.name for c in reflected.primary_key])
    e.dispose()


class Team(Base):
    """What an ORM model declares: unique, index, a foreign key, a check and server defaults."""
    __tablename__ = "sa_teams"
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=False)
    name = sa.Column(sa.String(40), nullable=False, unique=True)
    created = sa.Column(sa.DateTime, server_default=sa.func.now())


class Player(Base):
    __tablename__ = "sa_players"
    __table_args__ = (sa.CheckConstraint("age >= 0", name="age_not_negative"),
                      sa.UniqueConstraint("team_id", "number", name="one_number_per_team"))
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=False)
    team_id = sa.Column(sa.Integer, sa.ForeignKey("sa_teams.id"), nullable=False, index=True)
    number = sa.Column(sa.Integer)
    age = sa.Column(sa.Integer)
    status = sa.Column(sa.String(10), server_default="active")

    def __repr__(self):
        return "Player(%r, %r, %r, %r, %r)" % (self.id, self.team_id, self.number, self.age, self.status)


def integrity(e, model):
    """Adds the row in its own session; prints the error's SQLSTATE and constraint, as an app would see them."""
    with Session(e) as s:
        s.add(model)
        try:
            s.commit()
            out("committed", model)
        except sa.exc.IntegrityError as err:
            s.rollback()
            out("IntegrityError", err.orig.pgcode, err.orig.diag.constraint_name or "", err.orig.diag.message_primary)


def scenario_constraints():
    e = engine()
    Base.metadata.create_all(e, tables=[Team.__table__, Player.__table__])
    insp = sa.inspect(e)
    out("unique", sorted((u["name"], u["column_names"]) for u in insp.get_unique_constraints("sa_players")))
    out("foreign", [(f["constrained_columns"], f["referred_table"], f["referred_columns"])
                    for f in insp.get_foreign_keys("sa_players")])
    out("checks", [c["name"] for c in insp.get_check_constraints("sa_players")])
    out("indexes", sorted(i["name"] for i in insp.get_indexes("sa_players")))
    with Session(e) as s:
        s.add_all([Team(id=1, name="reds"), Team(id=2, name="blues")])
        s.commit()
        s.add_all([Player(id=1, team_id=1, number=9, age=30), Player(id=2, team_id=2, number=9, age=22)])
        s.commit()
        out(s.execute(sa.select(Player).order_by(Player.id)).scalars().all())
        out("created set", s.get(Team, 1).created is not None)
    integrity(e, Team(id=3, name="reds"))
    integrity(e, Player(id=3, team_id=7, number=1, age=20))
    integrity(e, Player(id=3, team_id=1, number=9, age=20))
    integrity(e, Player(id=3, team_id=1, number=10, age=-1))
    integrity(e, Player(id=3, team_id=1, number=None, age=None))
    with Session(e) as s:
        s.delete(s.get(Team, 2))
        try:
            s.commit()
        except sa.exc.IntegrityError as err:
            s.rollback()
            out("IntegrityError", err.orig.pgcode, err.orig.diag.constraint_name or "", err.orig.diag.message_detail)
        s.delete(s.get(Player, 2))
        s.commit()
        s.delete(s.get(Team, 2))
        s.commit()
        player = s.get(Player, 3)
        player.number = 11
        s.commit()
        out(s.execute(sa.select(Player.id, Player.number, Team.name).join(Team).order_by(Player.id)).all())
    Base.metadata.drop_all(e, tables=[Player.__table__, Team.__table__])
    e.dispose()


def scenario_cascade():
    """ForeignKey(ondelete=...) as SQLAlchemy declares it: the database carries out CASCADE and SET NULL."""
    e = engine()
    md = sa.MetaData()
    parents = sa.Table("sa_parents", md, sa.Column("id", sa.Integer, primary_key=True, autoincrement=False))
    children = sa.Table("sa_children", md, sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
                        sa.Column("parent_id", sa.Integer, sa.ForeignKey("sa_parents.id", ondelete="CASCADE",
                                                                          onupdate="CASCADE")))
    notes = sa.Table("sa_notes_fk", md, sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
                     sa.Column("child_id", sa.Integer, sa.ForeignKey("sa_children.id", ondelete="SET NULL")))
    md.create_all(e)
    out("foreign", sorted((f["referred_table"], f["options"].get("ondelete"), f["options"].get("onupdate"))
                          for t in ("sa_children", "sa_notes_fk") for f in sa.inspect(e).get_foreign_keys(t)))
    with e.begin() as conn:
        conn.execute(parents.insert(), [{"id": 1}, {"id": 2}])
        conn.execute(children.insert(), [{"id": 10, "parent_id": 1}, {"id": 11, "parent_id": 2}])
        conn.execute(notes.insert(), [{"id": 100, "child_id": 10}, {"id": 101, "child_id": 11}])
    with e.begin() as conn:
        out("deleted", conn.execute(parents.delete().where(parents.c.id == 1)).rowcount)
        out("updated", conn.execute(parents.update().where(parents.c.id == 2).values(id=20)).rowcount)
    with e.connect() as conn:
        out(conn.execute(sa.select(children).order_by(children.c.id)).all())
        out(conn.execute(sa.select(notes).order_by(notes.c.id)).all())
    md.drop_all(e)
    e.dispose()


def scenario_pandas():
    import pandas as pd
    e = engine()
    df = pd.DataFrame({
        "id": [1, 2, 3],
        "name": ["a'b", None, "héllo"],
        "value": [1.5, None, -2.25],
        "day": pd.to_datetime(["2024-02-29", "2000-01-01", None]),
        "ok": [True, False, True],
    })
    out("to_sql", df.to_sql("pd_frame", e, index=False))
    back = pd.read_sql("SELECT * FROM pd_frame ORDER BY id", e)
    out(list(back.columns))
    out([str(t) for t in back.dtypes])
    out(back.to_dict("records"))
    out("append", df.iloc[:1].assign(id=4).to_sql("pd_frame", e, index=False, if_exists="append"))
    out(pd.read_sql(sa.text("SELECT count(*) AS n FROM pd_frame WHERE id > :low"), e, params={"low": 1}).to_dict("records"))
    out("replace", df.iloc[1:].to_sql("pd_frame", e, index=False, if_exists="replace"))
    out(pd.read_sql_table("pd_frame", e).to_dict("records"))
    e.dispose()


def scenario_pandas_read():
    """read_sql of a query: no catalog look-ups, only the query."""
    import pandas as pd
    e = engine()
    with e.begin() as conn:
        conn.execute(sa.text("CREATE TABLE pd_read (id integer, name text, value double precision, day date)"))
        conn.execute(sa.text("INSERT INTO pd_read VALUES (1, 'x', 0.5, '2024-01-02'), (2, NULL, NULL, NULL)"))
    df = pd.read_sql("SELECT id, name, value, day FROM pd_read ORDER BY id", e)
    out([str(t) for t in df.dtypes])
    out(df.to_dict("records"))
    df = pd.read_sql(sa.text("SELECT id FROM pd_read WHERE name = :n"), e, params={"n": "x"})
    out(df.to_dict("records"))
    e.dispose()


if __name__ == "__main__":
    globals()["scenario_" + sys.argv[1]]()
