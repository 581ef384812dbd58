#!/usr/bin/python3
"""Fixtures for the CLIP tokenizer (src/encode/models/clip/clip_tokenizer.cpp).

Writes tests/fixtures/encode/tokenizer/, read by tests/encode/models/clip/tokenizer_*_test.cpp:

  vocab.json, merges.txt  a small byte-level BPE vocabulary in CLIP's layout, trained
                          here on English prompts (the templates and attribute words of
                          data/clip-face-bias/attribute_lists.json plus generated
                          sentences) and a few words of other scripts: ids 0..255 the
                          byte symbols in bytes_to_unicode order, 256..511 the same with
                          "</w>", then one token per merge in merge order, then
                          <|startoftext|>, <|endoftext|>; merges.txt starts with
                          "#version: 0.2" (the Hugging Face files' layout)
  cases.json              texts with the ids and cleaned text of both reference
                          pipelines: hand-picked cases (contractions, digits, accents,
                          emoji, scripts, entities, quotes, ligatures, widths, spaces,
                          truncation) and seeded random strings over varied Unicode ranges
  unicode.json            SHA-256 prefixes, per block of 0x4000 code points, of Python's
                          answer for every code point (class, str.isspace, str.lower,
                          Final_Sigma, NFC, the ftfy subset), so the C++ tables and
                          algorithms are checked exhaustively without storing them twice

The reference tokenizers below are written independently of the C++ code, in the
terms the originals use:

  OpenClip     open_clip SimpleTokenizer (src/open_clip/tokenizer.py):
               whitespace_clean(basic_clean(text)).lower() with basic_clean =
               ftfy.fix_text + html.unescape twice + strip, the pattern with
               regex.IGNORECASE, the BPE loop and cache of SimpleTokenizer.bpe, and
               tokenize()'s truncation. ftfy is not installed: ftfy_subset() is
               ftfy 6.3's fix_text with fix_encoding switched off (see its docstring).
  HuggingFace  CLIPTokenizerFast's tokenizer.json: normalizer NFC, Replace(\\s+, " "),
               Lowercase (per character, like Rust's char::to_lowercase); added
               tokens (normalized=true) split out of the normalized text; Split on the
               pattern without the special alternatives (case-sensitive); ByteLevel;
               BPE with end_of_word_suffix "</w>"; RobertaProcessing and truncation to
               max_length (75 text ids + the two specials).

Run: /usr/bin/python3 tools/make_tokenizer_fixtures.py   (about 30 s; deterministic)
"""
import array
import collections
import hashlib
import html
import html.entities
import json
import os
import random
import re
import sys
import unicodedata

import regex

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "encode", "tokenizer")
ATTRIBUTES = os.path.join(ROOT, "data", "clip-face-bias", "attribute_lists.json")
NUM_MERGES = 1500
SOT, EOT = "<|startoftext|>", "<|endoftext|>"


# ---------------------------------------------------------------------------
# Byte-level symbols (GPT-2 / CLIP bytes_to_unicode)
# ---------------------------------------------------------------------------

def byte_symbols():
    """byte -> symbol: printable Latin-1 bytes are themselves, the other 68 bytes
    take U+0100, U+0101, ... in byte order. Returned in CLIP's vocabulary order."""
    printable = ([b for b in range(0x21, 0x7F)] + [b for b in range(0xA1, 0xAD)]
                 + [b for b in range(0xAE, 0x100)])
    order = list(printable)
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            order.append(b)
            extra += 1
    return table, [table[b] for b in order]


BYTE_SYMBOL, BYTE_ORDER = byte_symbols()


def to_symbols(piece):
    return "".join(BYTE_SYMBOL[b] for b in piece.encode("utf-8"))


# ---------------------------------------------------------------------------
# ftfy 6.3 fix_text without fix_encoding
# ---------------------------------------------------------------------------

def _ftfy_entity_table():
    table = {}
    for name, value in html.entities.html5.items():
        if not name.endswith(";"):
            continue
        table["&" + name] = value
        if name == name.lower():
            caps = "&" + name.upper()
            if html.unescape(caps) == caps:
                table[caps] = value.upper()
    return table


