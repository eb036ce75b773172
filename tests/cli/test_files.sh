#!/bin/sh
# tests/cli/test_files.sh BLOOMKIT -- the files the `bloomkit` command writes.
#
# Run by CTest (tests/CMakeLists.txt) with the path of the built command.
# Every check can fail; the script reports each failure and exits 1 if any.
#
#   1. targets that are not regular files (a device node, a FIFO, a
#      symbolic link to /proc/self/fd/1) are refused: exit 2, nothing
#      written;
#   2. a symbolic link is followed (the file it names changes, the link
#      stays); a file with other hard links is updated in place by add
#      (every name sees the keys) and refused by create/build/merge;
#   3. mode, owner and group survive add and create --force; a read-only
#      file needs -f;
#   4. a command whose output fails (stdout /dev/full or closed) changes no
#      file;
#   5. parallel writers lose no key, and queries meanwhile read whole files;
#      --no-wait fails while another holds the lock, a plain add waits for
#      it, a query never waits;
#   6. leftover temporary files of dead writers are removed, others kept;
#   7. query --mmap of a pipe (/dev/stdin) falls back to reading it;
#   8. output errors (e.g. --help > /dev/full) exit 2.

set -u
BK=${1:?usage: test_files.sh PATH-TO-BLOOMKIT}
case $BK in /*) ;; *) BK=$(pwd)/$BK ;; esac
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bloomkit-files-test.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

failures=0
checks=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}
check() { # check DESCRIPTION CONDITION...
    what=$1
    shift
    checks=$((checks + 1))
    "$@" || fail "$what"
}
# refused DESCRIPTION MESSAGE COMMAND...: exit 2 and MESSAGE on stderr.
refused() {
    what=$1
    message=$2
    shift 2
    "$@" > out 2> err
    status=$?
    check "$what: exit 2 (got $status)" test $status -eq 2
    check "$what: says '$message'" grep -q "$message" err
}
present() { # present FILE KEY...: every KEY may be in FILE
    file=$1
    shift
    count=$("$BK" query -c "$file" "$@" 2> /dev/null)
    test "$count" = "$#"
}

"$BK" create -q base.bkf -n 10000 || exit 1
"$BK" add -q base.bkf old1 old2 || exit 1

# ------------------------------------------------------------------ 1. not regular files
# A device: a private copy of /dev/null's node (never the system's own: a
# broken build would replace it for the whole machine).
if [ "$(id -u)" = 0 ] && mknod null_device c 1 3 2> /dev/null; then
    refused "create over a device" "not a regular file" "$BK" create null_device -n 1000 --force
    check "the device is still a character device" test -c null_device
fi
mkfifo fifo
refused "create over a FIFO" "not a regular file" "$BK" create fifo -n 1000 --force
refused "build over a FIFO" "not a regular file" sh -c "echo k | '$BK' build fifo --force"
refused "merge over a FIFO" "not a regular file" "$BK" merge fifo base.bkf base.bkf --force
refused "add to a FIFO" "not a regular file" "$BK" add fifo k
check "the FIFO is still a FIFO" test -p fifo
ln -s /proc/self/fd/1 to_stdout
("$BK" merge to_stdout base.bkf base.bkf --force 2> err; echo $? > merge_status) | cat > merged
status=$(cat merge_status)
check "merge onto a link to /proc/self/fd/1: exit 2 (got $status)" test $status -eq 2
check "merge onto a link to /proc/self/fd/1: the link stays" test -L to_stdout
check "merge onto a link to /proc/self/fd/1: nothing written" test ! -s merged

# ------------------------------------------------------------------ 2. links
mkdir real
cp base.bkf real/target.bkf
ln -s real/target.bkf link.bkf
"$BK" add -q link.bkf via_link
check "add through a symbolic link: the link stays a link" test -L link.bkf
check "add through a symbolic link: the target has the key" present real/target.bkf via_link old1
"$BK" create -q link.bkf -n 500 --force
check "create --force through a link: the link stays" test -L link.bkf
check "create --force through a link: the target is new" test "$(wc -c < real/target.bkf)" -lt 4096
check "create --force through a link: no file left beside the target" \
    test "$(ls real)" = target.bkf
cp base.bkf one.bkf
ln one.bkf two.bkf
"$BK" add -q two.bkf via_hard_link
check "add through a hard link: the other name sees the key" present one.bkf via_hard_link old1
check "add through a hard link: still one file" test "$(stat -c %h one.bkf)" = 2
cp one.bkf one.before
refused "create --force over a hard-linked file" "hard links" "$BK" create one.bkf -n 10 --force
check "create --force over a hard-linked file: unchanged" cmp -s one.bkf one.before

# ------------------------------------------------------------------ 3. mode and owner
cp base.bkf private.bkf
chmod 600 private.bkf
"$BK" add -q private.bkf k1
check "add keeps mode 600 (got $(stat -c %a private.bkf))" test "$(stat -c %a private.bkf)" = 600
"$BK" create -q private.bkf -n 100 --force
check "create --force keeps mode 600" test "$(stat -c %a private.bkf)" = 600
if [ "$(id -u)" = 0 ]; then
    cp base.bkf owned.bkf
    chown 12345:23456 owned.bkf
    "$BK" add -q owned.bkf k1
    check "add as root keeps owner and group" test "$(stat -c %u:%g owned.bkf)" = 12345:23456
    "$BK" merge owned.bkf base.bkf base.bkf --force
    check "merge --force as root keeps owner and group" \
        test "$(stat -c %u:%g owned.bkf)" = 12345:23456
fi
cp base.bkf readonly.bkf
chmod 444 readonly.bkf
cp readonly.bkf readonly.before
refused "add to a read-only file" "read-only" "$BK" add readonly.bkf k1
check "the read-only file is unchanged" cmp -s readonly.bkf readonly.before
if [ "$(id -u)" = 0 ]; then
    "$BK" add -q -f readonly.bkf k1
    check "add -f changes a read-only file" present readonly.bkf k1
    check "add -f keeps mode 444" test "$(stat -c %a readonly.bkf)" = 444
fi

# ------------------------------------------------------------------ 4. failed output, no change
cp base.bkf out.bkf
cp out.bkf out.before
if [ -c /dev/full ]; then
    refused "add with stdout on /dev/full" "cannot write standard output" \
        sh -c "'$BK' add out.bkf lost1 > /dev/full"
    check "add with stdout on /dev/full: file unchanged" cmp -s out.bkf out.before
    refused "create with stdout on /dev/full" "cannot write standard output" \
        sh -c "'$BK' create new1.bkf -n 100 > /dev/full"
    check "create with stdout on /dev/full: no file" test ! -e new1.bkf
    "$BK" remove -q base.bkf nothing > /dev/full 2> /dev/null # (not a counting filter)
fi
"$BK" add out.bkf lost2 >&- 2> err
status=$?
check "add with stdout closed: exit 2 (got $status)" test $status -eq 2
check "add with stdout closed: file unchanged" cmp -s out.bkf out.before
"$BK" create new2.bkf -n 100 >&- 2> err
check "create with stdout closed: no file" test ! -e new2.bkf
echo k | "$BK" build new3.bkf --kind bloom -n 10 >&- 2> err
check "build with stdout closed: no file" test ! -e new3.bkf
"$BK" create -q new4.bkf -n 100 >&- 2> err
status=$?
check "create -q with stdout closed succeeds (nothing to print; got $status)" test $status -eq 0
"$BK" create -q counting.bkf --kind counting -n 1000 && "$BK" add -q counting.bkf c1 c2
cp counting.bkf counting.before
"$BK" remove counting.bkf c1 >&- 2> err
status=$?
check "remove with stdout closed: exit 2 (got $status)" test $status -eq 2
check "remove with stdout closed: file unchanged" cmp -s counting.bkf counting.before

# ------------------------------------------------------------------ 5. locking
"$BK" create -q shared.bkf -n 200000
: > all_keys
pids=
for writer in 1 2 3 4; do
    awk -v w=$writer 'BEGIN { for (i = 0; i < 3000; i++) print "w" w ":" i }' > keys$writer
    cat keys$writer >> all_keys
done
awk 'BEGIN { for (i = 0; i < 3000; i++) print "before:" i }' > keys_before
"$BK" add -q shared.bkf < keys_before
for writer in 1 2 3 4; do
    "$BK" add -q shared.bkf < keys$writer &
    pids="$pids $!"
done
# Readers meanwhile: never blocked, never a half-written file.
reader_failures=0
for reader in 1 2 3 4 5 6 7 8 9 10; do
    found=$("$BK" query -c shared.bkf < keys_before 2> err)
    [ "$found" = 3000 ] || { reader_failures=$((reader_failures + 1)); cat err >&2; }
done
statuses=0
for pid in $pids; do wait $pid || statuses=$((statuses + 1)); done
check "four parallel writers all succeed" test $statuses -eq 0
check "queries during the writes all read a whole file ($reader_failures failed)" \
    test $reader_failures -eq 0
found=$("$BK" query -c shared.bkf < all_keys)
check "four parallel writers: every key kept (found $found of 12000)" test "$found" = 12000
# Another writer holds the lock: python3 (as in test_cli.sh) takes flock(2)
# on the file, as bloomkit does, and holds it until killed.
PYTHON=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
if [ -n "$PYTHON" ]; then
    "$PYTHON" -c '
import fcntl, sys, time
f = open(sys.argv[1], "rb")
fcntl.flock(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(60)' shared.bkf locked &
    holder=$!
    while [ ! -e locked ]; do sleep 0.05; done
    refused "add --no-wait while another holds the lock" "being changed" \
        "$BK" add --no-wait shared.bkf k1
    check "a query does not wait for the lock" timeout 10 "$BK" query -c shared.bkf w1:1 > /dev/null
    ("$BK" add -q shared.bkf waited && echo done > added) &
    waiter=$!
    sleep 0.5
    check "add waits while another holds the lock" test ! -e added
    kill $holder
    wait $waiter
    check "add goes on once the lock is free" test -e added
    check "the waiting add's key is in" present shared.bkf waited w2:2
fi

# ------------------------------------------------------------------ 6. stale temporaries
cp base.bkf temp.bkf
dead=$(sh -c 'echo $$')
: > "temp.bkf.$dead.1234.tmp"
: > "temp.bkf.$$.5678.tmp"
: > "temp.bkf.notapid.tmp"
"$BK" add -q temp.bkf t1
check "a dead writer's temporary file is removed" test ! -e "temp.bkf.$dead.1234.tmp"
check "a live writer's temporary file is kept" test -e "temp.bkf.$$.5678.tmp"
check "other files are kept" test -e temp.bkf.notapid.tmp
: > "temp.bkf.$dead.99.tmp"
"$BK" create -q temp.bkf -n 100 --force
check "create --force removes a dead writer's temporary file" test ! -e "temp.bkf.$dead.99.tmp"

# ------------------------------------------------------------------ 7. mapping a pipe
cat base.bkf | "$BK" query --mmap /dev/stdin old1 > out 2> err
status=$?
check "query --mmap /dev/stdin (a pipe): exit 0 (got $status; $(cat err))" test $status -eq 0
check "query --mmap /dev/stdin finds the key" grep -qx old1 out

# ------------------------------------------------------------------ 8. output errors
if [ -c /dev/full ]; then
    refused "--help > /dev/full" "cannot write standard output" sh -c "'$BK' --help > /dev/full"
    for command in size create add query info merge intersect estimate remove build demo; do
        refused "$command --help > /dev/full" "cannot write standard output" \
            sh -c "'$BK' $command --help > /dev/full"
    done
    refused "--version > /dev/full" "cannot write" sh -c "'$BK' --version > /dev/full"
    refused "info > /dev/full" "cannot write" sh -c "'$BK' info base.bkf > /dev/full"
    refused "size > /dev/full" "cannot write" sh -c "'$BK' size -n 100 > /dev/full"
    refused "query > /dev/full" "cannot write" sh -c "'$BK' query base.bkf old1 > /dev/full"
fi

echo "$checks checks, $failures failed"
[ $failures -eq 0 ]
