"""The module benchmark's floor module (bench/redis_floor_module.c) against
a real redis-server: FLOOR.RESERVE's arguments and errors, FLOOR.ADD and
FLOOR.EXISTS without a table, with one line per item and with two, and
what it persists (RDB: the table's size and lines per item, not its bits;
AOF rewrite: the FLOOR.RESERVE that makes it again).  argv: the floor
module's .so."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Error, check  # noqa: E402


def expect_error(c, prefix, *command):
    reply = c.value(*command)
    check(isinstance(reply, Error) and reply.startswith(prefix),
          "%s: expected %s, got %r" % (" ".join(command), prefix, reply))


def reserve_errors(c):
    expect_error(c, "ERR wrong number", "FLOOR.RESERVE")
    expect_error(c, "ERR wrong number", "FLOOR.RESERVE", "k", "BYTES")
    expect_error(c, "ERR wrong number", "FLOOR.RESERVE", "k", "BYTES", "640", "LINES")
    expect_error(c, "ERR expected BYTES", "FLOOR.RESERVE", "k", "BYTES", "63")
    expect_error(c, "ERR expected BYTES", "FLOOR.RESERVE", "k", "SIZE", "640")
    expect_error(c, "ERR expected BYTES", "FLOOR.RESERVE", "k", "BYTES", "many")
    for k in ("0", "5", "-1", "two"):
        expect_error(c, "ERR expected LINES", "FLOOR.RESERVE", "k", "BYTES", "640", "LINES", k)
    expect_error(c, "ERR expected LINES", "FLOOR.RESERVE", "k", "BYTES", "640", "LINE", "2")
    check(c.value("EXISTS", "k") == 0, "a refused FLOOR.RESERVE created its key")
    check(c.value("SET", "s", "x") == "OK", "SET")
    expect_error(c, "ERR item exists", "FLOOR.RESERVE", "s")
    expect_error(c, "WRONGTYPE", "FLOOR.ADD", "s", "x")
    check(c.value("FLOOR.EXISTS", "s", "x") == 0, "FLOOR.EXISTS on another type")


def without_table(c):
    check(c.value("FLOOR.ADD", "plain", "a") == 1, "a key's first add is new")
    check(c.value("FLOOR.ADD", "plain", "b") == 0, "later adds are not")
    check(c.value("FLOOR.EXISTS", "plain", "a") == 0, "no table: every item absent")


def with_table(c, key, lines, table_bytes=65536):
    check(c.value("FLOOR.RESERVE", key, "BYTES", str(table_bytes), "LINES", str(lines)) == "OK",
          "FLOOR.RESERVE %s LINES %d" % (key, lines))
    expect_error(c, "ERR item exists", "FLOOR.RESERVE", key)
    added = ["item:%d" % i for i in range(20)]
    for item in added:
        check(c.value("FLOOR.ADD", key, item) == 1, "%s: %s new" % (key, item))
        check(c.value("FLOOR.ADD", key, item) == 0, "%s: %s again" % (key, item))
        check(c.value("FLOOR.EXISTS", key, item) == 1, "%s: %s present" % (key, item))
    # 20 items set at most 20 * lines of 1024 or more lines: another item is
    # reported present only where all its lines were set.
    present = sum(c.value("FLOOR.EXISTS", key, "other:%d" % i) for i in range(500))
    check(present <= 50, "%s: %d of 500 items never added reported present" % (key, present))
    return added


def persistence(server):
    with server.client() as c:
        check(c.value("FLOOR.RESERVE", "two", "BYTES", "6400", "LINES", "2") == "OK", "reserve")
        check(c.value("FLOOR.ADD", "two", "x") == 1, "add")
        check(c.value("DEBUG", "RELOAD") == "OK", "DEBUG RELOAD")
        # the table's size and lines per item come back, its bits do not
        check(c.value("FLOOR.ADD", "two", "x") == 1, "bits kept across RDB")
        check(c.value("FLOOR.ADD", "two", "x") == 0, "the reloaded table takes adds")
        check(c.value("CONFIG", "SET", "aof-use-rdb-preamble", "no") == "OK", "no preamble")
        check(c.value("CONFIG", "SET", "appendonly", "yes") == "OK", "appendonly")
        check(c.value("BGREWRITEAOF") is not None, "BGREWRITEAOF")
        for _ in range(400):
            info = c.value("INFO", "persistence")
            if b"aof_rewrite_in_progress:0" in info and b"aof_rewrite_scheduled:0" in info:
                break
            time.sleep(0.05)
    aof = ""
    for root, _dirs, files in os.walk(server.dir):
        for name in files:
            if name.endswith(".aof") and not name.startswith("temp-"):
                with open(os.path.join(root, name), "rb") as f:
                    aof += f.read().decode("latin-1")
    check("FLOOR.RESERVE" in aof and "BYTES" in aof and "6400" in aof and "LINES" in aof,
          "the AOF rewrite's FLOOR.RESERVE: %r" % aof[:300])


def test():
    server = harness.Server()
    with server.client() as c:
        reserve_errors(c)
        without_table(c)
        with_table(c, "one", 1)
        with_table(c, "pair", 2)
        # 2 MiB and more: the table is mapped, and unmapped when the key goes
        with_table(c, "mapped", 1, 4 << 20)
        check(c.value("DEL", "mapped") == 1, "DEL of a mapped table")
        check(c.value("FLOOR.EXISTS", "mapped", "item:0") == 0, "gone with its key")
    persistence(server)


if __name__ == "__main__":
    harness.main(test)
