#!/usr/bin/python3
"""Unicode and HTML tables for the text tokenizers (src/encode/models/clip/clip_tokenizer.cpp, src/text/).

Writes src/text/unicode_tables.cpp, declared in src/text/unicode_tables.h.
Every table is derived from the Python modules the reference tokenizers run on,
so that the C++ code sees each character the way they do:

  pre-tokenizer classes   the `regex` module (what open_clip's and transformers'
                          pattern `[\\p{L}]+|[\\p{N}]|[^\\s\\p{L}\\p{N}]+` is compiled
                          with); `regex` carries its own Unicode tables, newer than
                          unicodedata's, so the classes are probed from the compiled
                          pattern itself, code point by code point
  IGNORECASE extras       open_clip compiles the pattern with regex.IGNORECASE:
                          the non-ASCII characters that then match the ASCII letters
                          of `'s|'t|...|<|startoftext|>` (U+017F long s), and those
                          that the negated class no longer matches (U+0345)
  str.isspace, re's \\d    Python's unicodedata (str.strip(); ftfy's ANSI escape regex)
  str.lower               full lowercase mapping incl. one-to-many (U+0130), and the
                          Cased / Case_Ignorable sets Python's Final_Sigma rule reads,
                          recovered by probing str.lower() itself
  NFC                     canonical decompositions (one level), canonical combining
                          classes, and the primary composites (a two-character canonical
                          decomposition whose composite survives NFC, i.e. is not a
                          composition exclusion); Hangul is algorithmic in the C++ code
  ftfy 6.3 subset         fix_character_width (U+3000 and the NFKC form of
                          U+FF01..U+FFEF), fix_latin_ligatures, fix_c1_controls
                          (sloppy Windows-1252), and the HTML entity table ftfy's
                          unescape_html uses (html5 names ending in ';' plus all-caps
                          variants of the lowercase ones)
  html.unescape           html.entities.html5 and the module's invalid-charref tables
  general category        unicodedata.category for every code point (BERT's control,
                          whitespace and punctuation classes, accent stripping's Mn)
  White_Space             the `regex` module's \\p{White_Space} (Rust's char::is_whitespace,
                          which the Hugging Face tokenizers' BERT and added-token code use)
  grapheme clusters       the `regex` module's Grapheme_Cluster_Break values and
                          Extended_Pictographic (its \\X, as the unicode-segmentation crate
                          splits text for the tokenizers' Precompiled normalizer)

Ranges, runs with a constant delta and stride, and sparse lists keep the file small;
tests/text/unicode_classes_test.cpp checks the general category, White_Space, NFD and
grapheme tables the same way (tests/fixtures/text/unicode_classes.json, written by
tools/make_text_tokenizer_fixtures.py); tests/encode/models/clip/tokenizer_unicode_test.cpp checks the C++ lookups against hashes of
Python's answers over every code point (tests/fixtures/encode/tokenizer/unicode.json,
written by tools/make_tokenizer_fixtures.py).

Run: /usr/bin/python3 tools/make_unicode_tables.py
"""
import html
import html.entities
import os
import re
import sys
import unicodedata

import regex

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "src", "text", "unicode_tables.cpp")
MAX_CP = 0x110000
SURROGATES = range(0xD800, 0xE000)


def code_points():
    return (c for c in range(MAX_CP) if c not in SURROGATES)


def regex_unicode_version():
    """The newest Unicode version whose probe letter `regex` classifies as \\p{L}."""
    letter = regex.compile(r"\p{L}")
    probes = [("13.0.0", 0x08BE), ("14.0.0", 0x0870), ("15.0.0", 0x11F04),
              ("15.1.0", 0x2EBF0), ("16.0.0", 0x1E5D0)]
    version = "older than 13.0.0"
    for name, cp in probes:
        if letter.match(chr(cp)):
            version = name
    return version


