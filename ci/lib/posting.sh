# shellcheck shell=bash
# The posting's sender and "the commit as posted", shared by b4/prep.sh,
# ci/checks/checkpatch.sh and ci/bisect-boot.sh. Source it after common.sh.
#
# The sender is `git config user.name` / `user.email` as seen from this
# repository (the global config), or SERIES_SENDER="Name <email>". A patch
# whose author is the tooling identity (export_tool_committer) is the
# sender's own: as posted, its author is the sender, and so is the
# maintainer of a MAINTAINERS entry it adds. Every patch as posted
# ends its trailers with the sender's Signed-off-by. Without a real sender
# (a draft), the tooling identity stands in for it.

# The identity the tooling commits as: "virtio-pmem series tooling <...>".
tool_identity() {
	(
		export_tool_committer
		printf '%s <%s>\n' "$GIT_COMMITTER_NAME" "$GIT_COMMITTER_EMAIL"
	)
}

# sender_identity: "Name <email>" from SERIES_SENDER or git config (either
# part empty when unset)
sender_identity() {
	if [ -n "${SERIES_SENDER:-}" ]; then
		printf '%s\n' "$SERIES_SENDER"
		return 0
	fi
	printf '%s <%s>\n' "$(git -C "$SERIES_TOP" config user.name || true)" \
		"$(git -C "$SERIES_TOP" config user.email || true)"
}

# ident_name IDENT, ident_email IDENT: the parts of "Name <email>"
ident_name() {
	local n=${1%%<*}
	n=${n#"${n%%[![:space:]]*}"}
	printf '%s\n' "${n%"${n##*[![:space:]]}"}"
}

ident_email() {
	local re='<([^<>]*)>[[:space:]]*$'
	[[ $1 =~ $re ]] || return 0
	printf '%s\n' "${BASH_REMATCH[1]}"
}

# identity_problem IDENT: why IDENT cannot sign a posting, or nothing when
# it can. Placeholders: no name or email, an email domain reserved for
# examples and tests (example.org/.com/.net, *.example, *.invalid, *.test,
# localhost, *.localhost: RFC 2606, RFC 6761) or one that is no domain.
identity_problem() {
	local ident=$1 name email domain
	name=$(ident_name "$ident")
	email=$(ident_email "$ident")
	if [ -z "$email" ]; then
		echo "no email address"
	elif [ -z "$name" ]; then
		echo "no name"
	elif [[ ! $email =~ ^[^@[:space:]]+@[^@[:space:]]+$ ]]; then
		echo "'$email' is not an email address"
	else
		domain=${email##*@}
		domain=${domain,,}
		case "$domain" in
		example.org | example.com | example.net | *.example.org | *.example.com | *.example.net | \
			*.example | *.invalid | *.test | localhost | *.localhost)
			echo "the domain $domain is reserved for examples and tests, not mail" ;;
		*.*) ;;
		*) echo "the domain $domain is not a mail domain" ;;
		esac
	fi
}

# posting_sender: the sender when it can sign a posting, else the tooling
# identity (what a draft is signed with)
posting_sender() {
	local sender
	sender=$(sender_identity)
	if [ -z "$(identity_problem "$sender")" ]; then
		printf '%s\n' "$sender"
	else
		tool_identity
	fi
}

# posted_author COMMIT SENDER: the sender for a commit the tooling
# authored, else the commit's own author
posted_author() {
	local author
	author=$(mgit log -1 --format='%an <%ae>' "$1")
	if [ "$author" = "$(tool_identity)" ]; then
		printf '%s\n' "$2"
	else
		printf '%s\n' "$author"
	fi
}

# posted_message COMMIT SENDER: COMMIT's message with the sender's
# Signed-off-by as its last trailer (above the '---' notes), unless it is
# the last one already. A note "[sender: what changed]" on someone else's
# patch names the sender, as "[Name: what changed]".
posted_message() {
	local name
	name=$(ident_name "$2")
	mgit log -1 --format=%B "$1" |
		awk -v name="$name" '/^\[sender: / { sub(/^\[sender: /, "[" name ": ") } { print }' |
		mgit interpret-trailers --where end --if-exists addIfDifferentNeighbor \
			--trailer "Signed-off-by: $2"
}

# posted_tree COMMIT PARENT SENDER: COMMIT's tree, but where the commit
# names the tooling identity in MAINTAINERS (a new entry's maintainer is
# the sender, known only at posting) the sender stands there instead
posted_tree() {
	local commit=$1 parent=$2 tool blob index
	tool=$(tool_identity)
	if ! mgit diff "$parent" "$commit" -- MAINTAINERS | grep -q "^+.*$tool"; then
		mgit rev-parse "$commit^{tree}"
		return 0
	fi
	blob=$(mgit show "$commit:MAINTAINERS" | sed "s|$tool|$3|" | mgit hash-object -w --stdin)
	index=$(mktemp)
	GIT_INDEX_FILE=$index mgit read-tree "$commit" &&
		GIT_INDEX_FILE=$index mgit update-index --cacheinfo "100644,$blob,MAINTAINERS" &&
		GIT_INDEX_FILE=$index mgit write-tree
	rm -f "$index"
}

# posted_commit COMMIT PARENT SENDER: a new commit object (no ref) with
# COMMIT's tree as posted (posted_tree) on PARENT, the posted author and
# message, and COMMIT's dates, so the same input gives the same commit id
posted_commit() {
	local commit=$1 parent=$2 sender=$3 author tree
	author=$(posted_author "$commit" "$sender")
	tree=$(posted_tree "$commit" "$parent" "$sender")
	posted_message "$commit" "$sender" | (
		export_tool_committer
		GIT_AUTHOR_NAME=$(ident_name "$author") GIT_AUTHOR_EMAIL=$(ident_email "$author") \
			GIT_AUTHOR_DATE=$(mgit log -1 --format=%ad --date=raw "$commit") \
			GIT_COMMITTER_DATE=$(mgit log -1 --format=%cd --date=raw "$commit") \
			mgit commit-tree "$tree" -p "$parent"
	)
}

# posted_series BASE TIP SENDER: BASE..TIP replayed as posted; prints the
# new tip (BASE itself when the range is empty)
posted_series() {
	local base=$1 tip=$2 sender=$3 prev c
	prev=$(mgit rev-parse "$base^{commit}")
	for c in $(mgit rev-list --reverse "$base..$tip"); do
		prev=$(posted_commit "$c" "$prev" "$sender") ||
			die "cannot write commit $c of $base..$tip as posted"
	done
	printf '%s\n' "$prev"
}
