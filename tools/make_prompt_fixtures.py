#!/usr/bin/python3
"""Reference prompt manifests (paper 001, Hausladen et al., docs/methods.md#prompts-001; paper 004,
Baherwani and Vincent, docs/methods.md#trait-pairs), built independently from
data/clip-face-bias/attribute_lists.json.

Prompts are filled the way the authors' code does it (clip-face-bias,
precalculate_cossims.py): template.format(attribute=word), with "<blank>" -> "" and
then "  " replaced by " ". Trait-pair captions: "a {} person".format(trait).

Rows are lists in the manifest's column order: text, word, dimension, valence,
template ("{}" where the word goes), role, model.

Writes tests/fixtures/metrics/prompts.json.

Run: /usr/bin/python3 tools/make_prompt_fixtures.py
"""
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LISTS = os.path.join(ROOT, "data", "clip-face-bias", "attribute_lists.json")
OUT = os.path.join(ROOT, "tests", "fixtures", "metrics", "prompts.json")

COLUMNS = ["text", "word", "dimension", "valence", "template", "role", "model"]

# The paper's four templates (Hausladen et al., Section 3), authors' placeholder.
PAPER = [
    "A photo of a {attribute} person.",
    "A {attribute} person.",
    "This is a {attribute} person.",
    "Cropped face photo of a {attribute} person.",
]

# (section, key) -> (dimension, valence, model), in manifest order.
LISTS_ORDER = [
    ("StereotypeContentModel", "warm", "warmth", "+", "scm"),
    ("StereotypeContentModel", "comp", "competence", "+", "scm"),
    ("ABCModel", "agency_pos", "agency", "+", "abc"),
    ("ABCModel", "agency_neg", "agency", "-", "abc"),
    ("ABCModel", "belief_pos", "belief", "+", "abc"),
    ("ABCModel", "belief_neg", "belief", "-", "abc"),
    ("ABCModel", "communion_pos", "communion", "+", "abc"),
    ("ABCModel", "communion_neg", "communion", "-", "abc"),
]
GROUP_DIMENSION = {"white": "race", "black": "race", "asian": "race",
                   "male": "gender", "female": "gender", "young": "age", "old": "age"}


def authors_fill(template, word):
    """precalculate_cossims.py: format, and for "<blank>" collapse the double space."""
    if word == "<blank>":
        return template.format(attribute="").replace("  ", " ")
    return template.format(attribute=word)


def social_perception(lists, templates):
    rows = []
    manifest_t = [t.replace("{attribute}", "{}") for t in templates]
    for t, mt in zip(templates, manifest_t):
        rows.append([authors_fill(t, "<blank>"), "", "", "", mt, "neutral", "control"])
    for section, key, dim, val, model in LISTS_ORDER:
        for word in lists[section][key]:
            for t, mt in zip(templates, manifest_t):
                rows.append([authors_fill(t, word), word, dim, val, mt, "attribute", model])
    for word in lists["Control"]["all_attributes"]:
        if word == "<blank>":
            continue
        for t, mt in zip(templates, manifest_t):
            rows.append([authors_fill(t, word), word, GROUP_DIMENSION[word], "", mt, "group",
                         "control"])
    return rows


def trait_pairs(pairs, templates, neutral):
    rows = []
    if neutral:
        for t in templates:
            rows.append([t.format("").replace("  ", " ").strip(), "", "", "", t, "neutral",
                         "trait-pairs"])
    for first, second in pairs:
        dim = first + "/" + second
        for word, val in ((first, "+"), (second, "-")):
            for t in templates:
                rows.append([t.format(word), word, dim, val, t, "attribute", "trait-pairs"])
    return rows


def main():
    with open(LISTS) as f:
        lists = json.load(f)
    sets = {
        "paper": PAPER,
        "code": lists["templates_set_2"],
        "single": lists["templates_set_1"],
    }
    out = {"columns": COLUMNS, "social_perception": {}, "trait_pairs": []}
    for name, templates in sets.items():
        rows = social_perception(lists, templates)
        out["social_perception"][name] = rows
    default_pairs = [["smart", "dumb"], ["happy", "sad"], ["hardworking", "lazy"],
                     ["nice", "mean"], ["dominant", "agentic"], ["honest", "dishonest"]]
    out["trait_pairs"].append({
        "pairs": default_pairs, "templates": ["a {} person"], "neutral": True,
        "rows": trait_pairs(default_pairs, ["a {} person"], True)})
    custom_pairs = [["smart", "dumb"], ["happy", "sad"]]
    custom_t = ["a {} person", "A photo of a {} person."]
    out["trait_pairs"].append({
        "pairs": custom_pairs, "templates": custom_t, "neutral": False,
        "rows": trait_pairs(custom_pairs, custom_t, False)})
    out["trait_pairs"].append({
        "pairs": custom_pairs, "templates": custom_t, "neutral": True,
        "rows": trait_pairs(custom_pairs, custom_t, True)})
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    for name, rows in out["social_perception"].items():
        print(name, len(rows), "rows")


if __name__ == "__main__":
    main()