def ranges_of(predicate):
    """Maximal [first, last] runs of code points where predicate holds."""
    out = []
    for c in code_points():
        if predicate(c):
            if out and out[-1][1] == c - 1:
                out[-1][1] = c
            else:
                out.append([c, c])
    return out


def valued_ranges(value_of):
    """Maximal runs of equal non-zero values: [first, last, value]."""
    out = []
    for c in code_points():
        v = value_of(c)
        if v:
            if out and out[-1][1] == c - 1 and out[-1][2] == v:
                out[-1][1] = c
            else:
                out.append([c, c, v])
    return out


def delta_runs(mapping):
    """Single-code-point mapping {c: m} as runs (first, last, delta, stride): for c in
    [first, last] with (c - first) % stride == 0, m = c + delta. Runs never overlap."""
    keys = sorted(mapping)
    key_set = set(keys)
    out = []
    i = 0
    while i < len(keys):
        c = keys[i]
        d = mapping[c] - c
        n1 = 1
        while c + n1 in mapping and mapping[c + n1] - (c + n1) == d:
            n1 += 1
        n2 = 1
        while (c + 2 * n2 in mapping and mapping[c + 2 * n2] - (c + 2 * n2) == d
               and (c + 2 * n2 - 1) not in key_set):
            n2 += 1
        if n2 > n1:
            out.append((c, c + 2 * (n2 - 1), d, 2))
            i += n2
        else:
            out.append((c, c + n1 - 1, d, 1))
            i += n1
    for a, b in zip(out, out[1:]):
        assert a[1] < b[0]
    return out


def pretoken_classes():
    """1 letter, 2 number, 3 whitespace, as the compiled CLIP pattern sees them."""
    letter = regex.compile(r"[\p{L}]")
    number = regex.compile(r"[\p{N}]")
    space = regex.compile(r"\s")
    other = regex.compile(r"[^\s\p{L}\p{N}]")
    letter_i = regex.compile(r"[\p{L}]", regex.IGNORECASE)
    number_i = regex.compile(r"[\p{N}]", regex.IGNORECASE)
    space_i = regex.compile(r"\s", regex.IGNORECASE)
    other_i = regex.compile(r"[^\s\p{L}\p{N}]", regex.IGNORECASE)
    classes = {}
    unmatched_ignorecase = []
    for c in code_points():
        ch = chr(c)
        flags = (bool(letter.match(ch)), bool(number.match(ch)), bool(space.match(ch)),
                 bool(other.match(ch)))
        assert sum(flags) == 1, hex(c)
        cls = flags.index(True) + 1 if not flags[3] else 0
        if cls:
            classes[c] = cls
        # IGNORECASE: the positive classes are unchanged; the negated class may lose
        # characters whose case variants are letters.
        assert bool(letter_i.match(ch)) == flags[0] and bool(number_i.match(ch)) == flags[1]
        assert bool(space_i.match(ch)) == flags[2]
        if flags[3] and not other_i.match(ch):
            unmatched_ignorecase.append(c)
    return valued_ranges(lambda c: classes.get(c, 0)), unmatched_ignorecase


def ignorecase_aliases():
    """Non-ASCII characters matching an ASCII letter of the pattern's literals
    under regex.IGNORECASE (beyond the letter and its ASCII upper case)."""
    out = []
    for letter in sorted(set("<|startoftext|><|endoftext|>" + "'strevmld")):
        pat = regex.compile(regex.escape(letter), regex.IGNORECASE)
        for c in code_points():
            if c >= 0x80 and pat.match(chr(c)):
                out.append((ord(letter), c))
    return out


def python_lower():
    single, multi = {}, {}
    for c in code_points():
        low = chr(c).lower()
        if low == chr(c):
            continue
        if len(low) == 1:
            single[c] = ord(low)
        else:
            multi[c] = [ord(x) for x in low]
    return delta_runs(single), multi


