#!/usr/bin/python3
"""What each group's quick reproduction should print: docs/expected-quick.md.

  scripts/expected_quick.py write DIR   write docs/expected-quick.md from a verdict-stability
                                        output DIR (DIR/haswell/G.log, DIR/auto/G.log)
  scripts/expected_quick.py check DIR [GROUP ...]
                                        compare the verdicts in DIR with the document; exit 1
                                        when a claim's verdict differs or a claim is missing

scripts/verdict-stability runs `check` after its quick reproductions (CI's verdict-stability
job), so a document that no longer matches what a build prints fails CI. After an intended
change of a quick verdict: `scripts/verdict-stability && scripts/expected_quick.py write
build/verdict-stability`, and say why in the commit.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "expected-quick.md")
VERDICT = re.compile(r"^(PASS|FAIL|INCONCLUSIVE|NOT EVALUATED) ([^:]+): (.*?) -- (.*)$")
FIRST_NUMBER = re.compile(r"= (-?[0-9][0-9.e+-]*|inf|-inf|nan)")
COUNTS = re.compile(r"^[0-9]+ of [0-9]+ claims pass.*$")


def claims_of(log_path):
    """[(claim, verdict, key number, text)] in the log's order, and its counts line."""
    claims, counts = [], ""
    with open(log_path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            m = VERDICT.match(line)
            if m:
                number = FIRST_NUMBER.search(m.group(4))
                claims.append((m.group(2), m.group(1), number.group(1) if number else "—",
                               m.group(3)))
            elif COUNTS.match(line):
                counts = line
    return claims, counts


def groups_in():
    return sorted(d for d in os.listdir(os.path.join(ROOT, "experiments"))
                  if os.path.isdir(os.path.join(ROOT, "experiments", d)))


def cell(text):
    return text.replace("|", "\\|")


def write(out):
    lines = [
        "# What the quick reproductions print",
        "",
        "`attnlab reproduce GROUP --quick` (part of `make reproduce`) prints one line per claim. This",
        "page lists, per group, the verdict every claim should get and the first number of its line",
        "(the estimate it was judged by), on OpenBLAS's Haswell kernel (`OPENBLAS_CORETYPE=Haswell",
        "OPENBLAS_L2_SIZE=512`) and on the kernel OpenBLAS picks itself. The verdicts are the same on",
        "both kernels (CI's `make verdict-stability` checks that, and checks this page against what",
        "the build prints); the numbers may differ in the last digits. A different verdict means a",
        "broken build or a changed spec, not a new result: quick runs are one seed on small budgets,",
        "so many claims are INCONCLUSIVE or NOT EVALUATED by design, and their explanations are in",
        "each group's page (docs/fu2023.md, docs/sanford2023.md, docs/constructions.md). The",
        "full-size verdicts are in docs/results/GROUP/report.md.",
        "",
        "Made by `scripts/expected_quick.py write DIR` from `scripts/verdict-stability --out DIR`.",
        "",
    ]
    for g in groups_in():
        hs_log = os.path.join(out, "haswell", g + ".log")
        au_log = os.path.join(out, "auto", g + ".log")
        if not (os.path.exists(hs_log) and os.path.exists(au_log)):
            sys.exit(f"expected_quick: {hs_log} or {au_log} is missing; run scripts/verdict-stability first")
        hs, hs_counts = claims_of(hs_log)
        au, au_counts = claims_of(au_log)
        au_by = {c[0]: c for c in au}
        lines += [f"## {g}", "", f"`{hs_counts}`" if hs_counts else "", "",
                  "| claim | verdict | number (Haswell) | number (autodetected) | says |",
                  "|---|---|---|---|---|"]
        for claim, verdict, number, text in hs:
            other = au_by.get(claim)
            if other is None or other[1] != verdict:
                sys.exit(f"expected_quick: {g}/{claim}: the kernels' verdicts differ; fix that first")
            lines.append(f"| `{claim}` | {verdict} | {number} | {other[2]} | {cell(text)} |")
        lines.append("")
    with open(DOC, "w", encoding="utf-8") as f:
        f.write("\n".join(lines).rstrip("\n") + "\n")
    print(f"expected_quick: wrote {os.path.relpath(DOC, ROOT)}")


def documented():
    """{group: {claim: verdict}} from the page."""
    out, group = {}, None
    if not os.path.exists(DOC):
        sys.exit("expected_quick: docs/expected-quick.md is missing; write it with "
                 "scripts/expected_quick.py write DIR")
    with open(DOC, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                group = line[3:].strip()
                out[group] = {}
            elif group and line.startswith("| `"):
                cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
                out[group][cells[0].strip("`")] = cells[1]
    return out


def check(out, groups):
    expected = documented()
    bad = 0
    for g in groups or groups_in():
        if g not in expected:
            print(f"expected_quick: {g}: docs/expected-quick.md has no section for it", file=sys.stderr)
            bad += 1
            continue
        for kernel in ("haswell", "auto"):
            log = os.path.join(out, kernel, g + ".log")
            if not os.path.exists(log):
                continue
            got = {c[0]: c[1] for c in claims_of(log)[0]}
            for claim in sorted(set(got) | set(expected[g])):
                want, have = expected[g].get(claim, "(not listed)"), got.get(claim, "(not printed)")
                if want != have:
                    print(f"expected_quick: {g}/{claim} ({kernel} kernel): docs/expected-quick.md "
                          f"says {want}, the build printed {have}", file=sys.stderr)
                    bad += 1
    if bad:
        print("expected_quick: if the change is intended, rewrite the page: "
              "scripts/expected_quick.py write " + out, file=sys.stderr)
        return 1
    print("expected_quick: every quick verdict is the one docs/expected-quick.md lists")
    return 0


def main(argv):
    if len(argv) < 3 or argv[1] not in ("write", "check"):
        sys.exit(__doc__)
    if argv[1] == "write":
        write(argv[2])
        return 0
    return check(argv[2], argv[3:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
