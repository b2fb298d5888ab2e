#!/usr/bin/env bash
# Builds on other hosts: with DISTCC_HOSTS set, kmake (every kernel build)
# sends what ccache does not have to the distccd hosts named; here one
# distccd on 127.0.0.1, whose log shows the objects it compiled. Without
# DISTCC_HOSTS nothing goes there, and what ccache has never leaves it.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/build.sh"
. "$(dirname "$0")/../lib/testlib.sh"

need_cmds distcc distccd
make_temp_dir T
export SERIES_CCACHE_DIR=$T/ccache DISTCC_FALLBACK=0
DPID=
stop_distccd() {
	[ -z "$DPID" ] || kill "$DPID" 2>/dev/null || true
}
at_exit stop_distccd

port=$((30000 + RANDOM % 20000))
distccd --daemon --no-detach --listen 127.0.0.1 --port "$port" --allow 127.0.0.1 \
	--log-stderr --log-level info --jobs 2 2>"$T/distccd.log" &
DPID=$!
for _ in $(seq 50); do
	grep -q 'listening on' "$T/distccd.log" 2>/dev/null && break
	sleep 0.1
done
check_grep "distccd listens on 127.0.0.1:$port" 'listening on' "$T/distccd.log"

# sources no cache has seen, and a Makefile that compiles them with $(CC)
mkdir -p "$T/proj"
printf 'all: a.o b.o\n%%.o: %%.c\n\t$(CC) -O2 -c $< -o $@\nclean:\n\trm -f *.o\n' >"$T/proj/Makefile"
write_sources() {
	local n
	for n in a b; do
		printf 'int %s_%s_%s(int x) { return x * %s; }\n' "$n" "$$" "$RANDOM" "$RANDOM" >"$T/proj/$n.c"
	done
}
jobs_done() {
	grep -c 'COMPILE_OK' "$T/distccd.log" || true
}

write_sources
out=$(DISTCC_HOSTS="127.0.0.1:$port/2" kmake -C "$T/proj" CC=gcc 2>&1) && rc=0 || rc=$?
check_eq "kmake builds with DISTCC_HOSTS set" 0 "$rc"
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | tail -n 5
check_eq "both objects were compiled by the distccd on 127.0.0.1" 2 "$(jobs_done)"
check_grep "the log names them" 'COMPILE_OK.* a\.c$' "$T/distccd.log"
check_eq "make's jobs: the hosts' slots plus the cores here" "$((2 + $(nproc)))" \
	"$(DISTCC_HOSTS="127.0.0.1:$port/2" build_jobs)"

kmake -C "$T/proj" clean >/dev/null
DISTCC_HOSTS="127.0.0.1:$port/2" kmake -C "$T/proj" CC=gcc >/dev/null 2>&1
check_eq "what ccache has does not go to distcc again" 2 "$(jobs_done)"

kmake -C "$T/proj" clean >/dev/null
write_sources
(unset DISTCC_HOSTS; kmake -C "$T/proj" CC=gcc >/dev/null 2>&1)
check "without DISTCC_HOSTS the build is local" test -f "$T/proj/b.o"
check_eq "... and nothing reached distccd" 2 "$(jobs_done)"

finish_test_file
