"""bloomkit.so against a real redis-server: redis-py's bf()/cf() helpers,
the BK.* commands, persistence (RDB, AOF, DEBUG RELOAD, DUMP/RESTORE),
COPY/RENAME, MEMORY USAGE, INFO bloomkit and the design-point event,
hostile payloads, and the accuracy promises (BF at 1000x growth, CF never
losing an item).  argv: bloomkit.so, the bloomkit CLI."""
import math
import os
import random
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Error, check  # noqa: E402

import redis  # noqa: E402  (Debian's python3-redis)

CLI = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
PRESENT = ["item:%d" % i for i in range(2000)]
ABSENT = ["other:%d" % i for i in range(2000)]


def binomial_upper(p, n, sigmas=4.0):
    """p + sigmas standard deviations of a proportion over n trials."""
    return p + sigmas * math.sqrt(p * (1 - p) / n)


# ---------------------------------------------------------------- helpers

def populate(c):
    """A key of every family and many kinds; returns their names."""
    c.value("BF.RESERVE", "bf", "0.01", "1000")
    c.value("BF.MADD", "bf", *PRESENT)                    # grows to 2 links
    c.value("BF.RESERVE", "bfns", "0.001", "5000", "NONSCALING")
    c.value("BF.MADD", "bfns", *PRESENT)
    c.value("CF.RESERVE", "cf", "500", "EXPANSION", "2")
    c.value("CF.INSERT", "cf", "ITEMS", *PRESENT)          # a chain of links
    c.value("CF.DEL", "cf", PRESENT[0])
    keys = ["bf", "bfns", "cf"]
    for kind in ("bloom", "blocked", "sbbf", "counting", "cuckoo", "scalable"):
        name = "bk:" + kind
        check(c.value("BK.RESERVE", name, kind, "3000", "0.01") == "OK", kind)
        c.value("BK.MADD", name, *PRESENT)
        keys.append(name)
    c.value("BK.RESERVE", "bk:window", "window", "3000", "0.01", "WINDOW", "5000")
    c.value("BK.MADD", "bk:window", *PRESENT)
    keys.append("bk:window")
    for kind in ("xor8", "fuse8", "fuse16"):
        check(c.value("BK.BUILD", "bk:" + kind, kind, *PRESENT) == "OK", kind)
        keys.append("bk:" + kind)
    return keys


def answers(c, keys):
    """Everything a client can ask of the keys, as bytes."""
    out = []
    for k in keys:
        family = k.split(":")[0]
        exists = "BK.MEXISTS" if family == "bk" else family.upper() + ".MEXISTS"
        out.append(c.call(exists, k, *PRESENT))
        out.append(c.call(exists, k, *ABSENT))
        if family in ("bf", "cf"):
            out.append(c.call(family.upper() + ".INFO", k))
        else:
            out.append(c.call("BK.CARD", k))
        out.append(c.call("BK.DUMP", k) if k != "cf" else c.call("CF.COUNT", k, PRESENT[1]))
    return out


# ---------------------------------------------------------------- tests

