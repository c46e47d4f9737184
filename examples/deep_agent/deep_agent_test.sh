#!/usr/bin/env bash
# Checks the deep_agent example: the /secrets/ write pauses and the /notes.txt write does not;
# the subagent's read_file review pauses the parent thread; each approval comes from a new
# process; the files land in the confined folder.
set -euo pipefail
bin="$1"
dir="$(mktemp -d)"; trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
run() { "$bin" --db "$dir/d.db" --root "$dir/files" --thread t1 "$@"; }

out=$(run start "save the api key and my notes")
grep -q 'PAUSED: write_file {"content":"sk-demo","file_path":"/secrets/key.txt"}' <<<"$out" \
  || fail "the secrets write did not pause: $out"
grep -q "notes.txt" <<<"$out" && fail "the notes write was reviewed: $out"
[[ ! -e "$dir/files/secrets/key.txt" ]] || fail "the key was written before the approval"

out=$(run approve)
grep -q 'PAUSED: read_file {"file_path":"/notes.txt"}' <<<"$out" || fail "subagent review: $out"
[[ "$(cat "$dir/files/secrets/key.txt")" == "sk-demo" ]] || fail "key not written"
[[ "$(cat "$dir/files/notes.txt")" == "deploy on friday" ]] || fail "notes not written"

out=$(run approve)
grep -q "DONE: Saved. The file manager says: 1  deploy on friday" <<<"$out" || fail "done: $out"

if run approve 2>"$dir/err"; then fail "a resume with nothing pending was accepted"; fi
grep -q "conflict" "$dir/err" || fail "unexpected error: $(cat "$dir/err")"

out=$("$bin" --db "$dir/d.db" --root "$dir/files2" demo)
grep -q "DONE: Saved." <<<"$out" || fail "demo: $out"
echo "deep_agent: all checks passed"