FTFY_ENTITIES = _ftfy_entity_table()
FTFY_ENTITY_RE = re.compile(r"&#?[0-9A-Za-z]{1,24};")
FTFY_LIGATURES = str.maketrans({
    "\u0132": "IJ", "\u0133": "ij", "\u0149": "\u02bcn",
    "\u01c4": "D\u017d", "\u01c5": "D\u017e", "\u01c6": "d\u017e",
    "\u01c7": "LJ", "\u01c8": "Lj", "\u01c9": "lj",
    "\u01ca": "NJ", "\u01cb": "Nj", "\u01cc": "nj",
    "\u01f1": "DZ", "\u01f2": "Dz", "\u01f3": "dz",
    "\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
    "\ufb05": "\u017ft", "\ufb06": "st",
})
FTFY_WIDTH = {0x3000: " "}
for _c in range(0xFF01, 0xFFF0):
    _alt = unicodedata.normalize("NFKC", chr(_c))
    if _alt != chr(_c):
        FTFY_WIDTH[_c] = _alt
FTFY_CONTROL = dict.fromkeys(
    list(range(0x00, 0x09)) + [0x0B] + list(range(0x0E, 0x20)) + [0x7F]
    + list(range(0x206A, 0x2070)) + [0xFEFF] + list(range(0xFFF9, 0xFFFD)))
FTFY_SINGLE_QUOTE = re.compile("[\u02bc\u2018-\u201b]")
FTFY_DOUBLE_QUOTE = re.compile("[\u201c-\u201f]")
FTFY_ANSI = re.compile("\033\\[((?:\\d|;)*)([a-zA-Z])")
FTFY_C1 = re.compile("[\x80-\x9f]")


def _sloppy_1252(ch):
    try:
        return bytes([ord(ch)]).decode("cp1252")
    except UnicodeDecodeError:
        return ch


def _entity(match):
    text = match.group(0)
    if text in FTFY_ENTITIES:
        return FTFY_ENTITIES[text]
    if text.startswith("&#"):
        decoded = html.unescape(text)
        return text if ";" in decoded else decoded
    return text


def _fix_segment(text, unescape):
    while True:
        before = text
        if unescape:
            text = FTFY_ENTITY_RE.sub(_entity, text)
        text = FTFY_C1.sub(lambda m: _sloppy_1252(m.group(0)), text)
        text = text.translate(FTFY_LIGATURES)
        text = text.translate(FTFY_WIDTH)
        text = FTFY_SINGLE_QUOTE.sub("'", FTFY_DOUBLE_QUOTE.sub('"', text))
        text = (text.replace("\r\n", "\n").replace("\r", "\n").replace("\u2028", "\n")
                .replace("\u2029", "\n").replace("\u0085", "\n"))
        text = FTFY_ANSI.sub("", text)
        text = text.translate(FTFY_CONTROL)
        text = unicodedata.normalize("NFC", text)
        if text == before:
            return text


def ftfy_subset(text):
    """ftfy.fix_text (6.3, default TextFixerConfig) minus fix_encoding and its
    sub-steps: per line, unescape_html ("auto": off from the first line with a '<'),
    fix_c1_controls, fix_latin_ligatures, fix_character_width, uncurl_quotes,
    fix_line_breaks, fix_surrogates (nothing to do on valid text),
    remove_terminal_escapes, remove_control_chars, NFC, repeated until stable."""
    out, pos, unescape = [], 0, True
    while pos < len(text):
        brk = text.find("\n", pos) + 1 or len(text)
        segment = text[pos:brk]
        if unescape and "<" in segment:
            unescape = False
        out.append(_fix_segment(segment, unescape))
        pos = brk
    return "".join(out)


# ---------------------------------------------------------------------------
# Reference tokenizers
# ---------------------------------------------------------------------------

WORD_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""


def clean_open_clip(text):
    text = ftfy_subset(text)
    text = html.unescape(html.unescape(text))
    text = text.strip()
    text = regex.sub(r"\s+", " ", text)
    text = text.strip()
    return text.lower()


