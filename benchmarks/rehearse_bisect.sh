#!/bin/sh
# Rehearse a bisection with benchmarks.compare: in a temporary clone, commit a 1.5x slower
# rff transform, then three more commits; `git bisect run` over `compare` must name the
# slow commit. Usage, from the root of a clone: sh benchmarks/rehearse_bisect.sh
# (PYTHON defaults to python: the environment of the README's first command).
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-python}
CLONE=$(mktemp -d)/clone
git clone -q --no-hardlinks "$ROOT" "$CLONE"
cd "$CLONE"
GOOD=$(git rev-parse HEAD)
SLOW=$(cd "$ROOT" && "$PYTHON" -m benchmarks._regression_injection "$CLONE" rff 1.5)
for i in 1 2 3; do
  echo "later work $i" >> NOTES.txt
  git add NOTES.txt
  git -c user.name=rehearsal -c user.email=rehearsal@localhost commit -qm "later work $i"
done
git bisect start HEAD "$GOOD" > /dev/null
git bisect run sh -c "repo=\$PWD; cd '$ROOT' && '$PYTHON' -m benchmarks.compare $GOOD HEAD --repo \"\$repo\" \
  -b 'time_transform\\(.rff.' --budget 2 > /dev/null" | grep "is the first bad commit"
FOUND=$(git rev-parse refs/bisect/bad)
git bisect reset > /dev/null 2>&1
echo "injected: $SLOW"
echo "found:    $FOUND"
rm -rf "$(dirname "$CLONE")"
[ "$FOUND" = "$SLOW" ]
