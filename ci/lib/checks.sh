# shellcheck shell=bash
# The contract of a per-commit check (ci/checks/NAME.sh), and its helpers.
#
#   ci/checks/NAME.sh --commit C --parent P --out DIR [--work WORK]
#   ci/checks/NAME.sh --commit C --parent P --content-key [--work WORK]
#
# writes its full log to DIR/NAME.log and the findings the commit adds, one
# per line, to DIR/NAME.new, and exits 0 (nothing new), 1 (new warnings) or
# 2 (an error: the commit does not build, a tool failed). A check whose
# verdict reads less than the whole commit says so in a "# Cached by
# content" line and defines content_key; with --content-key (and --commit,
# --parent) it prints that key instead of checking, and ci/check-commits.sh
# files its verdict under the key, not the commit. Findings are
# compared with the same check on the parent, with line numbers dropped, so
# warnings already in the tree never count against a commit.
# Needs common.sh and build.sh.

CHECK_NAME=$(basename "$0" .sh)
CHECK_COMMIT='' CHECK_PARENT='' CHECK_OUT='' CHECK_CONTENT_KEY=no

# own_option ARG...: this script's own options (see parse_options, common.sh)
# shellcheck disable=SC2034 # parse_options reads OPT_TAKES
own_option() {
	case "$1" in
	--commit) CHECK_COMMIT=${2:?}; OPT_TAKES=2 ;;
	--parent) CHECK_PARENT=${2:?}; OPT_TAKES=2 ;;
	--out) CHECK_OUT=$(realpath -m "${2:?}"); OPT_TAKES=2 ;;
	--content-key) CHECK_CONTENT_KEY=yes ;;
	*) OPT_TAKES=0 ;;
	esac
}

parse_check_args() {
	parse_options own_option "$@"
	if [ "$CHECK_CONTENT_KEY" = yes ]; then
		[ -n "$CHECK_COMMIT" ] && [ -n "$CHECK_PARENT" ] || die "--content-key needs --commit and --parent"
		declare -F content_key >/dev/null || die "$CHECK_NAME has no content key: its cache is by commit"
		content_key
		exit 0
	fi
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

# first_error LOG: the line of a make log that names what failed
first_error() {
	grep -m1 -E 'error:|Error [0-9]' "$1" || tail -n 1 "$1"
}

check_error() {
	printf '%s\n' "$*" >>"$CHECK_NEW"
	printf 'ERROR: %s\n' "$*" >>"$CHECK_LOG"
	exit 2
}

# The C files a tool scans at a revision: those the commit touches plus
# SERIES_CHECK_FILES (ci/check-commits.sh sets it to every C file the range
# touches). Scanning the same set at every commit of a walk makes each
# commit's baseline the scan its parent already got, from the cache, so
# the tree only ever moves forward and builds stay incremental.
scan_files() {
	# shellcheck disable=SC2086 # a space-separated list
	{ touched_c_files; printf '%s\n' ${SERIES_CHECK_FILES:-}; } | grep . | sort -u || true
}

# findings_cache TOOL CONFIG REV: where the normalized findings of TOOL on
# the scanned files at REV are kept (by tree, config, file set and check).
findings_cache() {
	local tool=$1 name=$2 rev=$3 key
	key=$({ scan_files; cat "$(config_fragment "$name")" "$0" "$SERIES_TOP/ci/lib/checks.sh"; } |
		sha256sum | cut -c1-16)
	printf '%s/cache/findings/%s-%s-%s-%s\n' "$SERIES_WORK" \
		"$(mgit rev-parse "$rev^{tree}" | cut -c1-16)" "$tool" "$name" "$key"
}

# Objects of the scanned files that REV has and the config builds (its
# last full build made them).
scanned_objects() {
	local name=$1 rev=$2 f
	for f in $(scan_files); do
		mgit cat-file -e "$rev:$f" 2>/dev/null || continue
		[ -f "$(build_dir "$name")/${f%.c}.o" ] && printf '%s\n' "${f%.c}.o"
	done
	return 0
}

# scan_objects TOOL CONFIG REV MAKE-ARG...: with the tree at REV, make the
# scanned objects with MAKE-ARGs (W=1, C=2 ...) and cache the warnings.
scan_objects() {
	local tool=$1 name=$2 rev=$3 out objs
	shift 3
	out=$(findings_cache "$tool" "$name" "$rev")
	mapfile -t objs < <(scanned_objects "$name" "$rev")
	mkdir -p "$(dirname "$out")"
	printf '== %s %s at %s: %s\n' "$tool" "$name" "$rev" "${objs[*]:-(no object built)}" >>"$CHECK_LOG"
	if [ ${#objs[@]} -gt 0 ]; then
		kmake -C "$(build_tree)" O="$(build_dir "$name")" -j"$(build_jobs)" "$@" "${objs[@]}" \
			>"$out.log" 2>&1 || check_error "$tool ($name config) failed at $rev: $(first_error "$out.log")"
		cat "$out.log" >>"$CHECK_LOG"
	else
		: >"$out.log"
	fi
	# sparse names files by their absolute path in the build tree
	sed "s|^$(build_tree)/||" "$out.log" | grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' |
		normalize_warnings >"$out.tmp" || true
	mv "$out.tmp" "$out"
}

has_findings() {
	[ -f "$(findings_cache "$@")" ]
}

# new_scan_findings TOOL CONFIG: what the commit's scan has that the
# parent's has not, tagged with the tool and config.
new_scan_findings() {
	local tool=$1 name=$2
	new_findings "$(findings_cache "$tool" "$name" "$CHECK_PARENT")" \
		"$(findings_cache "$tool" "$name" "$CHECK_COMMIT")" | sed "s/^/[$tool $name] /"
}