def final_sigma_sets():
    """Python's str.lower maps U+03A3 to final U+03C2 when preceded by a Cased
    character (skipping Case_Ignorable ones) and not followed by one. Probing:
      ("X" + "Σ").lower() ends in ς  <=>  X is Cased and not Case_Ignorable
      ("A" + X + "Σ").lower() ends in ς  <=>  X is Case_Ignorable or Cased."""
    ignorable, cased = [], []
    for c in code_points():
        x = chr(c)
        p1 = (x + "\u03a3").lower()[-1] == "\u03c2"
        p3 = ("A" + x + "\u03a3").lower()[-1] == "\u03c2"
        if p1:
            cased.append(c)
        elif p3:
            ignorable.append(c)
    to_ranges = lambda cps: ranges_of(set(cps).__contains__)
    return to_ranges(ignorable), to_ranges(cased)


def nfc_data():
    ccc = valued_ranges(lambda c: unicodedata.combining(chr(c)))
    decomp = []
    for c in code_points():
        if 0xAC00 <= c <= 0xD7A3:
            continue  # Hangul syllables: algorithmic
        d = unicodedata.decomposition(chr(c))
        if not d or d.startswith("<"):
            continue
        parts = [int(x, 16) for x in d.split()]
        assert 1 <= len(parts) <= 2, hex(c)
        decomp.append((c, parts[0], parts[1] if len(parts) == 2 else 0))
    # Two-character decompositions whose composite NFC does not recompose: the
    # composition exclusions (the C++ code derives the composition pairs from the rest).
    excluded = [c for c, a, b in decomp if b and unicodedata.normalize("NFC", chr(c)) != chr(c)]
    return ccc, decomp, excluded


def width_map():
    """ftfy.chardata._build_width_map: U+3000 -> ' ', and U+FF01..U+FFEF -> NFKC."""
    single, multi = {0x3000: 0x20}, {}
    for c in range(0xFF01, 0xFFF0):
        alt = unicodedata.normalize("NFKC", chr(c))
        if alt != chr(c):
            if len(alt) == 1:
                single[c] = ord(alt)
            else:
                multi[c] = [ord(x) for x in alt]
    return delta_runs(single), multi


# ftfy 6.3 chardata.LIGATURES: Latin ligatures and legacy digraphs it splits.
LIGATURES = {
    0x0132: "IJ", 0x0133: "ij", 0x0149: "\u02bcn",
    0x01C4: "D\u017d", 0x01C5: "D\u017e", 0x01C6: "d\u017e",
    0x01C7: "LJ", 0x01C8: "Lj", 0x01C9: "lj",
    0x01CA: "NJ", 0x01CB: "Nj", 0x01CC: "nj",
    0x01F1: "DZ", 0x01F2: "Dz", 0x01F3: "dz",
    0xFB00: "ff", 0xFB01: "fi", 0xFB02: "fl", 0xFB03: "ffi", 0xFB04: "ffl",
    0xFB05: "\u017ft", 0xFB06: "st",
}


def c1_map():
    """fix_c1_controls: U+0080..U+009F decoded as sloppy Windows-1252 (bytes that
    Windows-1252 leaves undefined stay themselves)."""
    out = []
    for b in range(0x80, 0xA0):
        try:
            ch = bytes([b]).decode("cp1252")
        except UnicodeDecodeError:
            ch = chr(b)
        out.append(ord(ch))
    return out


def html5_entities():
    """html.entities.html5 (name -> value), each with the value ftfy's unescape_html
    gives its all-caps spelling, or None. ftfy.chardata._build_html_entities: '&name;'
    for html5 names ending in ';', plus '&NAME;' -> value.upper() for lowercase names
    whose all-caps spelling html.unescape does not already decode."""
    out = []
    for name, char in sorted(html.entities.html5.items()):
        upper = None
        if name.endswith(";") and name == name.lower():
            spelled = "&" + name.upper()
            if html.unescape(spelled) == spelled:
                upper = char.upper()
                assert name.upper() not in html.entities.html5
        out.append((name, char, upper))
    return out


