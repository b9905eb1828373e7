#!/usr/bin/env bash
# Builds a local copy of the Go vulnerability database for govulncheck
# (`govulncheck -db file://DIR`) from what the Go module proxy serves, for
# machines that cannot reach vuln.go.dev.
#
# The module golang.org/x/vulndb is the database's own source repository. Its
# data/osv/ folder holds every report as an OSV JSON file (GO-YYYY-NNNN.json,
# the same entries vuln.go.dev serves), and its cmd/indexdb is the upstream
# tool that turns such a folder into the v1 layout govulncheck reads:
# index/db.json, index/modules.json, index/vulns.json and ID/<id>.json (each
# also gzipped). Nothing here rewrites an entry.
#
#   infra/vulndb/build.sh OUT_DIR [VERSION]
#
# VERSION is a version of golang.org/x/vulndb (default: latest, that is the
# newest commit the proxy has). Prints the version used; reuses OUT_DIR when it
# was built from the same version.
set -euo pipefail
out=${1:?usage: build.sh OUT_DIR [VERSION]}
want=${2:-latest}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Outside any module, so nothing touches the project's go.mod and go.sum.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
export GOFLAGS=-mod=mod GO111MODULE=on

version=$(go list -m -f '{{.Version}}' "golang.org/x/vulndb@$want")
if [[ -f "$out/VERSION" && "$(cat "$out/VERSION")" == "$version" && -f "$out/index/modules.json" ]]; then
	echo "vulndb: golang.org/x/vulndb@$version (cached in $out)"
	exit 0
fi
src=$(go mod download -json "golang.org/x/vulndb@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [[ ! -d "$src/data/osv" ]]; then
	echo "vulndb: golang.org/x/vulndb@$version has no data/osv folder" >&2
	exit 1
fi
rm -rf "$out/index" "$out/ID" "$out/VERSION"
go run "golang.org/x/vulndb/cmd/indexdb@$version" -vulns "$src/data/osv" -out "$out"
echo "$version" >"$out/VERSION"
echo "vulndb: golang.org/x/vulndb@$version: $(find "$out/ID" -name '*.json' | wc -l) entries, $(grep -o '"path"' "$out/index/modules.json" | wc -l) modules, in $out"
