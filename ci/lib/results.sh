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

# results_link DIR NAME: KIND/NAME (latest: the newest; passed: the newest
# that passed) names DIR, a KIND/TIME folder
results_link() {
	ln -sfn "$(basename "$1")" "$(dirname "$1")/$2"
}

# linked_results KIND NAME: the folder KIND/NAME names; fails when none
linked_results() {
	local link
	link=$(results_root)/$1/$2
	[ -d "$link" ] || return 1
	realpath "$link"
}

# new_results_dir KIND [SUFFIX]: makes the run's folder, points
# KIND/latest at it, prints its path
new_results_dir() {
	local dir
	dir=$(results_dir_name "$@")
	mkdir -p "$dir"
	results_link "$dir" latest
	printf '%s\n' "$dir"
}

# passed_results KIND: KIND/passed, when its matrix passed; fails otherwise
passed_results() {
	local dir
	dir=$(linked_results "$1" passed) && matrix_passed "$dir" || return 1
	printf '%s\n' "$dir"
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