# unicodedata.category values in the order of vlbias::unicode::GeneralCategory; Cn
# (unassigned) is every code point no range covers.
CATEGORIES = ["Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd",
              "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf",
              "Cs", "Co"]

# Grapheme_Cluster_Break values in the order of vlbias::unicode::GraphemeBreak (Other = 0).
GRAPHEME_BREAKS = ["Other", "CR", "LF", "Control", "Extend", "ZWJ", "Regional_Indicator",
                   "Prepend", "SpacingMark", "L", "V", "T", "LV", "LVT"]


def general_categories():
    index = {name: i for i, name in enumerate(CATEGORIES)}
    return valued_ranges(lambda c: index[unicodedata.category(chr(c))])


def grapheme_breaks():
    probes = [(i, regex.compile(r"\p{Grapheme_Cluster_Break=%s}" % name))
              for i, name in enumerate(GRAPHEME_BREAKS) if i]
    def value(c):
        hits = [i for i, p in probes if p.match(chr(c))]
        assert len(hits) <= 1, hex(c)
        return hits[0] if hits else 0
    return valued_ranges(value)


def python_decimal():
    d = re.compile(r"\d")
    return ranges_of(lambda c: bool(d.match(chr(c))))


def c_string(s):
    """A C++ string literal for s (UTF-8 execution charset): printable ASCII as is,
    other ASCII as fixed-width octal escapes, the rest as universal character names."""
    if s is None:
        return "nullptr"
    out = []
    for ch in s:
        c = ord(ch)
        if 0x20 <= c < 0x7F and ch not in '"\\?':
            out.append(ch)
        elif c < 0x80:
            out.append("\\%03o" % c)
        elif c <= 0xFFFF:
            out.append("\\u%04X" % c)
        else:
            out.append("\\U%08X" % c)
    return '"' + "".join(out) + '"'


def cps(seq, n):
    assert len(seq) <= n, seq
    return ", ".join("0x%X" % x for x in list(seq) + [0] * (n - len(seq)))


def emit_rows(lines, name, type_name, rows, per_line):
    lines.append(f"constexpr {type_name} {name}Data[] = {{")
    for i in range(0, len(rows), per_line):
        lines.append("    " + " ".join(rows[i:i + per_line]))
    lines.append("};")
    lines.append(f"const std::span<const {type_name}> {name}({name}Data);")
    lines.append("")