def clean_hugging_face(text):
    text = unicodedata.normalize("NFC", text)
    text = regex.sub(r"\s+", " ", text)
    return "".join(ch.lower() for ch in text)


class Reference:
    def __init__(self, vocab, merges, mode):
        self.encoder = vocab
        self.ranks = {}
        for i, pair in enumerate(merges):
            self.ranks[pair] = i
        self.mode = mode
        self.cache = {SOT: SOT, EOT: EOT}
        self.open_clip_pat = regex.compile(
            r"<\|startoftext\|>|<\|endoftext\|>|" + WORD_PATTERN, regex.IGNORECASE)
        self.hf_pat = regex.compile(WORD_PATTERN)

    def bpe(self, token):
        if token in self.cache:
            return self.cache[token]
        word = tuple(token[:-1]) + (token[-1] + "</w>",)
        while len(word) > 1:
            pairs = {(a, b) for a, b in zip(word, word[1:])}
            best = min(pairs, key=lambda p: self.ranks.get(p, float("inf")))
            if best not in self.ranks:
                break
            merged, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    merged.append(word[i] + word[i + 1])
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            word = tuple(merged)
        self.cache[token] = " ".join(word)
        return self.cache[token]

    def clean(self, text):
        if self.mode == "openclip":
            return clean_open_clip(text)
        return clean_hugging_face(text).strip(" ")

    def text_ids(self, text):
        ids = []
        if self.mode == "openclip":
            for piece in self.open_clip_pat.findall(clean_open_clip(text)):
                ids += [self.encoder[t] for t in self.bpe(to_symbols(piece)).split(" ")]
            return ids
        for part in re.split(r"(<\|startoftext\|>|<\|endoftext\|>)", clean_hugging_face(text)):
            if part in (SOT, EOT):
                ids.append(self.encoder[part])
                continue
            for piece in self.hf_pat.findall(part):
                ids += [self.encoder[t] for t in self.bpe(to_symbols(piece)).split(" ")]
        return ids

    def tokenize(self, text, context_length=77):
        ids = self.text_ids(text)
        if self.mode == "openclip":
            tokens = [self.encoder[SOT]] + ids + [self.encoder[EOT]]
            if len(tokens) > context_length:
                tokens = tokens[:context_length]
                tokens[-1] = self.encoder[EOT]
            return tokens
        # truncation=True, max_length: the text is cut to leave room for the specials.
        ids = ids[:max(context_length - 2, 0)]
        return [self.encoder[SOT]] + ids + [self.encoder[EOT]]


# ---------------------------------------------------------------------------
# Training corpus and BPE training
# ---------------------------------------------------------------------------

# Everyday caption words, so that prompts beyond the templates merge as well.
CAPTION_WORDS = """
about above across adult afternoon against age aged airport album all alone along
also always among an and angry animal another answer any apartment apple arm army
around art artist at attractive autumn baby back background bag bald ball band bank
bar beach beard beautiful bed before behind below bench beside best between bicycle
big bird birthday black blond blonde blue blurry boat body book boots bottle boy
bread bridge bright brother brown building bus business but by cafe camera camp car
card career careful carrying casual celebrating center chair cheerful chef child
children church city classroom clean close closeup clothes cloud coat coffee cold
colorful computer concert cook corner couple cousin cow crowd cup curly cute dad
dance dark daughter day desk dinner dirty doctor door down dress drink driving
during each early elderly evening every eyes face factory family farm farmer
fashion father female field fire fish flower food football for forest formal from
front fruit funny garden gentleman girl glass glasses gray great green group guitar
hair hand happy hat he head healthy her here hill his holding home horse hospital
hot house how image in indoor inside into island jacket job kitchen lady lake
landscape large laughing lawyer leaf left light little living long looking lunch
male many market meeting mirror modern moment morning mother mountain mouth movie
music musician near neighbor new night nobody nose office old on one only open
orange outdoor outside over painting palace park party people phone piano picture
pink player playing police portrait posing pretty professional purple queen quiet
rain reading red restaurant right river road room running sad school scientist
sea seated selfie serious shirt shop short shoulder singer sister sitting skin sky
small smiling snow soldier son sport standing station still stone street student
studio suit summer sun sunny sunset table tall teacher team teenager tired to
together tower town train tree under uniform university up vintage wall walking
warm water wearing wedding white window winter with woman women wooden working
writer yellow young youth zoo
""".split()


