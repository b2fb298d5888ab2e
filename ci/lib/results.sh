# shellcheck shell=bash
# The results the stages hand each other: one folder per run under
# WORK/results/KIND/TIME[-SUFFIX], KIND/latest naming the newest and, for
# the main job, KIND/passed the newest run in which everything passed; and
# the one reader of the matrix.tsv files written in them. Kinds:
# bisect-boot (the main job), bisect (its --bisect-run steps), checks
# (ci/check-commits.sh alone), b4 (b4/prep.sh alone), bench-driver.
# Sourced after ci/lib/common.sh.

# results_dir_name KIND [SUFFIX]: the folder a run of KIND starting now
# writes, not made yet (a stage that writes its output whole moves it there)
results_dir_name() {
	printf '%s/%s/%s%s\n' "$(results_root)" "$1" "$(date -u +%Y%m%dT%H%M%SZ)" "${2:+-$2}"
}

# link_latest DIR: DIR (a KIND/TIME folder) is KIND's newest
link_latest() {
	ln -sfn "$(basename "$1")" "$(dirname "$1")/latest"
}

# new_results_dir KIND [SUFFIX]: makes the run's folder, points
# KIND/latest at it, prints its path
new_results_dir() {
	local dir
	dir=$(results_dir_name "$@")
	mkdir -p "$dir"
	link_latest "$dir"
	printf '%s\n' "$dir"
}

# latest_results KIND: the newest run's folder; fails when there is none
latest_results() {
	local link
	link=$(results_root)/$1/latest
	[ -d "$link" ] || return 1
	realpath "$link"
}

# mark_passed DIR: DIR (a KIND/TIME folder) is the newest that passed
mark_passed() {
	ln -sfn "$(basename "$1")" "$(dirname "$1")/passed"
}

# passed_results KIND: the newest folder mark_passed named; fails when none
passed_results() {
	local link
	link=$(results_root)/$1/passed
	[ -d "$link" ] && matrix_passed "$link" || return 1
	realpath "$link"
}

# matrix_cell DIR ROW COLUMN: the cell of DIR/matrix.tsv in the row whose
# first cell is ROW and the column whose header is COLUMN (empty if none)
matrix_cell() {
	awk -F'\t' -v row="$2" -v col="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
		c && $1 == row { print $c }' "$1/matrix.tsv"
}

# matrix_column DIR COLUMN: that column's cells, one line per row, in order
matrix_column() {
	awk -F'\t' -v col="$2" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
		c { print $c }' "$1/matrix.tsv"
}

# matrix_passed DIR: DIR/matrix.tsv has rows, and every row's verdict (its
# last column) is ok
matrix_passed() {
	[ -f "$1/matrix.tsv" ] || return 1
	awk -F'\t' 'NR > 1 { n++; if ($NF != "ok") bad = 1 } END { exit (n > 0 && !bad) ? 0 : 1 }' "$1/matrix.tsv"
}