def main():
    classes, unmatched = pretoken_classes()
    aliases = ignorecase_aliases()
    lower_runs, lower_multi = python_lower()
    ignorable, cased = final_sigma_sets()
    ccc, decomp, excluded = nfc_data()
    width_runs, width_multi = width_map()
    space = ranges_of(lambda c: chr(c).isspace())
    decimal = python_decimal()
    html5 = html5_entities()
    invalid_charrefs = sorted(html._invalid_charrefs.items())
    invalid_codepoints = ranges_of(lambda c: c in html._invalid_codepoints)
    categories = general_categories()
    white_space_re = regex.compile(r"\p{White_Space}")
    white_space = ranges_of(lambda c: bool(white_space_re.match(chr(c))))
    breaks = grapheme_breaks()
    pictographic_re = regex.compile(r"\p{Extended_Pictographic}")
    pictographic = ranges_of(lambda c: bool(pictographic_re.match(chr(c))))

    rng = lambda r: "{0x%X, 0x%X}," % (r[0], r[1])
    lines = [
        "// GENERATED by tools/make_unicode_tables.py -- do not edit.",
        f"// Python {sys.version.split()[0]}, unicodedata {unicodedata.unidata_version}; "
        f"regex {regex.__version__} (Unicode {regex_unicode_version()}).",
        "// clang-format off",
        '#include "text/unicode_tables.h"',
        "",
        "namespace vlbias::text_internal::tables {",
        "",
        f'const char kUnicodeDataVersion[] = "{unicodedata.unidata_version}";',
        f'const char kRegexUnicodeVersion[] = "{regex_unicode_version()}";',
        "",
    ]
    emit_rows(lines, "kPretokenClasses", "ClassRange",
              ["{0x%X, 0x%X, %d}," % tuple(r) for r in classes], 4)
    emit_rows(lines, "kIgnoreCaseUnmatched", "Range", [rng((c, c)) for c in unmatched], 6)
    emit_rows(lines, "kIgnoreCaseAliases", "CodeMap",
              ["{0x%X, 0x%X}," % a for a in aliases], 6)
    emit_rows(lines, "kPythonSpace", "Range", [rng(r) for r in space], 6)
    emit_rows(lines, "kPythonDecimal", "Range", [rng(r) for r in decimal], 6)
    emit_rows(lines, "kLowerRuns", "DeltaRun",
              ["{0x%X, 0x%X, %d, %d}," % r for r in lower_runs], 4)
    emit_rows(lines, "kLowerMulti", "MultiMap",
              ["{0x%X, {%s}}," % (c, cps(v, 3)) for c, v in sorted(lower_multi.items())], 2)
    emit_rows(lines, "kCaseIgnorable", "Range", [rng(r) for r in ignorable], 6)
    emit_rows(lines, "kCased", "Range", [rng(r) for r in cased], 6)
    emit_rows(lines, "kCombiningClass", "CccRange",
              ["{0x%X, 0x%X, %d}," % tuple(r) for r in ccc], 5)
    emit_rows(lines, "kDecompositions", "Decomposition",
              ["{0x%X,0x%X,0x%X}," % d for d in decomp], 6)
    emit_rows(lines, "kCompositionExclusions", "Range",
              [rng(r) for r in ranges_of(set(excluded).__contains__)], 6)
    emit_rows(lines, "kWidthRuns", "DeltaRun",
              ["{0x%X, 0x%X, %d, %d}," % r for r in width_runs], 4)
    emit_rows(lines, "kWidthMulti", "MultiMap",
              ["{0x%X, {%s}}," % (c, cps(v, 3)) for c, v in sorted(width_multi.items())], 2)
    emit_rows(lines, "kLigatures", "MultiMap",
              ["{0x%X, {%s}}," % (c, cps([ord(x) for x in v], 3))
               for c, v in sorted(LIGATURES.items())], 3)
    emit_rows(lines, "kC1Windows1252", "char32_t", ["0x%X," % c for c in c1_map()], 8)
    emit_rows(lines, "kHtml5Entities", "Entity",
              ["{%s, %s, %s}," % (c_string(n), c_string(v), c_string(u)) for n, v, u in html5],
              3)
    emit_rows(lines, "kHtmlInvalidCharrefs", "CodeMap",
              ["{0x%X, 0x%X}," % (n, ord(v)) for n, v in invalid_charrefs], 6)
    emit_rows(lines, "kHtmlInvalidCodepoints", "Range", [rng(r) for r in invalid_codepoints], 6)
    emit_rows(lines, "kGeneralCategory", "ClassRange",
              ["{0x%X, 0x%X, %d}," % tuple(r) for r in categories], 4)
    emit_rows(lines, "kWhiteSpace", "Range", [rng(r) for r in white_space], 6)
    emit_rows(lines, "kGraphemeBreak", "ClassRange",
              ["{0x%X, 0x%X, %d}," % tuple(r) for r in breaks], 4)
    emit_rows(lines, "kExtendedPictographic", "Range", [rng(r) for r in pictographic], 6)
    lines.append("}  // namespace vlbias::text_internal::tables")
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {OUT} ({os.path.getsize(OUT)} bytes): {len(classes)} class ranges, "
          f"{len(lower_runs)} lower runs, {len(decomp)} decompositions, "
          f"{len(excluded)} composition exclusions, {len(html5)} entities, "
          f"{len(categories)} category ranges, {len(breaks)} grapheme break ranges")


if __name__ == "__main__":
    main()