def corpus():
    with open(ATTRIBUTES, encoding="utf-8") as f:
        lists = json.load(f)
    templates = lists["templates_set_2"]
    words = set()
    for value in lists.values():
        if isinstance(value, dict):
            for attrs in value.values():
                if isinstance(attrs, list):
                    words.update(a for a in attrs if a != "<blank>")
    rng = random.Random(7)
    lines = []
    for t in templates:
        for w in sorted(words):
            lines += [t.format(attribute=w)] * 3
    nouns = ["person", "man", "woman", "child", "people", "doctor", "nurse", "teacher",
             "engineer", "face", "portrait", "photo", "picture", "student", "worker",
             "family", "friend", "group", "smile", "city", "street", "dog", "cat"]
    verbs = ["is", "was", "looks", "seems", "appears", "isn't", "wasn't", "doesn't look"]
    extras = ["don't", "it's", "we'll", "they're", "i'd", "she's", "you've", "i'm", "can't",
              "won't", "that's", "1990s", "2024", "3.14", "100,000", "50%", "#1", "...",
              "!!!", "?!", "(a)", "[b]", "{c}", "--", "—", "café", "naïve", "zürich",
              "ångström", "señor", "über", "façade", "résumé", "東京", "日本語", "中文",
              "مرحبا", "привет", "γειά", "😀", "👍", "❤️", "🇫🇷", "&", "<3", "'quote'",
              "\"quoted\""]
    for w in CAPTION_WORDS:
        lines += [w, f"a photo of a {w}", f"the {w}s"]
    nouns += CAPTION_WORDS[::3]
    for _ in range(4000):
        w = sorted(words) + CAPTION_WORDS
        s = rng.choice(["a {adj} {noun} {verb} {adj2}.", "the {noun} {verb} {adj}",
                        "{extra} a photo of a {adj} {noun}", "this {noun} {verb} {adj} {extra}",
                        "cropped face photo of a {adj} {noun}", "{extra} {extra2} {noun}"])
        lines.append(s.format(adj=rng.choice(w), adj2=rng.choice(w), noun=rng.choice(nouns),
                              verb=rng.choice(verbs), extra=rng.choice(extras),
                              extra2=rng.choice(extras)))
    return lines


def train(lines):
    pat = regex.compile(r"<\|startoftext\|>|<\|endoftext\|>|" + WORD_PATTERN, regex.IGNORECASE)
    counts = collections.Counter()
    for line in lines:
        for piece in pat.findall(clean_open_clip(line)):
            sym = to_symbols(piece)
            counts[tuple(sym[:-1]) + (sym[-1] + "</w>",)] += 1
    words = dict(counts)
    vocab = set(BYTE_ORDER) | {s + "</w>" for s in BYTE_ORDER}
    merges = []
    while len(merges) < NUM_MERGES:
        pairs = collections.Counter()
        for word, n in words.items():
            for a, b in zip(word, word[1:]):
                pairs[(a, b)] += n
        # Most frequent first, ties by the pair's text; never a pair whose result is
        # already a token (CLIP's vocabulary has one id per string).
        candidates = sorted(((n, p) for p, n in pairs.items() if "".join(p) not in vocab),
                            key=lambda x: (-x[0], x[1]))
        if not candidates:
            break
        best = candidates[0][1]
        merges.append(best)
        vocab.add("".join(best))
        new_words = {}
        for word, n in words.items():
            out, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            new_words[tuple(out)] = new_words.get(tuple(out), 0) + n
        words = new_words
    tokens = BYTE_ORDER + [s + "</w>" for s in BYTE_ORDER] + ["".join(m) for m in merges]
    tokens += [SOT, EOT]
    return {t: i for i, t in enumerate(tokens)}, merges


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------

LONG = " ".join(["a photo of a friendly, trustworthy and competent person"] * 12)

