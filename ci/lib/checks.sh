# shellcheck shell=bash
# The contract of a per-commit check (ci/checks/NAME.sh), and its helpers.
#
#   ci/checks/NAME.sh --commit C --parent P --out DIR [--work WORK]
#
# writes its full log to DIR/NAME.log and the findings the commit adds, one
# per line, to DIR/NAME.new, and exits 0 (nothing new), 1 (new warnings) or
# 2 (an error: the commit does not build, a tool failed). Findings are
# compared with the same check on the parent, with line numbers dropped, so
# warnings already in the tree never count against a commit.
# Needs common.sh.

CHECK_NAME=$(basename "$0" .sh)
CHECK_COMMIT= CHECK_PARENT= CHECK_OUT=

parse_check_args() {
	while [ $# -gt 0 ]; do
		case "$1" in
		-h | --help) usage_from_header "$0"; exit 0 ;;
		--commit) CHECK_COMMIT=${2:?}; shift ;;
		--parent) CHECK_PARENT=${2:?}; shift ;;
		--out) CHECK_OUT=$(realpath -m "${2:?}"); shift ;;
		--work) SERIES_WORK=$(realpath -m "${2:?}"); shift ;;
		*) die "unknown argument '$1' (see --help)" ;;
		esac
		shift
	done
	[ -n "$CHECK_COMMIT" ] && [ -n "$CHECK_PARENT" ] && [ -n "$CHECK_OUT" ] ||
		die "--commit, --parent and --out are required"
	mkdir -p "$CHECK_OUT"
	CHECK_LOG=$CHECK_OUT/$CHECK_NAME.log
	CHECK_NEW=$CHECK_OUT/$CHECK_NAME.new
	: >"$CHECK_LOG"
	: >"$CHECK_NEW"
}

# Files the commit adds or modifies (not deletes).
touched_files() {
	mgit diff --name-only --diff-filter=AM "$CHECK_PARENT" "$CHECK_COMMIT"
}

touched_c_files() {
	touched_files | grep '\.c$' || true
}

# "FILE:LINE:COL: warning: msg" -> "FILE: warning: msg"; line numbers
# inside messages ("... on line 734") go too.
normalize_warnings() {
	sed -E 's/^([^: ]+):[0-9]+(:[0-9]+)?(-[0-9]+)?:/\1:/; s/([Ll]ine) [0-9]+/\1 N/g' | sort -u
}

# new_findings PARENT-FILE CHILD-FILE: child lines not in the parent's
new_findings() {
	comm -13 <(sort -u "$1") <(sort -u "$2")
}

# Exit as the contract says, from the findings file.
finish_check() {
	local n
	n=$(grep -c . "$CHECK_NEW" || true)
	printf '%s: %s new finding(s)\n' "$CHECK_NAME" "$n" >>"$CHECK_LOG"
	[ "$n" -eq 0 ] || exit 1
	exit 0
}

check_error() {
	printf '%s\n' "$*" >>"$CHECK_NEW"
	printf 'ERROR: %s\n' "$*" >>"$CHECK_LOG"
	exit 2
}
