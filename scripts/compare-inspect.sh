#!/usr/bin/env bash
# Compares `inspect --json`, `check`, `dump`, `convert` and the contents
# commands (show, sizes, diff) of two ovsdb-scope binaries (OLD, NEW) on
# every sample, fixture, storage-mode copy and damaged copy. Exit 1 on a
# difference.
set -u
OLD=${1:?old binary}; NEW=${2:?new binary}
cd "$(dirname "$0")/.."
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
files=( static/samples/*/*.db tests/fixtures/incidents/*/*.db tests/fixtures/external/*/*.records )
inputs=()
for f in "${files[@]}"; do [ -f "$f" ] && inputs+=("$f"); done
# Storage-mode copies.
i=0
for f in "${inputs[@]}"; do
  for m in full diff; do
    o="$W/conv-$i-$m.db"; "$OLD" convert --to $m "$f" "$o" >/dev/null 2>&1 && inputs+=("$o")
  done
  i=$((i+1))
done
# Damaged copies: truncated at a third, a byte flipped in the middle, a
# zeroed 200-byte hole at two thirds.
for f in static/samples/*/s1.db static/samples/standalone/*.db; do
  n=$(stat -c %s "$f"); b=$(basename "$(dirname "$f")")-$(basename "$f")
  head -c $((n/3)) "$f" > "$W/trunc-$b"; inputs+=("$W/trunc-$b")
  python3 - "$f" "$W/flip-$b" "$W/hole-$b" <<'PY'
import sys
d=bytearray(open(sys.argv[1],'rb').read())
f=bytearray(d); f[len(f)//2]^=0x20; open(sys.argv[2],'wb').write(f)
h=bytearray(d); p=2*len(h)//3; h[p:p+200]=bytes(min(200,len(h)-p)); open(sys.argv[3],'wb').write(h)
PY
  inputs+=("$W/flip-$b" "$W/hole-$b")
done
fail=0; n=0
check() {
  "$OLD" inspect --json "$@" > "$W/a" 2>"$W/ae"; ra=$?
  "$NEW" inspect --json "$@" > "$W/b" 2>"$W/be"; rb=$?
  n=$((n+1))
  if ! cmp -s "$W/a" "$W/b" || [ $ra != $rb ] || ! cmp -s "$W/ae" "$W/be"; then
    echo "DIFF: $*"; fail=1
  fi
}
for f in "${inputs[@]}"; do check "$f"; done
for d in static/samples/*/; do check "$d"*.db; done
# check: same output and status on every sample cluster, damaged ones too.
checkc() {
  "$OLD" check "$@" > "$W/a" 2>&1; ra=$?
  "$NEW" check "$@" > "$W/b" 2>&1; rb=$?
  n=$((n+1))
  if ! cmp -s "$W/a" "$W/b" || [ $ra != $rb ]; then echo "CHECK DIFF: $*"; fail=1; fi
}
for d in static/samples/*/; do checkc "$d"*.db; done
for f in "${inputs[@]}"; do checkc "$f"; done
for d in static/samples/*/; do
  b=$(basename "$d"); [ -f "$W/flip-$b-s1.db" ] && checkc "$W/flip-$b-s1.db" "$d"s2.db "$d"s3.db
  [ -f "$W/hole-$b-s1.db" ] && checkc "$W/hole-$b-s1.db" "$d"s2.db "$d"s3.db
  [ -f "$W/trunc-$b-s1.db" ] && checkc "$W/trunc-$b-s1.db" "$d"s2.db "$d"s3.db
done
# dump, convert and the contents commands: same stdout, stderr, status
# and written file on every input, damaged copies included.
cmpcmd() {
  "$OLD" "$@" > "$W/a" 2>"$W/ae"; ra=$?
  "$NEW" "$@" > "$W/b" 2>"$W/be"; rb=$?
  n=$((n+1))
  if ! cmp -s "$W/a" "$W/b" || [ $ra != $rb ] || ! cmp -s "$W/ae" "$W/be"; then
    echo "DIFF: $*"; fail=1
  fi
}
for f in "${inputs[@]}"; do
  cmpcmd dump "$f"
  cmpcmd dump --json "$f"
  cmpcmd dump --at 7 "$f"
  for m in full diff; do
    rm -f "$W/oa" "$W/ob"
    "$OLD" convert --to $m "$f" "$W/oa" > "$W/a" 2>&1; ra=$?
    "$NEW" convert --to $m "$f" "$W/ob" > "$W/b" 2>&1; rb=$?
    n=$((n+1))
    sed -i "s#$W/o[ab]#OUT#" "$W/a" "$W/b"
    same=1
    if [ -f "$W/oa" ] || [ -f "$W/ob" ]; then cmp -s "$W/oa" "$W/ob" || same=0; fi
    if ! cmp -s "$W/a" "$W/b" || [ $ra != $rb ] || [ $same = 0 ]; then
      echo "CONVERT DIFF: $m $f"; fail=1
    fi
  done
  cmpcmd show "$f"
  cmpcmd sizes --json "$f"
  cmpcmd diff "$f" --from 1 --to 9 --json
done
echo "$n comparisons, $([ $fail = 0 ] && echo identical || echo DIFFERENCES)"
exit $fail
