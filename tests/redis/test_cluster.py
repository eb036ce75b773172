"""bloomkit.so replicated and clustered: a replica answers every read as
its master does (and refuses writes); a three-master Redis Cluster made
by `redis-cli --cluster create` holds filters on keys over all its slots,
answers identically after `redis-cli --cluster reshard` moves slots that
hold filters (MIGRATE: DUMP/RESTORE), and refuses multi-key commands
across slots.  argv: bloomkit.so."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Error, check  # noqa: E402

ITEMS = ["item:%d" % i for i in range(300)]
OTHERS = ["other:%d" % i for i in range(300)]


def crc16(data):
    """CRC16-CCITT (XMODEM), Redis Cluster's key hash."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def slot(key):
    k = key.encode()
    start = k.find(b"{")
    if start >= 0:
        end = k.find(b"}", start + 1)
        if end > start + 1:
            k = k[start + 1:end]
    return crc16(k) % 16384


def wait_for(condition, what, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting for " + what)


def fill(send, keys):
    """Filters of each family on `keys` (send(key, *command) routes)."""
    for i, k in enumerate(keys):
        family = i % 3
        if family == 0:
            send(k, "BF.RESERVE", k, "0.01", "200")
            send(k, "BF.MADD", k, *ITEMS[i % 50:i % 50 + 100])
        elif family == 1:
            send(k, "CF.INSERT", k, "CAPACITY", "300", "ITEMS", *ITEMS[i % 50:i % 50 + 100])
        else:
            send(k, "BK.RESERVE", k, "blocked", "200", "0.01")
            send(k, "BK.MADD", k, *ITEMS[i % 50:i % 50 + 100])


def read_all(send, keys):
    out = []
    for i, k in enumerate(keys):
        exists = ("BF.MEXISTS", "CF.MEXISTS", "BK.MEXISTS")[i % 3]
        out.append(send(k, exists, k, *(ITEMS + OTHERS)))
        out.append(send(k, "BK.DUMP", k) if i % 3 != 1 else send(k, "CF.INFO", k))
    return out


def test_replica():
    master = harness.Server()
    replica = harness.Server("--replicaof", "127.0.0.1", str(master.port))
    keys = ["r%d" % i for i in range(60)]
    with master.client() as m, replica.client() as r:
        fill(lambda k, *cmd: m.call(*cmd), keys)
        wait_for(lambda: b"master_link_status:up" in harness.parse(r.call("INFO", "replication")), "replica link")
        m.call("WAIT", "1", "10000")
        offset = lambda c: [l for l in harness.parse(c.call("INFO", "replication")).split(b"\r\n")
                            if l.startswith(b"master_repl_offset:") or l.startswith(b"slave_repl_offset:")]
        wait_for(lambda: offset(r)[0].split(b":")[1] == offset(m)[0].split(b":")[1], "replica offset")
        ours = read_all(lambda k, *cmd: m.call(*cmd), keys)
        theirs = read_all(lambda k, *cmd: r.call(*cmd), keys)
        check(ours == theirs, "the replica answers differently")
        check(harness.parse(r.call("BF.ADD", keys[0], "x")).startswith("READONLY"), "replica took a write")
        # a new filter after the initial sync travels as commands
        m.call("BK.BUILD", "static", "fuse8", *ITEMS)
        m.call("WAIT", "1", "10000")
        check(r.call("BK.MEXISTS", "static", *ITEMS) == m.call("BK.MEXISTS", "static", *ITEMS), "replicated build")
    replica.stop()
    master.stop()
    print("replica: %d filters answer identically" % len(keys))


class Cluster:
    def __init__(self, servers):
        self.servers = servers
        self.clients = {s.port: s.client() for s in servers}
        self.refresh()

    def refresh(self):
        self.owner = [None] * 16384
        any_client = next(iter(self.clients.values()))
        for start, end, master, *_ in harness.parse(any_client.call("CLUSTER", "SLOTS")):
            for s in range(start, end + 1):
                self.owner[s] = master[1]

    def send(self, key, *command):
        port = self.owner[slot(key)]
        for _ in range(5):
            raw = self.clients[port].call(*command)
            if raw.startswith(b"-MOVED") or raw.startswith(b"-ASK"):
                port = int(raw.split()[2].split(b":")[1])
                if raw.startswith(b"-ASK"):
                    self.clients[port].call("ASKING")
                continue
            return raw
        raise AssertionError("redirected too often: %r" % raw)


def test_cluster():
    servers = [harness.Server("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                              "--cluster-node-timeout", "5000") for _ in range(3)]
    addresses = ["127.0.0.1:%d" % s.port for s in servers]
    subprocess.run([harness.CLI, "--cluster", "create"] + addresses + ["--cluster-replicas", "0", "--cluster-yes"],
                   check=True, stdout=subprocess.DEVNULL)
    for s in servers:
        with s.client() as c:
            wait_for(lambda: b"cluster_state:ok" in harness.parse(c.call("CLUSTER", "INFO")), "cluster state")
    cluster = Cluster(servers)
    keys = ["filter:%d" % i for i in range(900)]
    fill(cluster.send, keys)
    per_node = {}
    for k in keys:
        per_node[cluster.owner[slot(k)]] = per_node.get(cluster.owner[slot(k)], 0) + 1
    check(len(per_node) == 3 and min(per_node.values()) > 200, "keys per master %r" % per_node)
    before = read_all(cluster.send, keys)
    # multi-key commands: one slot works, several slots are refused
    cluster.send("{t}a", "BK.RESERVE", "{t}a", "bloom", "100", "0.01")
    cluster.send("{t}b", "BK.RESERVE", "{t}b", "bloom", "100", "0.01")
    check(cluster.send("{t}c", "BK.MERGE", "{t}c", "{t}a", "{t}b") == b"+OK\r\n", "same-slot merge")
    crossed = harness.parse(cluster.send(keys[0], "BK.MERGE", keys[0], keys[1], keys[2]))
    check(isinstance(crossed, Error) and crossed.startswith("CROSSSLOT"), "cross-slot merge: %r" % crossed)
    # reshard 3000 slots with their filters from the first master to the second
    with servers[0].client() as c:
        source = harness.parse(c.call("CLUSTER", "MYID")).decode()
    with servers[1].client() as c:
        target = harness.parse(c.call("CLUSTER", "MYID")).decode()
    moved = sum(1 for k in keys if cluster.owner[slot(k)] == servers[0].port and slot(k) < 3000)
    subprocess.run([harness.CLI, "--cluster", "reshard", addresses[0], "--cluster-from", source,
                    "--cluster-to", target, "--cluster-slots", "3000", "--cluster-yes"],
                   check=True, stdout=subprocess.DEVNULL)
    wait_for(lambda: (cluster.refresh() or True) and cluster.owner[0] == servers[1].port, "reshard")
    check(moved > 100, "only %d filters in the moved slots" % moved)
    after = read_all(cluster.send, keys)
    check(after == before, "answers changed across the reshard")
    print("cluster: %d filters over 3 masters %r, %d moved by reshard, identical answers" %
          (len(keys), sorted(per_node.values()), moved))
    for c in cluster.clients.values():
        c.sock.close()
    for s in servers:
        s.stop()


def test():
    test_replica()
    test_cluster()


if __name__ == "__main__":
    harness.main(test)