def test_redis_py(port):
    r = redis.Redis(port=port)
    bf, cf = r.bf(), r.cf()
    check(bf.create("py:bf", 0.01, 1000), "bf.create")
    check(bf.add("py:bf", "a") == 1 and bf.add("py:bf", "a") == 0, "bf.add")
    check(bf.madd("py:bf", "b", "c", "a") == [1, 1, 0], "bf.madd")
    check(bf.exists("py:bf", "b") == 1 and bf.exists("py:bf", "zz") == 0, "bf.exists")
    check(bf.mexists("py:bf", "a", "zz") == [1, 0], "bf.mexists")
    check(bf.insert("py:bf2", ["x", "y"], capacity=500, error=0.001) == [1, 1], "bf.insert")
    info = bf.info("py:bf")
    check(info.capacity == 1000 and info.insertedNum == 3 and info.filterNum == 1 and info.expansionRate == 2,
          "bf.info %r" % vars(info))
    check(r.execute_command("BF.CARD", "py:bf") == 3, "BF.CARD")  # no helper in redis-py 4.3
    # SCANDUMP / LOADCHUNK round trip as redis-py's documentation shows it
    chunks, it = [], 0
    while True:
        it, data = bf.scandump("py:bf", it)
        if it == 0:
            break
        chunks.append((it, data))
    for it, data in chunks:
        bf.loadchunk("py:bfcopy", it, data)
    check(bf.mexists("py:bfcopy", "a", "b", "c", "zz") == [1, 1, 1, 0], "bf loadchunk copy")

    check(cf.create("py:cf", 1000), "cf.create")
    check(cf.add("py:cf", "a") == 1 and cf.addnx("py:cf", "a") == 0 and cf.addnx("py:cf", "b") == 1, "cf.add")
    check(cf.insert("py:cf", ["c", "a"]) == [1, 1], "cf.insert")
    check(cf.insertnx("py:cf", ["c", "d"]) == [0, 1], "cf.insertnx")
    check(cf.exists("py:cf", "a") == 1 and cf.exists("py:cf", "zz") == 0, "cf.exists")
    check(cf.count("py:cf", "a") == 2, "cf.count")
    check(cf.delete("py:cf", "a") == 1 and cf.count("py:cf", "a") == 1, "cf.delete")
    info = cf.info("py:cf")
    check(info.insertedNum == 4 and info.deletedNum == 1 and info.filterNum == 1 and info.maxIteration == 20,
          "cf.info %r" % vars(info))
    chunks, it = [], 0
    while True:
        it, data = cf.scandump("py:cf", it)
        if it == 0:
            break
        chunks.append((it, data))
    for it, data in chunks:
        cf.loadchunk("py:cfcopy", it, data)
    check(cf.count("py:cfcopy", "a") == 1 and cf.exists("py:cfcopy", "d") == 1, "cf loadchunk copy")