HAND_CASES = [
    ("template", "A photo of a friendly person."),
    ("template_blank", "A photo of a person."),
    ("cropped", "cropped face photo of a high-status person"),
    ("contractions", "don't it's we'll they're I'd she's you've I'm"),
    ("contractions_caps", "DON'T IT'S WE'LL THEY'RE"),
    ("apostrophe_runs", "'tis rock'n'roll ''s o' '' 'x"),
    ("digits_decade", "the 1990s"),
    ("digits_pi", "3.14"),
    ("digits_grouped", "100,000 people"),
    ("digits_other_scripts", "٣ ४ ² ½ Ⅻ"),
    ("punct_bang", "!!!"),
    ("punct_dots", "..."),
    ("punct_mixed", "?!?"),
    ("punct_dash", "a — b – c"),
    ("brackets", "(a)[b]{c}"),
    ("cafe_nfc", "caf\u00e9"),
    ("cafe_nfd", "cafe\u0301"),
    ("naive", "na\u00efve"),
    ("angstrom", "\u00c5ngstr\u00f6m"),
    ("angstrom_sign", "\u212bngstr\u00f6m"),
    ("zurich", "Z\u00fcrich"),
    ("marks_reordered", "a\u0301\u0316 q\u0307\u0323"),
    ("emoji", "a \U0001F600 face"),
    ("emoji_zwj", "\U0001F468\u200d\U0001F469\u200d\U0001F467 family"),
    ("emoji_flag", "\U0001F1EB\U0001F1F7 \U0001F1EF\U0001F1F5"),
    ("emoji_skin", "\U0001F44D\U0001F3FD ok"),
    ("emoji_heart_vs", "\u2764\ufe0f"),
    ("cjk", "\u6771\u4eac\u306e\u5199\u771f"),
    ("hangul_jamo", "\u1100\u1161\u11a8 \u1112\u1161\u11ab"),
    ("arabic", "\u0645\u0631\u062d\u0628\u0627 \u0628\u0643\u0645"),
    ("mixed_scripts", "Photo \u0444\u043e\u0442\u043e \u03c6\u03c9\u03c4\u03bf \u5199\u771f"),
    ("greek_sigma", "\u039f\u0394\u039f\u03a3 \u03a3\u039f\u03a6\u0399\u0391\u03a3."),
    ("dotted_i", "\u0130stanbul"),
    ("html_amp", "rock &amp; roll"),
    ("html_lt3", "I &lt;3 you"),
    ("html_nested", "&amp;amp;lt;3 &amp;quot;"),
    ("html_numeric", "&#65;&#x42;&#0; &#128; &#x1F600; &#59;"),
    ("html_no_semicolon", "&amp &copy2024 &notit; &ampx"),
    ("html_caps", "P&EACUTE;REZ &NTILDE; &nTILDE;"),
    ("html_with_tag", "<b>&amp;</b> &lt;"),
    ("html_second_line_tag", "&amp; one\n<two> &amp;"),
    ("curly_quotes", "\u2018single\u2019 \u201cdouble\u201d \u201alow\u201b \u201elow\u201f"),
    ("primes", "5\u2032 11\u2033"),
    ("modifier_apostrophe", "it\u02bcs"),
    ("ligatures", "\ufb00 \ufb01 \ufb02 \ufb03 \ufb04 \ufb05 \ufb06 \u0132 \u0133 \u0149 \u01c6 \u01f2"),
    ("long_s_contraction", "it'\u017f <|\u017ftartoftext|>"),
    ("fullwidth", "\uff21 \uff50\uff48\uff4f\uff54\uff4f\u3000\uff4f\uff46 \uff11\uff12\uff01"),
    ("halfwidth_katakana", "\uff76\uff9e\uff7d \uff8a\uff9f\uff9d"),
    ("fullwidth_macron", "\uffe3"),
    ("c1_controls", "a\u0085b \u0080 \u0093hi\u0094 \u0081"),
    ("controls", "a\x00b\x07c\x7fd\ufeffe\u200bf\u206ag"),
    ("ansi_escape", "\x1b[31mred\x1b[0m \x1b[1;\u0663m x"),
    ("tabs_newlines", "a\tphoto\n\nof\r\na\rperson"),
    ("many_spaces", "   a    photo   "),
    ("unicode_spaces", "a\u00a0b\u2003c\u3000d\u2028e\u0085f\x1cg"),
    ("empty", ""),
    ("whitespace_only", " \t\n "),
    ("specials_literal", "a <|startoftext|> b <|endoftext|>c"),
    ("specials_caps", "<|ENDOFTEXT|>"),
    ("specials_in_punct", "!<|endoftext|>"),
    ("ypogegrammeni", "\u1fb3 \u03b1\u0345 x\u0345y"),
    ("new_unicode15_letters", "\U00011f04\U00011f05 \U0001e030"),
    ("unassigned", "a\U000e0100b \U0010fffd"),
    ("too_long", LONG),
    ("too_long_words", "supercalifragilisticexpialidocious " * 30),
]
# One 1,500-letter word of caption words run together: many merges of many ranks
# in a single BPE call (context_length large enough to keep every id).
LONG_WORD = "".join(random.Random(3).choice(CAPTION_WORDS) for _ in range(400))[:1500]
CONTEXT_CASES = [("context_5", "a photo of a friendly person", 5),
                 ("long_word", LONG_WORD, 2000),
                 ("context_2", "a photo", 2), ("context_3_exact", "photo", 3),
                 ("context_4_exact", "a photo", 4)]

