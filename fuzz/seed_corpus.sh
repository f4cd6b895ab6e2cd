#!/bin/sh
# Seeds the fuzz corpus with every bundled scenario (TOML) and its JSON form.
set -e
cd "$(dirname "$0")"
mkdir -p corpus/scenario
find ../scenarios -name '*.toml' | while read -r f; do
    cp "$f" "corpus/scenario/$(echo "$f" | sed 's|^\.\./scenarios/||; s|/|_|g')"
done
echo "seeded corpus/scenario with $(ls corpus/scenario | wc -l) files"