def test_bf_growth_fpr(c):
    """A scaling BF grown 1000x past its capacity keeps its FPR <= 1%."""
    c.value("BF.RESERVE", "grow", "0.01", "1000")
    batch = 1000
    c.pipeline([["BF.MADD", "grow"] + ["user:%d" % (i * batch + j) for j in range(batch)]
                for i in range(1000)])
    info = harness.parse(c.call("BF.INFO", "grow"))
    check(info[7] > 990000 and info[1] >= 1000000, "grown to 10^6: %r" % info)
    queries = 200000
    replies = c.pipeline([["BF.MEXISTS", "grow"] + ["guest:%d" % (i * batch + j) for j in range(batch)]
                          for i in range(queries // batch)])
    positives = sum(sum(harness.parse(r)) for r in replies)
    fpr = positives / queries
    print("BF grown 1000x: %d filters, FPR %.5f over %d absent keys" % (info[5], fpr, queries))
    check(fpr <= 0.01, "FPR %.5f above the requested 0.01" % fpr)
    present = c.value("BF.MEXISTS", "grow", *["user:%d" % i for i in range(0, 1000000, 997)])
    check(all(present), "a stored key answered absent")
    c.call("DEL", "grow")


def test_bf_info_between_writes(c):
    """BF.INFO and BF.CARD keep their figures between writes (BF adds move
    the key count on; a growth recomputes them): after every kind of BF
    write they agree with a fresh pass (BK.INFO) and with the adds' own
    answers, across growths and on a full NONSCALING filter."""
    def fresh(key):
        flat = harness.parse(c.call("BK.INFO", key))
        return dict(zip(flat[0::2], flat[1::2]))

    def agree(key, added, what):
        info = harness.parse(c.call("BF.INFO", key))
        now = fresh(key)
        card = c.value("BF.CARD", key)
        check(info[7] == now["keys_added"] == card == added,
              "%s: items %r, fresh %r, card %r, added %d" % (what, info[7], now["keys_added"], card, added))
        check(info[1] == now["capacity"] and info[5] == now["filters"] and info[3] == now["bytes"],
              "%s: capacity/filters/size %r against %r" % (what, info, now))

    rng = random.Random(30)
    c.value("BF.RESERVE", "cache", "0.01", "100", "EXPANSION", "2")
    added = 0
    agree("cache", added, "empty")
    for step in range(40):
        items = ["c:%d" % rng.randrange(3000) for _ in range(rng.randrange(1, 60))]
        if step % 3 == 0:
            added += sum(c.value("BF.MADD", "cache", *items))
        elif step % 3 == 1:
            added += sum(c.value("BF.INSERT", "cache", "ITEMS", *items))
        else:
            added += sum(c.value("BF.ADD", "cache", item) for item in items)
        agree("cache", added, "step %d" % step)
    check(harness.parse(c.call("BF.INFO", "cache"))[5] > 3, "the chain grew")
    c.value("BF.RESERVE", "full", "0.01", "50", "NONSCALING")
    replies = [harness.parse(r) for r in c.pipeline([["BF.ADD", "full", "n:%d" % i] for i in range(80)])]
    check(isinstance(replies[-1], Error), "a full NONSCALING filter refused an add: %r" % replies[-1])
    agree("full", sum(r for r in replies if not isinstance(r, Error)), "nonscaling")
    # A batch of more than one chunk (128) that fills a NONSCALING filter
    # midway: the answers of one BF.ADD after another, up to and including
    # the first error, and nothing after it.
    items = ["m:%d" % (i % 250) for i in range(300)]
    c.value("BF.RESERVE", "batch", "0.01", "200", "NONSCALING")
    c.value("BF.RESERVE", "single", "0.01", "200", "NONSCALING")
    batch = c.value("BF.MADD", "batch", *items)
    singles = []
    for item in items:
        singles.append(harness.parse(c.call("BF.ADD", "single", item)))
        if isinstance(singles[-1], Error):
            break
    check(batch == singles and isinstance(batch[-1], Error) and 128 < len(batch) < 300,
          "MADD over a full filter: %d answers %r, one by one %d %r" % (len(batch), batch[-3:], len(singles), singles[-3:]))
    agree("batch", sum(r for r in batch if not isinstance(r, Error)), "batch")
    c.call("DEL", "cache", "full", "batch", "single")


def test_cf_never_loses(c):
    """Every item a CF accepted stays; a refused insert changes nothing."""
    c.value("CF.RESERVE", "noloss", "1000", "EXPANSION", "0")
    accepted = []
    for i in range(5000):
        reply = c.value("CF.ADD", "noloss", "k%d" % i)
        if isinstance(reply, Error):
            check(reply == "Filter is full", reply)
            break
        accepted.append("k%d" % i)
    check(len(accepted) >= 1000, "capacity 1000 took only %d" % len(accepted))
    check(all(c.value("CF.MEXISTS", "noloss", *accepted)), "a CF lost an accepted item")
    check(isinstance(c.value("CF.ADD", "noloss", "another"), Error), "full filter took more")
    check(all(c.value("CF.MEXISTS", "noloss", *accepted)), "a failed insert lost an item")
    # growing chains keep everything too
    c.value("CF.RESERVE", "chain", "1000", "EXPANSION", "2")
    items = ["c%d" % i for i in range(20000)]
    for i in range(0, len(items), 1000):
        check(c.value("CF.INSERT", "chain", "ITEMS", *items[i:i + 1000]).count(-1) == 0, "chain insert failed")
    check(all(c.value("CF.MEXISTS", "chain", *items)), "a CF chain lost an item")
    info = harness.parse(c.call("CF.INFO", "chain"))
    check(info[5] > 1 and info[7] == 20000, "chain info %r" % info)


def test_cf_links_of_other_seeds(c):
    """A CF whose links hash with different seeds (a loaded value can be
    one): every link is asked with its own hash."""
    c.value("CF.RESERVE", "seeds", "1000")
    first = ["p%d" % i for i in range(200)]
    c.value("CF.INSERT", "seeds", "ITEMS", *first)
    c.value("BK.RESERVE", "other", "cuckoo", "1000", "0.01", "FINGERPRINT", "10", "SEED", "12345")
    second = ["q%d" % i for i in range(200)]
    c.value("BK.MADD", "other", *second)
    cursor, header = harness.parse(c.call("CF.SCANDUMP", "seeds", "0"))
    _, image = harness.parse(c.call("CF.SCANDUMP", "seeds", cursor))
    other = c.value("BK.DUMP", "other")
    # the same CF header with two links: its own image, then the other seed's
    chained = bytearray(header[:56])
    chained[12:16] = struct.pack("<I", 2)
    chained += struct.pack("<QQ", len(image), len(other))
    check(c.value("CF.LOADCHUNK", "mixed", "1", bytes(chained)) == "OK", "two-link header")
    check(c.value("CF.LOADCHUNK", "mixed", str(len(chained) + 1), image + other) == "OK", "two links")
    check(harness.parse(c.call("CF.INFO", "mixed"))[5] == 2, "two links loaded")
    check(all(c.value("CF.MEXISTS", "mixed", *(first + second))), "a link of another seed lost items")
    check(all(c.value("CF.EXISTS", "mixed", item) for item in first + second),
          "CF.EXISTS missed an item of a link of another seed")


def test_bk_commands(c, workdir):
    check(c.value("BK.RESERVE", "k1", "nosuchkind", "100", "0.01").startswith("ERR unknown kind"), "kind")
    check(c.value("BK.RESERVE", "k1", "fuse8", "100", "0.01").startswith("ERR a static kind"), "static")
    check(c.value("BK.RESERVE", "k1", "bloom", "0", "0.01") == "ERR bad capacity", "capacity")
    check(c.value("BK.RESERVE", "k1", "bloom", "100", "2") == "ERR bad error rate", "fpr")
    check(c.value("BK.RESERVE", "k1", "bloom", "100", "0.01", "FOO", "1").startswith("ERR bad option"), "option")
    check(c.value("BK.ADD", "nokey", "x") == "ERR not found", "missing key")
    check(c.value("BK.EXISTS", "nokey", "x") is False or c.value("BK.EXISTS", "nokey", "x") == 0, "exists missing")
    c.call("SET", "str", "v")
    check(c.value("BK.ADD", "str", "x").startswith("WRONGTYPE"), "wrongtype")
    check(c.value("BK.RESERVE", "k1", "counting", "1000", "0.01") == "OK", "reserve")
    check(c.value("BK.RESERVE", "k1", "counting", "1000", "0.01") == "ERR item exists", "exists")
    check(c.value("BK.ADD", "k1", "a") == 1 and c.value("BK.ADD", "k1", "a") == 0, "add")
    check(c.value("BK.MADD", "k1", "b", "c") == [1, 1], "madd")
    check(c.value("BK.COUNT", "k1", "a") == 2 and c.value("BK.COUNT", "k1", "zz") == 0, "count")
    check(c.value("BK.DEL", "k1", "a") == 1 and c.value("BK.EXISTS", "k1", "a") == 1, "del one copy")
    check(c.value("BK.DEL", "k1", "a") == 1 and c.value("BK.EXISTS", "k1", "a") == 0, "del")
    check(c.value("BK.MEXISTS", "k1", "b", "c", "zz") == [1, 1, 0], "mexists")
    c.value("BK.RESERVE", "k2", "bloom", "1000", "0.01")
    check(c.value("BK.DEL", "k2", "a").startswith("ERR"), "bloom has no removal")
    info = harness.parse(c.call("BK.INFO", "k1"))
    fields = dict(zip(info[::2], info[1::2]))
    check(fields["kind"] == "counting" and fields["capacity"] == 1000 and fields["keys_added"] == 2 and
          fields["status"] == "ok", "info %r" % fields)
    check(c.value("BK.CARD", "k1") == 2, "card %r" % c.value("BK.CARD", "k1"))
    # static kinds: from items and from a SET
    check(c.value("BK.BUILD", "s1", "fuse8", "a", "b", "c") == "OK", "build")
    check(c.value("BK.MEXISTS", "s1", "a", "b", "c") == [1, 1, 1], "build members")
    check(c.value("BK.ADD", "s1", "d").startswith("ERR"), "static add refused")
    c.call("SADD", "set", *PRESENT)
    check(c.value("BK.BUILD", "s2", "xor8", "FROMSET", "set") == "OK", "fromset")
    check(all(c.value("BK.MEXISTS", "s2", *PRESENT)), "fromset members")
    fp = sum(c.value("BK.MEXISTS", "s2", *ABSENT))
    check(fp <= binomial_upper(1 / 256, len(ABSENT)) * len(ABSENT), "xor8 fpr %d" % fp)
    check(c.value("BK.BUILD", "s3", "fuse8", "FROMSET", "str").startswith("WRONGTYPE"), "fromset type")
    check(c.value("COMMAND", "GETKEYS", "BK.BUILD", "s4", "xor8", "FROMSET", "set") == [b"s4", b"set"],
          "BK.BUILD FROMSET declares both keys")
    check(c.value("COMMAND", "GETKEYS", "BK.MERGE", "d", "a", "b") == [b"d", b"a", b"b"], "BK.MERGE keys")
    # merge / intersect
    for k, items in (("m1", PRESENT[:1000]), ("m2", PRESENT[1000:])):
        c.value("BK.RESERVE", k, "blocked", "4000", "0.01")
        c.value("BK.MADD", k, *items)
    check(c.value("BK.MERGE", "mu", "m1", "m2") == "OK", "merge")
    check(all(c.value("BK.MEXISTS", "mu", *PRESENT)), "merge holds both")
    check(c.value("BK.INTERSECT", "mi", "m1", "m2") == "OK", "intersect")
    check(sum(c.value("BK.MEXISTS", "mi", *PRESENT)) < 100, "intersection of disjoint sets")
    check(c.value("BK.MERGE", "mx", "m1", "k2").startswith("ERR the filters differ"), "incompatible")
    check(c.value("BK.MERGE", "mx", "m1", "nokey").startswith("ERR a source"), "missing source")
    # time window: the server's clock
    check(c.value("BK.RESERVE", "w", "window", "1000", "0.01", "SECONDS", "60") == "OK", "window seconds")
    check(c.value("BK.ADD", "w", "a") == 1 and c.value("BK.EXISTS", "w", "a") == 1, "window add")
    # BK.DUMP is bk_filter_save's file: the CLI reads it ...
    dump = c.value("BK.DUMP", "m1")
    path = os.path.join(workdir, "m1.bkf")
    with open(path, "wb") as f:
        f.write(dump)
    out = subprocess.run([CLI, "query", path, "-c"] + PRESENT, capture_output=True, text=True)
    check(out.returncode == 0 and int(out.stdout.split()[0]) >= 1000, "CLI on BK.DUMP: %r" % (out,))
    # ... and the CLI's files load with BK.LOAD, answering as the CLI does
    made = os.path.join(workdir, "cli.bkf")
    subprocess.run([CLI, "create", made, "-n", "1000", "--kind", "sbbf", "-q"], check=True)
    subprocess.run([CLI, "add", made, "-q"] + PRESENT[:500], check=True, capture_output=True)
    with open(made, "rb") as f:
        image = f.read()
    check(c.value("BK.LOAD", "fromcli", image) == "OK", "BK.LOAD")
    check(c.value("BK.DUMP", "fromcli") == image, "BK.DUMP of a loaded file differs from the file")
    ours = c.value("BK.MEXISTS", "fromcli", *(PRESENT[:500] + ABSENT))
    out = subprocess.run([CLI, "query", made] + PRESENT[:500] + ABSENT, capture_output=True, text=True)
    check([k for k, yes in zip(PRESENT[:500] + ABSENT, ours) if yes] == out.stdout.split(), "CLI and BK disagree")
    check(c.value("BK.LOAD", "bad", image[:-1]).startswith("ERR"), "truncated BK.LOAD")
    check(c.value("BK.LOAD", "bad", b"x" * 100).startswith("ERR"), "garbage BK.LOAD")
    flipped = bytearray(image)
    flipped[len(image) // 2] ^= 1
    check(c.value("BK.LOAD", "bad", bytes(flipped)).startswith("ERR"), "damaged BK.LOAD")
    check(c.value("EXISTS", "bad") == 0, "a refused load left a key")


def test_bk_resp3(port):
    """BK.* reply types after HELLO 3: booleans, maps, doubles."""
    with harness.Client(port) as c:
        c.call("HELLO", "3")
        c.call("BK.RESERVE", "r3", "cuckoo", "1000", "0.01")
        check(c.call("BK.ADD", "r3", "a") == b"#t\r\n", "BK.ADD RESP3")
        check(c.call("BK.MADD", "r3", "a", "b") == b"*2\r\n#f\r\n#t\r\n", "BK.MADD RESP3: a was there")
        check(c.call("BK.MEXISTS", "r3", "a", "zz") == b"*2\r\n#t\r\n#f\r\n", "BK.MEXISTS RESP3")
        check(c.call("BK.DEL", "r3", "zz") == b"#f\r\n", "BK.DEL RESP3")
        check(c.call("BK.COUNT", "r3", "a") == b":2\r\n", "BK.COUNT RESP3")
        info = c.call("BK.INFO", "r3")
        check(info.startswith(b"%13\r\n") and b"+fill_ratio\r\n," in info, "BK.INFO RESP3 %r" % info[:60])
        check(c.call("BK.EXISTS", "missing", "a") == b"#f\r\n", "BK.EXISTS missing RESP3")
        check(c.call("BK.ADD", "missing", "a") == b"-ERR not found\r\n", "BK.ADD missing RESP3")
        c.call("DEL", "r3")


def test_copy_rename_memory(c):
    c.value("BF.RESERVE", "orig", "0.01", "1000")
    c.value("BF.MADD", "orig", *PRESENT[:500])
    check(c.value("COPY", "orig", "copy") == 1, "COPY")
    c.value("BF.MADD", "copy", *ABSENT[:500])
    check(c.value("BF.CARD", "orig") == 500 and c.value("BF.CARD", "copy") > 500, "copy is independent")
    check(all(c.value("BF.MEXISTS", "copy", *PRESENT[:500])), "copy answers")
    before = c.call("BF.MEXISTS", "orig", *(PRESENT + ABSENT))
    check(c.value("RENAME", "orig", "renamed") == "OK", "RENAME")
    check(c.call("BF.MEXISTS", "renamed", *(PRESENT + ABSENT)) == before, "rename answers")
    usage = c.value("MEMORY", "USAGE", "renamed")
    size = harness.parse(c.call("BF.INFO", "renamed", "SIZE"))[0]
    check(usage >= size > 500 * 9.6 / 8, "MEMORY USAGE %d, BF.INFO Size %d" % (usage, size))


def test_notification_and_info(server):
    with server.client() as c, server.client() as sub:
        c.call("CONFIG", "SET", "notify-keyspace-events", "KEg")
        sub.call("SUBSCRIBE", "__keyevent@0__:bloomkit.past-design-point")
        c.value("BK.RESERVE", "fill", "bloom", "100", "0.01")
        c.value("BK.MADD", "fill", *["f%d" % i for i in range(100)])
        info = c.value("INFO", "bloomkit").decode()
        check("bloomkit_filters_past_design_point:0" in info, info)
        c.value("BK.MADD", "fill", *["g%d" % i for i in range(100)])    # past 1.05 x 100
        c.value("BK.MADD", "fill", *["h%d" % i for i in range(100)])    # further: no second event
        c.value("BK.ADD", "fill", "one-more")
        # A CF: its capacity of adds announces nothing, the next one does.
        c.value("CF.RESERVE", "cfill", "100")
        c.value("CF.INSERT", "cfill", "ITEMS", *["c%d" % i for i in range(100)])
        info = c.value("INFO", "bloomkit").decode()
        check("bloomkit_filters_past_design_point:1" in info, info)
        c.value("CF.ADD", "cfill", "c100")
        c.value("CF.INSERT", "cfill", "ITEMS", *["d%d" % i for i in range(100)])
        c.call("PUBLISH", "__keyevent@0__:bloomkit.past-design-point", "end-marker")
        messages = []
        while True:
            msg = harness.parse(sub.read_raw())
            messages.append(msg[2])
            if msg[2] == b"end-marker":
                break
        check(messages == [b"fill", b"cfill", b"end-marker"], "events %r" % messages)
        info = c.value("INFO", "bloomkit").decode()
        check("bloomkit_filters_past_design_point:2" in info and "bloomkit_filters_bloom:1" in info, info)
        check("# bloomkit" in info and "bloomkit_bytes:" in info and "bloomkit_filters:2" in info, info)


def test_persistence(server):
    with server.client() as c:
        keys = populate(c)
        before = answers(c, keys)
        digest = c.value("DEBUG", "DIGEST")
        check(c.value("DEBUG", "RELOAD") == "OK", "DEBUG RELOAD")
        check(answers(c, keys) == before, "answers changed across DEBUG RELOAD")
        check(c.value("DEBUG", "DIGEST") == digest, "digest changed across DEBUG RELOAD")
        # DUMP / RESTORE (what MIGRATE uses)
        for k in keys:
            payload = c.value("DUMP", k)
            check(c.value("RESTORE", k + ":r", "0", payload) == "OK", "RESTORE " + k)
            check(c.call("BK.MEXISTS", k + ":r", *PRESENT) == c.call("BK.MEXISTS", k, *PRESENT), "restored " + k)
        for k in keys:
            c.call("DEL", k + ":r")
        check(c.value("SAVE") == "OK", "SAVE")
    server.restart()
    with server.client() as c:
        check(answers(c, keys) == before, "answers changed across an RDB restart")
        c.call("CONFIG", "SET", "aof-use-rdb-preamble", "no")  # the rewrite calls the type's aof_rewrite
        c.call("CONFIG", "SET", "appendonly", "yes")
        for _ in range(200):
            if b"aof_rewrite_in_progress:0" in c.value("INFO", "persistence") and \
               b"aof_rewrite_scheduled:0" in c.value("INFO", "persistence"):
                break
            time.sleep(0.05)
        check(c.value("BF.ADD", "bf", "after-rewrite") in (0, 1), "add after rewrite")
        before = answers(c, keys)
    base = os.path.join(server.dir, "appendonlydir")
    text = b"".join(open(os.path.join(base, f), "rb").read() for f in os.listdir(base) if ".base." in f)
    for command in (b"BF.LOADCHUNK", b"CF.LOADCHUNK", b"BK.LOADCHUNK"):
        check(command in text, "AOF rewrite without %r" % command)
    server.restart("--appendonly", "yes", "--aof-use-rdb-preamble", "no")  # the rewrite + the add after it
    with server.client() as c:
        check(answers(c, keys) == before, "answers changed across an AOF restart")
        check(c.value("BF.EXISTS", "bf", "after-rewrite") == 1, "AOF tail replayed")


def test_hostile(c):
    """Damaged or crafted payloads are refused; the server lives on."""
    c.value("BF.RESERVE", "victim", "0.01", "1000")
    c.value("BF.MADD", "victim", *PRESENT[:100])
    c.value("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1")
    c.value("CONFIG", "SET", "rdbcompression", "no")      # the header stays readable in the payload
    payload = c.value("DUMP", "victim")
    at = payload.index(b"BKRV")
    rng = random.Random(7)

    def patched(offset, data):
        p = bytearray(payload)
        p[at + offset:at + offset + len(data)] = data
        return bytes(p)
    crafted = [
        patched(12, struct.pack("<I", 0xFFFFFFFF)),             # filter count 2^32-1
        patched(56, struct.pack("<Q", 0xFFFFFFFFFFFFFFFF)),     # image size 2^64-1
        patched(56, struct.pack("<Q", 1 << 35)),                # image size 32 GiB (vs the bytes present)
        patched(8, struct.pack("<I", 9)),                        # unknown family
        patched(4, struct.pack("<I", 2)),                        # future encoding version
        patched(0, b"XXXX"),
    ]
    for _ in range(40):
        p = bytearray(payload)
        for _ in range(rng.randint(1, 8)):
            p[rng.randrange(at, len(p) - 10)] = rng.randrange(256)
        crafted.append(bytes(p))
    refused = 0
    for i, p in enumerate(crafted):
        reply = c.value("RESTORE", "hostile%d" % i, "0", p)
        if isinstance(reply, Error):
            refused += 1
        elif i < 6:
            raise AssertionError("crafted payload %d accepted" % i)
        check(c.value("PING") == "PONG", "server died on payload %d" % i)
    print("RESTORE: %d of %d damaged payloads refused, the others loaded whole" % (refused, len(crafted)))
    c.value("CONFIG", "SET", "rdbcompression", "yes")
    # LOADCHUNK: a header claiming 2^36 bytes allocates nothing up front
    header = harness.parse(c.call("BF.SCANDUMP", "victim", "0"))[1]
    huge = bytearray(header)
    huge[56:64] = struct.pack("<Q", 1 << 36)
    check(c.value("BF.LOADCHUNK", "lc", "1", bytes(huge)) == "OK", "header accepted")
    check(c.value("MEMORY", "USAGE", "lc") < 100000, "header chunk allocated its declared size")
    check(c.value("BF.ADD", "lc", "x").startswith("WRONGTYPE"), "a loading key is not usable")
    check(c.value("BF.LOADCHUNK", "lc", "999", "zz") == "ERR received bad data", "out-of-order chunk")
    # a complete but corrupt image is refused and the key removed
    it, first = harness.parse(c.call("BF.SCANDUMP", "victim", "0"))
    it2, body = harness.parse(c.call("BF.SCANDUMP", "victim", it))
    bad = bytearray(body)
    bad[len(bad) // 2] ^= 0xFF
    c.value("BF.LOADCHUNK", "lc2", it, first)
    check(c.value("BF.LOADCHUNK", "lc2", it2, bytes(bad)) == "ERR received bad data", "corrupt image")
    check(c.value("EXISTS", "lc2") == 0, "corrupt load left a key")
    for name, header_bytes in (("g1", b"BKRV"), ("g2", b"\x00" * 64), ("g3", os.urandom(200))):
        check(c.value("BF.LOADCHUNK", name, "1", header_bytes) == "ERR received bad data", "bad header")
        check(c.value("CF.LOADCHUNK", name, "1", header_bytes) == "Invalid header", "bad CF header")
    check(c.value("CF.LOADCHUNK", "g4", "1", first).startswith("Invalid header"), "BF header into CF")
    c.value("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "0")


def test():
    workdir = tempfile.mkdtemp(prefix="bkredis-test-")
    server = harness.Server()
    test_redis_py(server.port)
    with server.client() as c:
        test_bf_growth_fpr(c)
        test_bf_info_between_writes(c)
        test_cf_never_loses(c)
        test_cf_links_of_other_seeds(c)
        test_bk_commands(c, workdir)
    test_bk_resp3(server.port)
    with server.client() as c:
        test_copy_rename_memory(c)
        test_hostile(c)
        c.call("FLUSHALL")
    test_notification_and_info(server)
    with server.client() as c:
        c.call("FLUSHALL")
    test_persistence(server)
    # module arguments
    other = harness.Server(module_args=["INITIAL_SIZE", "500", "ERROR_RATE", "0.001", "CF_MAX_EXPANSIONS", "2"])
    with other.client() as c:
        c.value("BF.ADD", "d", "x")
        info = harness.parse(c.call("BF.INFO", "d"))
        check(info[1] == 500, "INITIAL_SIZE %r" % info)
        c.value("CF.RESERVE", "c", "100", "EXPANSION", "1")
        results = c.value("CF.INSERT", "c", "ITEMS", *["i%d" % i for i in range(1000)])
        check(-1 in results and harness.parse(c.call("CF.INFO", "c"))[5] == 2, "CF_MAX_EXPANSIONS 2")
    other.stop()
    bad = None
    try:
        bad = harness.Server(module_args=["ERROR_RATE", "2"])
    except RuntimeError:
        pass
    check(bad is None, "a bad module argument was accepted")
    server.stop()


if __name__ == "__main__":
    harness.main(test)
