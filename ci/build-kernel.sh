#!/usr/bin/env bash
# Usage: ci/build-kernel.sh --rev REV [--config FRAGMENT]... [--name NAME]
#                           [--make-args "ARGS"] [--work DIR] [--help]
#
# Builds bzImage of REV (any revision of the mirror) for config fragments
# (default boot/guest.config; --config repeated merges them in that order)
# merged onto tinyconfig, and prints the path of
# the cached bzImage. The source is checked out in WORK/tree, a detached
# work tree of the mirror used only by the tooling; the objects go to
# WORK/build/NAME (default: the fragments' names joined by '+'), one
# directory per config,
# so walking the series rebuilds only what each commit changes. A bzImage
# is cached under WORK/cache/kernels by tree and config, and a cached one is
# not rebuilt. The build log goes to stderr.
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/build.sh"

REV='' NAME='' MAKE_ARGS=''
declare -a FRAGMENTS=()

# own_option ARG...: this script's own options (see parse_options, common.sh)
# shellcheck disable=SC2034 # parse_options reads OPT_TAKES
own_option() {
	case "$1" in
	--rev) REV=${2:?}; OPT_TAKES=2 ;;
	--config) FRAGMENTS+=("$(realpath -m "${2:?}")"); OPT_TAKES=2 ;;
	--name) NAME=${2:?}; OPT_TAKES=2 ;;
	--make-args) MAKE_ARGS=${2?}; OPT_TAKES=2 ;;
	*) OPT_TAKES=0 ;;
	esac
}

parse_args() {
	parse_options own_option "$@"
	[ -n "$REV" ] || die "--rev is required"
	[ ${#FRAGMENTS[@]} -gt 0 ] || FRAGMENTS=("$SERIES_TOP/boot/guest.config")
	local f name=''
	for f in "${FRAGMENTS[@]}"; do
		[ -r "$f" ] || die "config fragment $f not found"
		name=$name${name:++}$(basename "$f" .config)
	done
	[ -n "$NAME" ] || NAME=$name
}

main() {
	parse_args "$@"
	mirror_exists || die "no mirror at $(mirror_dir): run base/import.sh"
	local commit key cached
	commit=$(mgit rev-parse -q --verify "$REV^{commit}") || die "revision '$REV' not found in the mirror"
	key=$(kernel_cache_key "$commit" "$MAKE_ARGS" "${FRAGMENTS[@]}")
	cached=$(kernel_cache_path "$key")
	if [ -f "$cached" ]; then
		note "$REV: cached bzImage $key"
		printf '%s\n' "$cached"
		return 0
	fi
	take_work_lock
	checkout_build_tree "$commit"
	configure_build "$NAME" "${FRAGMENTS[@]}" >&2
	# shellcheck disable=SC2086 # MAKE_ARGS is a list of make arguments
	kmake -C "$(build_tree)" O="$(build_dir "$NAME")" -j"$(build_jobs)" $MAKE_ARGS bzImage >&2 ||
		die "$REV ($(mgit log -1 --format=%s "$commit")) does not build$(space_note "$(build_dir "$NAME")")"
	store_kernel "$key" "$(build_dir "$NAME")"
	printf '%s\n' "$cached"
}

main "$@"
