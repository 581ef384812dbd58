#!/usr/bin/python3
"""Writes data/visage/questions.yaml: ViSAGe's yes/no question per visual attribute.

A label-vlm spec (docs/specs.md#label-vlm) in the `questions:` form, one question per attribute
ViSAGe counts as visual, `choices: [yes, no]`, for
    vlbias label --labeller vlm --spec data/visage/questions.yaml --images DIR --out vlm.csv
whose LABELS.csv then compares with ViSAGe's annotators (`vlbias dataset visage-labels`) in one
`metric agreement` call (docs/methods.md#visage-questions).

Visual attributes: the rule ViSAGe 3.1 states and vlbias applies (docs/methods.md#visual-attributes):
every `rating_*` column of data/visage/all_visual_attr.csv is Agree or Strongly Agree
(case-insensitive, trimmed); a repeated attribute is visual only when every repeat is. 518 of the
release's 1,993 distinct attributes (the paper reports 385; no nearby rule gives it).

Question template: "Does the image contain {attribute}? Answer yes or no.", the attribute as
ViSAGe wrote it and showed it to its annotators, with no article: its attributes mix nouns
("turban"), adjectives ("poor"), verbs ("eat taco") and phrases ("live on an island"), and an
article rule without a part-of-speech lexicon would be wrong for most of them. Attributes are in
byte order (as vlbias sorts them).
"""
import csv
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "visage")
TEMPLATE = "Does the image contain {attribute}? Answer yes or no."
AGREE = {"agree", "strongly agree"}


def visual_attributes(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header = [c.strip(" \t") for c in rows[0]]
    ratings = [i for i, c in enumerate(header) if c.lower().startswith("rating_")]
    col = header.index("attribute")
    visual = {}
    for r in rows[1:]:
        if not any(c.strip() for c in r):
            continue
        a = r[col].strip(" \t")
        ok = all(i < len(r) and r[i].strip(" \t").lower() in AGREE for i in ratings)
        visual[a] = visual.get(a, True) and ok
    return sorted((a for a, ok in visual.items() if ok), key=lambda s: s.encode("utf-8"))


def main():
    attributes = visual_attributes(os.path.join(DATA, "all_visual_attr.csv"))
    q = lambda s: json.dumps(s, ensure_ascii=False)  # a YAML double-quoted scalar
    lines = [
        "# ViSAGe's visual attributes (paper 000) as yes/no questions: a label-vlm spec",
        "# (docs/specs.md#label-vlm). Written by tools/make_visage_questions.py from",
        "# data/visage/all_visual_attr.csv (Apache-2.0, data/visage/SOURCE.md): the attributes every",
        "# rater marked Agree or Strongly Agree (ViSAGe 3.1's rule; docs/methods.md#visual-attributes),",
        f"# {len(attributes)} of them, in byte order; the question \"{TEMPLATE}\"",
        "# with the attribute verbatim (docs/methods.md#visage-questions).",
        "# Run (set endpoint.url, and endpoint.model to the served model's name):",
        "#   vlbias label --labeller vlm --spec questions.yaml --images DIR --out vlm.csv",
        "version: 1",
        "kind: label-vlm",
        "endpoint: {url: 'http://127.0.0.1:8000/v1/chat/completions', timeout_s: 60}",
        "choices: [\"yes\", \"no\"]  # quoted: YAML 1.1 readers take bare yes/no as booleans",
        "sampling: {temperature: 0, max_tokens: 8}",
        "questions:",
    ]
    for a in attributes:
        lines.append(f"  - {{attribute: {q(a)}, question: {q(TEMPLATE.format(attribute=a))}}}")
    with open(os.path.join(DATA, "questions.yaml"), "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{len(attributes)} questions -> data/visage/questions.yaml")


if __name__ == "__main__":
    main()