POOLS = [
    (0x20, 0x7E), (0x20, 0x7E), (0x20, 0x7E), (0x09, 0x0D), (0x00, 0x1F), (0x80, 0xFF),
    (0x100, 0x24F), (0x300, 0x36F), (0x370, 0x3FF), (0x400, 0x4FF), (0x590, 0x5FF),
    (0x600, 0x6FF), (0x900, 0x97F), (0xE00, 0xE7F), (0x1100, 0x11FF), (0x1E00, 0x1EFF),
    (0x1F00, 0x1FFF), (0x2000, 0x206F), (0x2100, 0x218F), (0x2460, 0x24FF), (0x3000, 0x30FF),
    (0x4E00, 0x4E80), (0xAC00, 0xAC80), (0xF900, 0xF9FF), (0xFB00, 0xFB4F), (0xFE00, 0xFE0F),
    (0xFF00, 0xFFEF), (0x1F300, 0x1F64F), (0x1F900, 0x1F9FF), (0x11F00, 0x11F5F),
    (0x1D400, 0x1D7FF), (0xE0000, 0xE007F), (0x10FFF0, 0x10FFFF),
]
SNIPPETS = ["'s", "'t", "'re", "&amp;", "&lt;", "&#65;", "&quot", "<|endoftext|>",
            "<|startoftext|>", "\u03a3", "\u0130", "\u017f", "\u0345", "\r\n", "\x1b[1m",
            "\u200d", "photo", "person", "don't", "  ", "\u2019"]


def random_texts(n, seed=20240611):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(0, 8)):
            if rng.random() < 0.25:
                parts.append(rng.choice(SNIPPETS))
            else:
                lo, hi = rng.choice(POOLS)
                while True:
                    c = rng.randint(lo, hi)
                    if not 0xD800 <= c <= 0xDFFF:
                        break
                parts.append(chr(c) * rng.choice([1, 1, 1, 2, 3]))
        out.append("".join(parts))
    return out


def case_entry(name, text, refs, context_length=77):
    entry = {"name": name, "text": text, "context_length": context_length}
    for mode, ref in refs.items():
        # open_clip's cut (keep context_length ids, last one := EOT) and Hugging
        # Face's truncation=True, max_length=context_length give the same ids.
        full = [ref.encoder[SOT]] + ref.text_ids(text) + [ref.encoder[EOT]]
        cut = full[:context_length]
        cut[-1] = ref.encoder[EOT]
        hf = [ref.encoder[SOT]] + full[1:-1][:context_length - 2] + [ref.encoder[EOT]]
        assert (full if len(full) <= context_length else cut) == hf, name
        entry[mode] = {"clean": ref.clean(text), "ids": ref.tokenize(text, context_length),
                       "count": len(ref.text_ids(text))}
    return entry


