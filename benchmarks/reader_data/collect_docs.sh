#!/usr/bin/env bash
# Recreates the docs tuning trees of the reader's training data, byte for byte:
#   $DEST/docs/{antd-zh,fastapi-zh,mkdocs-en,poetry-en}/
# from local git mirrors of the source repositories (see SOURCES.md in this folder).
#
# Layout (the --docs-root layout of veracity.bench.train_answers, read by
# veracity.bench.reading.data): docs/<set>/<path in the repository>, holding only the files that
# benchmarks/docs_questions/tune/<set>.yaml cites, plus the repository's LICENSE at docs/<set>/LICENSE.
# Each tree's digest (veracity.bench.reading.data.tree_digest) must equal the one recorded in
# SOURCES.md and DOCS_TREES; a tree that does not is left in docs/.<set>.staging and the script
# exits 1. A matching tree replaces docs/<set>/.
#
# Environment (all optional):
#   DEST          folder that receives docs/ (default: this script's folder)
#   MIRRORS       folder of the mirrors (default /work/.mirror)
#   ANTD_GIT      git dir of ant-design/ant-design  (default $MIRRORS/ant-design+ant-design/repo)
#   FASTAPI_GIT   git dir of fastapi/fastapi         (default $MIRRORS/fastapi+fastapi/repo)
#   MKDOCS_GIT    git dir of mkdocs/mkdocs           (default $MIRRORS/mkdocs+mkdocs/repo)
#   POETRY_GIT    git dir of python-poetry/poetry    (default $MIRRORS/python-poetry+poetry/repo)
#   PYTHON        a Python with PyYAML (default: the project's .venv, else python3)
# A plain clone works as well: pass its .git folder (it must hold the commits below).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROJECT=$(cd "$HERE/../.." && pwd)
TUNE="$PROJECT/benchmarks/docs_questions/tune"
DEST=${DEST:-$HERE}
MIRRORS=${MIRRORS:-/work/.mirror}
ANTD_GIT=${ANTD_GIT:-$MIRRORS/ant-design+ant-design/repo}
FASTAPI_GIT=${FASTAPI_GIT:-$MIRRORS/fastapi+fastapi/repo}
MKDOCS_GIT=${MKDOCS_GIT:-$MIRRORS/mkdocs+mkdocs/repo}
POETRY_GIT=${POETRY_GIT:-$MIRRORS/python-poetry+poetry/repo}
if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x "$PROJECT/.venv/bin/python" ]]; then PYTHON="$PROJECT/.venv/bin/python"; else PYTHON=python3; fi
fi

# set | git dir | commit | tree digest (SOURCES.md, DOCS_TREES)
SETS=(
    "antd-zh|$ANTD_GIT|2b258157ff20fb8948780e414dc1d74246aede40|bf1cf2ae4f27fb6bf76a3d07fc9a13ed028a190c429c7eba7f80ca34af4dad6b"
    "fastapi-zh|$FASTAPI_GIT|c3f316b7e814667e8ee81e03a7330d00ee61e45c|56f5338efa9bd2586759b846a887dd58cddd9cb9e9b98ef1383b78028635d736"
    "mkdocs-en|$MKDOCS_GIT|2862536793b3c67d9d83c33e0dd6d50a791928f8|261a27ec1a71ad54b9a734f1db1f0f4eb746930658ec4dbbe289fe9c166e0462"
    "poetry-en|$POETRY_GIT|f46702336862f30050d5c641d5ed6f7568ded793|5e3b266d8c025fd45a8d3901d723a50a44cea3dc4f8528bb0353778353312400"
)

# The commit named in the YAML's source: line, then every cited file (once, sorted).
cited_files() {
    "$PYTHON" - "$1" <<'EOF'
import sys, yaml
spec = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
print(spec["source"]["commit"])
for f in sorted({f for q in spec["questions"] for f in (q.get("files") or ())}):
    print(f)
EOF
}

# The project's tree_digest when it imports, else the same computation.
tree_digest() {
    PYTHONPATH="$PROJECT/src${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" - "$1" <<'EOF'
import hashlib, sys
from pathlib import Path
try:
    from veracity.bench.reading.data import tree_digest
except Exception:
    def tree_digest(folder: Path) -> str:
        files = sorted(p for p in folder.rglob("*") if p.is_file())
        lines = sorted(
            f"{p.relative_to(folder).as_posix()}\0{hashlib.sha256(p.read_bytes()).hexdigest()}\n"
            for p in files
        )
        return hashlib.sha256("".join(lines).encode()).hexdigest()
print(tree_digest(Path(sys.argv[1])))
EOF
}

mkdir -p "$DEST/docs"
failed=0
for entry in "${SETS[@]}"; do
    IFS='|' read -r name gitdir commit digest <<<"$entry"
    yaml_file="$TUNE/$name.yaml"
    if ! git --git-dir="$gitdir" cat-file -e "$commit^{commit}" 2>/dev/null; then
        echo "$name: commit $commit not found in $gitdir" >&2
        failed=1
        continue
    fi
    mapfile -t listed < <(cited_files "$yaml_file")
    if [[ "${listed[0]}" != "$commit" ]]; then
        echo "$name: $yaml_file names commit ${listed[0]}, expected $commit" >&2
        failed=1
        continue
    fi
    files=("${listed[@]:1}" LICENSE)
    staging="$DEST/docs/.$name.staging"
    rm -rf "$staging"
    mkdir -p "$staging"
    for path in "${files[@]}"; do
        mkdir -p "$staging/$(dirname "$path")"
        git --git-dir="$gitdir" cat-file blob "$commit:$path" >"$staging/$path"
    done
    got=$(tree_digest "$staging")
    bytes=$(find "$staging" -type f -exec cat {} + | wc -c)
    if [[ "$got" == "$digest" ]]; then
        rm -rf "${DEST:?}/docs/$name"
        mv "$staging" "$DEST/docs/$name"
        echo "$name: $((${#files[@]} - 1)) documents + LICENSE, $bytes B, tree digest $got OK"
    else
        echo "$name: tree digest $got != recorded $digest (left in $staging)" >&2
        failed=1
    fi
done
exit "$failed"