# ---------------------------------------------------------------------------
# Per-code-point hashes (tests/encode/models/clip/tokenizer_unicode_test.cpp)
# ---------------------------------------------------------------------------

BLOCK = 0x4000


def word_class(ch):
    if regex.match(r"[\p{L}]", ch):
        return 1
    if regex.match(r"[\p{N}]", ch):
        return 2
    if regex.match(r"\s", ch):
        return 3
    return 0


IGNORECASE_OTHER = regex.compile(r"[^\s\p{L}\p{N}]", regex.IGNORECASE)

PROPERTIES = {
    # class (0 other, 1 letter, 2 number, 3 space) + 4 when open_clip matches it nowhere
    "class": lambda ch: [word_class(ch) + (4 if word_class(ch) == 0
                                           and not IGNORECASE_OTHER.match(ch) else 0)],
    "isspace": lambda ch: [int(ch.isspace())],
    "lower": lambda ch: [ord(x) for x in ch.lower()],
    "sigma_after": lambda ch: [ord(x) for x in (ch + "\u03a3").lower()],
    "sigma_between": lambda ch: [ord(x) for x in ("A" + ch + "\u03a3").lower()],
    "sigma_before": lambda ch: [ord(x) for x in ("A\u03a3" + ch + "a").lower()],
    "nfc": lambda ch: [ord(x) for x in unicodedata.normalize("NFC", ch)],
    "nfc_marks": lambda ch: [ord(x) for x in unicodedata.normalize("NFC", ch + "\u0301\u0316")],
    "nfc_after_a": lambda ch: [ord(x) for x in unicodedata.normalize("NFC", "a" + ch)],
    "ftfy": lambda ch: [ord(x) for x in ftfy_subset(ch)],
    "ftfy_escape": lambda ch: [ord(x) for x in ftfy_subset("\x1b[" + ch + "m.")],
}


def unicode_hashes():
    """Per property and block: the first 16 hex digits of the SHA-256 of the
    outputs for each code point of the block (surrogates skipped), as 32-bit
    little-endian words, each output closed by 0xFFFFFFFF."""
    out = {}
    for name, fn in PROPERTIES.items():
        hashes = []
        for start in range(0, 0x110000, BLOCK):
            words = array.array("I")
            for c in range(start, start + BLOCK):
                if 0xD800 <= c <= 0xDFFF:
                    continue
                words.extend(fn(chr(c)))
                words.append(0xFFFFFFFF)
            assert sys.byteorder == "little"
            hashes.append(hashlib.sha256(words.tobytes()).hexdigest()[:16])
        out[name] = hashes
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    vocab, merges = train(corpus())
    with open(os.path.join(OUT, "vocab.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(vocab, ensure_ascii=False))
    with open(os.path.join(OUT, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for a, b in merges:
            f.write(f"{a} {b}\n")
    refs = {"openclip": Reference(vocab, merges, "openclip"),
            "huggingface": Reference(vocab, merges, "hf")}
    cases = [case_entry(name, text, refs) for name, text in HAND_CASES]
    cases += [case_entry(name, text, refs, cl) for name, text, cl in CONTEXT_CASES]
    randoms = [case_entry(f"random_{i}", t, refs) for i, t in enumerate(random_texts(400))]
    with open(os.path.join(OUT, "cases.json"), "w", encoding="utf-8") as f:
        json.dump({"generator": "tools/make_tokenizer_fixtures.py",
                   "unicodedata": unicodedata.unidata_version,
                   "num_merges": len(merges), "cases": cases, "random": randoms},
                  f, ensure_ascii=True, separators=(",", ":"))
    with open(os.path.join(OUT, "unicode.json"), "w", encoding="utf-8") as f:
        json.dump({"block": BLOCK, "hashes": unicode_hashes()}, f, indent=0)
    sizes = {n: os.path.getsize(os.path.join(OUT, n)) for n in sorted(os.listdir(OUT))}
    print(f"{len(merges)} merges, {len(cases)} cases, {len(randoms)} random; sizes {sizes}")


if __name__ == "__main__":
    main()
