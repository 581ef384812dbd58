#!/usr/bin/python3
"""Fixtures for the text tokenizers of src/text/ (WordPiece, byte-level BPE,
SentencePiece Unigram), read by tests/text/*_test.cpp.

Writes tests/fixtures/text/:

  models/<name>/          tiny models trained here on a generated multilingual corpus,
                          written as Hugging Face ships them (tokenizer.json and the
                          legacy files, tokenizer_config.json, special_tokens_map.json,
                          config.json):
      bert_uncased        WordPiece (~3,000 tokens), do_lower_case: BERT, toxic-bert
      distilbert_cased    WordPiece, cased (no lower-casing or accent stripping)
      roberta             byte-level BPE, 1,500 merges, RoBERTa's special-token layout
      xlmr                SentencePiece Unigram (spm_train, nmt_nfkc), fairseq layout;
                          tokenizer.json as transformers' current converter writes it
                          (Precompiled, Strip right, Replace " {2,}" -> "▁", Metaspace
                          prepend_scheme always)
      xlmr_old_json       tokenizer.json only, as older converters wrote it
                          (Precompiled alone, Metaspace add_prefix_space)
      xlmr_bytes          a smaller Unigram model with byte_fallback
  expected_ids.json       hostile texts and their content ids (no special tokens) from
                          each reference, per model and source ("tokenizer.json" or
                          "legacy"); texts over 1,000 characters give a count, the first
                          64 ids and the SHA-256 of all ids (int32 little-endian)
  codepoint_ids.json      per block of 0x1000 code points below U+20000 and per model and
                          source: SHA-256 prefix of the ids of "a" + c + " " + c + "b" for
                          every code point c (surrogates skipped)
  unicode_classes.json    per block of 0x4000 code points: SHA-256 prefixes of Python's
                          unicodedata.category, NFD, \\p{White_Space}, Grapheme_Cluster_Break
                          and Extended_Pictographic (the `regex` module)
  graphemes.json          random strings over the grapheme break classes and their
                          extended grapheme clusters (regex \\X)
  invalid_utf8.json       byte strings that are not UTF-8 and the error each gives

and fuzz/corpus/text_tokenizer/ (seeds of fuzz/fuzz_text_tokenizer.cpp, among them a
~3 KB Unigram model whose charsmap sentencepiece compiled from hand-written rules).

References (tools/text_tokenizer_refs.py, independent of the C++ code): transformers'
BertTokenizer, RobertaTokenizer and XLMRobertaTokenizer as Python code (the last on the
real sentencepiece library), and the tokenizers (Rust) pipelines of the tokenizer.json
files. transformers and tokenizers are not installed here; their algorithms are
written from the published code.

Run: /usr/bin/python3 tools/make_text_tokenizer_fixtures.py   (a few minutes; deterministic)
"""
import array
import collections
import hashlib
import json
import os
import random
import shutil
import sys
import tempfile
import unicodedata

import regex
import sentencepiece as spm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import text_tokenizer_refs as refs  # noqa: E402
from text_tokenizer_models import (MODELS, bert_folder, read_spm, roberta_folder,  # noqa: E402
                                   train_bpe, train_spm, train_wordpiece, unigram_fast,
                                   write_json, xlmr_folder, xlmr_tokenizer_json)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "text")

# ---------------------------------------------------------------- corpus

SUBJECTS = ["the woman", "the man", "a person", "my neighbour", "the teacher", "a doctor",
            "the nurse", "our friend", "an engineer", "the child", "a student", "the artist",
            "the politician", "a refugee", "the immigrant", "the elderly man", "a young girl"]
VERBS = ["is", "was", "seems", "looks", "became", "remains", "is not", "was never"]
ADJECTIVES = ["friendly", "kind", "rude", "stupid", "brilliant", "lazy", "honest", "hostile",
              "trustworthy", "dangerous", "generous", "annoying", "intelligent", "ugly",
              "beautiful", "aggressive", "calm", "toxic", "wonderful", "terrible"]
TAILS = ["today.", "in the photo.", "according to the report!", "at work, I think.",
         "— or so they say...", "(allegedly)", "and everyone knows it?", "lol", "!!!", ":)"]
MULTILINGUAL = [
    "Le café est très bon à Paris, n'est-ce pas ?", "Élève, garçon, naïve, façade, cœur.",
    "Der Straßenverkehr in München ist schrecklich; Größe und Übung.",
    "¿Dónde está la estación? Mañana será otro día, señor.",
    "Сегодня хорошая погода, и мы идём гулять.", "Η Σίσυφος ανέβαζε την πέτρα. ΟΔΟΣ",
    "我爱北京天安门，今天天气很好。", "日本語のテキストです。カタカナとひらがな。",
    "안녕하세요, 만나서 반갑습니다.", "สวัสดีครับ วันนี้อากาศดีมาก",
    "مرحبا بالعالم، كيف حالك؟", "नमस्ते दुनिया, आप कैसे हैं?", "İstanbul'da ıslak ışık.",
    "Ångström and Øresund, Ærø.", "Tiếng Việt có dấu: người, được, những.",
]
EXTRAS = ["I ❤️ NY 😀 👍🏽 👨‍👩‍👧", "Call 555-0123 or visit https://example.com/page?id=42",
          "Price: $3.50, €4,20, £1.99 — 50% off!", "2024-01-15 at 12:30, item #7 of 1,000",
          "Email me at someone@example.org.", "ﬁnancial ﬂow, ＡＢＣ１２３", "x² + y² = z²"]


COMMON = ("time person year way day thing world life hand part child eye place week case point "
          "government company number group problem fact good new first last long great little "
          "own other old right big high different small large next early young important few "
          "public bad same able work call try ask need feel become leave put mean keep let begin "
          "seem help talk turn start show hear play run move like live believe hold bring happen "
          "write provide sit stand lose pay meet include continue set learn change lead "
          "understand watch follow stop create speak read allow add spend grow open walk win "
          "offer remember love consider appear buy wait serve die send expect build stay fall "
          "cut reach kill remain suggest raise pass sell require report decide pull").split()


def random_word(rng):
    """A made-up word in one of several scripts, so the vocabularies have many pieces."""
    script = rng.randrange(8)
    n = rng.randint(1, 4)
    if script == 0:
        syl = ["ka", "ro", "mi", "tan", "sel", "vor", "qu", "ph", "th", "ing", "er", "ly", "é", "ü"]
        return "".join(rng.choice(syl) for _ in range(n + 1))
    if script == 1:
        return "".join(chr(rng.randrange(0x430, 0x450)) for _ in range(n + 2))
    if script == 2:
        return "".join(chr(rng.randrange(0x3B1, 0x3CA)) for _ in range(n + 2))
    if script == 3:
        return "".join(chr(rng.randrange(0x4E00, 0x4F00)) for _ in range(n))
    if script == 4:
        return "".join(chr(rng.randrange(0xAC00, 0xAD00)) for _ in range(n))
    if script == 5:
        return "".join(chr(rng.randrange(0x0E01, 0x0E2F)) for _ in range(n + 2))
    if script == 6:
        return str(rng.randrange(10 ** n))
    return rng.choice(COMMON).capitalize()


def corpus(n=4000, seed=7):
    rng = random.Random(seed)
    lines = []
    words_of = [line.split() for line in MULTILINGUAL + EXTRAS]
    for i in range(n):
        r = rng.random()
        if r < 0.4:
            s = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(ADJECTIVES)} " \
                f"{rng.choice(TAILS)}"
            lines.append(s[0].upper() + s[1:] if rng.random() < 0.5 else s)
        elif r < 0.65:
            lines.append(" ".join(rng.choice(COMMON) for _ in range(rng.randint(3, 12))) + ".")
        elif r < 0.85:
            words = [w for _ in range(3) for w in rng.choice(words_of)]
            rng.shuffle(words)
            lines.append(" ".join(words[:rng.randint(3, 10)]))
        else:
            lines.append(" ".join(random_word(rng) for _ in range(rng.randint(2, 8))))
    return lines


# ---------------------------------------------------------------- texts

HOSTILE = [
    ("empty", ""), ("space", " "), ("whitespace_only", "   \t\n  \r\n "),
    ("other_spaces_only", "\u00a0\u2003\u3000\u2028"),
    ("plain", "Hello, world! This is a test of the tokenizer."),
    ("accents", "Café naïve façade Ångström résumé déjà vu"),
    ("decomposed_accents", "Cafe\u0301 nai\u0308ve A\u030angstro\u0308m"),
    ("stacked_marks", "a\u0301\u0302\u0303\u0304 e\u0316\u0301 \u0301\u0302 x\u20dd"),
    ("greek_sigma", "ΟΔΟΣ Σίσυφος ΣΑΣ. ὈΔΥΣΣΕΎΣ ς σ"),
    ("turkish_german", "İstanbul ıi IJ STRASSE straße ẞ ǅ ǈ"),
    ("cjk", "我爱北京天安门。日本語のテキスト、カタカナ。豈 更"),
    ("cjk_extensions", "\U00020000\U00020001 \U0002B820\U0002B900\U0002B920 \U0002F800"),
    ("korean", "안녕하세요 세계 \u1100\u1161\u11a8 한국어"),
    ("thai", "สวัสดีครับ ภาษาไทยง่ายนิดเดียว"),
    ("arabic", "مرحبا بالعالم ١٢٣ \u200fمن اليمين\u200e"),
    ("hindi", "नमस्ते दुनिया क्षत्रिय श्री"),
    ("emoji", "I ❤️ NY 😀😃 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇺🇸🇫🇷 1️⃣ #️⃣"),
    ("zero_width", "zero\u200bwidth\u200cnon\u200djoiner\ufeffbom\u2060wj\u00adshy"),
    ("controls", "tab\tnew\nline\rcr\x01soh\x1b[31mred\x7fdel\x85nel \x80 \x9f"),
    ("nul", "before\x00after"),
    ("spaces", "a\u00a0b\u2009c\u202fd\u205fe\u3000f\u1680g\u2028h\u2029i\x0bj\x0ck\x1cl"),
    ("fullwidth", "ＡＢＣ１２３！？　ｆｕｌｌ　ｗｉｄｔｈ　ｶﾀｶﾅ"),
    ("ligatures", "ﬁ ﬂ ﬀ ﬃ Ĳ ǆ ™ ℌ ① ½ ㎏ ㈱ ℃"),
    ("math_alnum", "𝐇𝐞𝐥𝐥𝐨 𝕎𝕠𝕣𝕝𝕕 ⓐⓑⓒ ¹²³"),
    ("long_word_101", "a" * 101),
    ("long_word_100", "b" * 100),
    ("long_word_99_accent", "x" * 99 + "é"),
    ("long_words", "pneumonoultramicroscopicsilicovolcanoconiosis" * 3 + " ok"),
    ("numbers", "3.14159 1,000,000 -42 1e10 0x1F 12:30 2024-01-01 ١٢٣ ４５"),
    ("urls", "https://example.com/path?query=1&b=2#frag www.test.org/a_b-c user@mail.com"),
    ("punctuation", "!!!??? ... --- *** $$$ ''' \"\"\" ,,, ;; ¡¿ «» „“ —–"),
    ("contractions", "don't I'm we're they've she'll he'd it's 'S DON'T ''s 'tis"),
    ("bert_specials", "[CLS] hello [SEP] [MASK] [UNK] [PAD] [cls] [Cls] x[SEP]y"),
    ("roberta_specials", "<s>hello</s> <mask> <pad><unk> a<mask>b  <mask> <MASK>"),
    ("specials_edges", "<s><s></s> [SEP][SEP] <mask>"),
    ("mixed_spaces", "  leading and trailing  "),
    ("multiple_spaces", "multiple     spaces\t\tand\n\nnewlines"),
    ("leading_space", " leading space"), ("leading_tab", "\tleading tab"),
    ("unassigned", "a\U000E0001b \U0010FFFF \uFFFF \U0001FAF8 \u0378 \ue000 \U000F0000"),
    ("replacement_char", "bad\ufffdchar \ufffd"),
    ("surrogate_neighbours", "\ud7ff\ue000\uf8ff\ufb00"),
    ("greek_final_sigma_mixed", "ΣΑΣ, Σ. αΣ1 Σ"),
    ("mixed_scripts", "Hello世界مرحبا123абв"),
    ("repeated_chars", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbb !!!!!!!!!!!!"),
    ("newline_specials", "line one\n[SEP]\nline two\n<mask>\n"),
]


def random_texts(n, seed=20241201):
    rng = random.Random(seed)
    pools = [
        [chr(c) for c in range(0x20, 0x7F)],
        list("àáâãäåæçèéêëìíîïñòóôõöøùúûüýÿĀāĂăĄąĆćČčĐđĒēĘęĚěĞğĪīİıŁłŃńŇňŌōŐőŒœŘřŚśŞşŠšŢţŤťŪūŮůŰűŸŹźŻżŽž"),
        [chr(c) for c in range(0x300, 0x370)],
        [chr(c) for c in range(0x370, 0x400)] + [chr(c) for c in range(0x400, 0x460)],
        [chr(c) for c in range(0x4E00, 0x4E80)] + [chr(c) for c in range(0x3040, 0x3100)],
        [chr(c) for c in range(0xAC00, 0xAC40)] + [chr(c) for c in range(0x1100, 0x1120)],
        [chr(c) for c in range(0x0E01, 0x0E5C)] + [chr(c) for c in range(0x0600, 0x0660)],
        [chr(c) for c in range(0x0900, 0x0980)],
        [chr(c) for c in range(0x1F300, 0x1F320)] + [chr(c) for c in range(0x1F600, 0x1F650)]
        + ["\u200d", "\ufe0f", "\U0001F3FB", "\U0001F3FD", "\U0001F1FA", "\U0001F1F8"],
        [chr(c) for c in range(0x2000, 0x2070)] + [chr(c) for c in range(0xFF00, 0xFF70)]
        + ["\u00a0", "\u3000", "\t", "\n", "\r", "\x0b", "\x0c", "\x85", "\x00", "\x1f"],
        [chr(c) for c in range(0xFB00, 0xFB50)] + [chr(c) for c in range(0x2100, 0x2150)],
        ["[CLS]", "[SEP]", "[MASK]", "<s>", "</s>", "<mask>", "<pad>", "<unk>", " ", "  "],
    ]
    out = []
    for _ in range(n):
        k = rng.randint(1, 40)
        parts = []
        for _ in range(k):
            pool = rng.choice(pools)
            parts.append(rng.choice(pool))
            if rng.random() < 0.25:
                parts.append(" ")
        out.append("".join(parts))
    # Random code points from every plane, assigned or not.
    for _ in range(n // 4):
        cps = []
        while len(cps) < rng.randint(1, 12):
            c = rng.randrange(0x110000)
            if not 0xD800 <= c <= 0xDFFF:
                cps.append(chr(c))
        out.append(" ".join(cps) if rng.random() < 0.5 else "".join(cps))
    return out


def long_texts(lines):
    rng = random.Random(99)
    prose = ""
    while len(prose) < 10000:
        prose += rng.choice(lines) + " "
    mixed = ""
    pieces = MULTILINGUAL + EXTRAS + [t for _, t in HOSTILE[4:30]]
    while len(mixed) < 10000:
        mixed += rng.choice(pieces) + rng.choice([" ", "\n", "", "  "])
    return [("long_prose_10k", prose[:10000]), ("long_mixed_10k", mixed[:10000]),
            ("long_single_char_10k", "a" * 10000), ("long_cjk_10k", "我爱北京" * 2500)]


# ---------------------------------------------------------------- fixtures


def ids_digest(ids):
    words = array.array("i", ids)
    assert sys.byteorder == "little"
    return hashlib.sha256(words.tobytes()).hexdigest()


def expected_entry(ids, text):
    if len(text) > 1000:
        return {"count": len(ids), "head": ids[:64], "sha256": ids_digest(ids)}
    return ids


def codepoint_hashes(content_ids, block=0x1000, end=0x20000):
    out = []
    for start in range(0, end, block):
        words = array.array("i")
        for c in range(start, start + block):
            if 0xD800 <= c <= 0xDFFF:
                continue
            ch = chr(c)
            words.extend(content_ids("a" + ch + " " + ch + "b"))
            words.append(-1)
        out.append(hashlib.sha256(words.tobytes()).hexdigest()[:16])
    return out


CATEGORIES = ["Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd",
              "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf",
              "Cs", "Co"]
GRAPHEME_BREAKS = ["Other", "CR", "LF", "Control", "Extend", "ZWJ", "Regional_Indicator",
                   "Prepend", "SpacingMark", "L", "V", "T", "LV", "LVT"]
GCB_RE = [(i, regex.compile(r"\p{Grapheme_Cluster_Break=%s}" % n))
          for i, n in enumerate(GRAPHEME_BREAKS) if i]
PICT_RE = regex.compile(r"\p{Extended_Pictographic}")


def gcb(ch):
    return next((i for i, p in GCB_RE if p.match(ch)), 0)


def unicode_class_hashes(block=0x4000):
    props = {
        "category": lambda ch: [CATEGORIES.index(unicodedata.category(ch))],
        "nfd": lambda ch: [ord(x) for x in unicodedata.normalize("NFD", ch)],
        "nfd_marks": lambda ch: [ord(x) for x in unicodedata.normalize("NFD", ch + "\u0316\u0301")],
        "white_space": lambda ch: [1 if refs.is_white_space(ch) else 0],
        "grapheme_break": lambda ch: [gcb(ch)],
        "pictographic": lambda ch: [1 if PICT_RE.match(ch) else 0],
    }
    out = {}
    for name, fn in props.items():
        hashes = []
        for start in range(0, 0x110000, block):
            words = array.array("I")
            for c in range(start, start + block):
                if 0xD800 <= c <= 0xDFFF:
                    continue
                words.extend(fn(chr(c)))
                words.append(0xFFFFFFFF)
            hashes.append(hashlib.sha256(words.tobytes()).hexdigest()[:16])
        out[name] = hashes
    return {"block": block, "hashes": out}


def grapheme_cases(n=3000, seed=5):
    rng = random.Random(seed)
    by_class = collections.defaultdict(list)
    for c in list(range(0, 0x3400)) + list(range(0xA000, 0xD800)) + list(range(0xE000, 0x10000)) \
            + list(range(0x1F000, 0x1FB00)) + list(range(0xE0000, 0xE0080)):
        ch = chr(c)
        by_class[(gcb(ch), bool(PICT_RE.match(ch)))].append(ch)
    classes = sorted(by_class)
    cases = []
    for _ in range(n):
        s = "".join(rng.choice(by_class[rng.choice(classes)]) for _ in range(rng.randint(1, 10)))
        cases.append({"text": s, "clusters": [len(g) for g in regex.findall(r"\X", s)]})
    return cases


INVALID_UTF8 = [
    ("lone_continuation", b"ab\x80cd", 2), ("truncated_two", b"caf\xc3", 3),
    ("overlong_slash", b"\xc0\xaf", 0), ("surrogate", b"x\xed\xa0\x80", 1),
    ("above_max", b"\xf4\x90\x80\x80", 0), ("bad_continuation", b"\xe2\x82x", 2),
    ("latin1", b"na\xefve", 3),
]


FUZZ = os.path.join(ROOT, "fuzz", "corpus", "text_tokenizer")


def tiny_rules_model(lines):
    """A ~3 KB Unigram model whose charsmap comes from a few hand-written rules
    (sentencepiece's normalization_rule_tsv), for fuzz seeds."""
    # A fixed folder: the model records its training file's path (trainer_spec.input).
    tmp = os.path.join(tempfile.gettempdir(), "vlbias_text_spm_training")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        rules = os.path.join(tmp, "rules.tsv")
        with open(rules, "w", encoding="utf-8") as f:
            f.write("41\t61\nFF21\t61\n65 301\tE9\n3000\t20\nA0\t20\n200B\t\n")
        ascii_lines = [line for line in lines if line.isascii()][:300]
        corpus_file = os.path.join(tmp, "c.txt")
        with open(corpus_file, "w", encoding="utf-8") as f:
            f.write("\n".join(ascii_lines) + "\n")
        spm.SentencePieceTrainer.train(
            input=corpus_file, model_prefix=os.path.join(tmp, "m"), model_type="unigram",
            vocab_size=150, hard_vocab_limit=False, normalization_rule_tsv=rules, unk_id=0,
            bos_id=1, eos_id=2, pad_id=-1, character_coverage=0.98, num_threads=1, minloglevel=2)
        with open(os.path.join(tmp, "m.model"), "rb") as f:
            return f.read()
    finally:
        shutil.rmtree(tmp)


def write_fuzz_seeds(lines):
    """fuzz/corpus/text_tokenizer: one seed per input kind of fuzz_text_tokenizer
    (first byte: 0 text, 1 tokenizer.json, 2 vocab.txt, 3 vocab.json, 4 merges.txt,
    5 sentencepiece model, 6 tokenizer_config.json, 7 charsmap; bit 3 picks the other
    fixture folder where the target has two)."""
    if os.path.isdir(FUZZ):
        shutil.rmtree(FUZZ)
    os.makedirs(FUZZ)

    def seed(name, kind, payload):
        with open(os.path.join(FUZZ, name), "wb") as f:
            f.write(bytes([kind]) + (payload.encode("utf-8") if isinstance(payload, str)
                                     else payload))

    for name, text in HOSTILE[4:40:3]:
        seed("text_" + name, 0, text)
    models = MODELS

    def model_file(folder, name):
        with open(os.path.join(models, folder, name), "rb") as f:
            return f.read()
    bert = json.loads(model_file("bert_uncased", "tokenizer.json"))
    bert["model"]["vocab"] = {t: i for t, i in bert["model"]["vocab"].items() if i < 120}
    seed("json_wordpiece", 1, json.dumps(bert, ensure_ascii=False))
    rob = json.loads(model_file("roberta", "tokenizer.json"))
    rob["model"]["merges"] = rob["model"]["merges"][:30]
    keep = {a + b for a, b in (m.split(" ") for m in rob["model"]["merges"])}
    rob["model"]["vocab"] = {t: i for t, i in rob["model"]["vocab"].items() if i < 260 or t in keep
                             or t == "<mask>"}
    seed("json_bpe", 1, json.dumps(rob, ensure_ascii=False))
    tiny = tiny_rules_model(lines)
    pieces, charsmap = read_spm(tiny)
    seed("json_unigram", 1 | 8, json.dumps(xlmr_tokenizer_json(pieces, charsmap, False, False),
                                           ensure_ascii=False))
    seed("vocab_txt", 2, b"".join(t.encode("utf-8") + b"\n" for t, i in
                                 sorted(bert["model"]["vocab"].items(), key=lambda kv: kv[1])))
    seed("vocab_json", 3, model_file("roberta", "vocab.json"))
    seed("vocab_json_array", 3, "[]")  # issue 37: no object at all, not an empty vocabulary
    seed("vocab_json_string", 3, '"x"')
    merges = model_file("roberta", "merges.txt").split(b"\n")
    seed("merges_txt", 4, b"\n".join(merges[:40]) + b"\n")
    seed("sentencepiece_model", 5, tiny)
    seed("tokenizer_config_bert", 6, model_file("bert_uncased", "tokenizer_config.json"))
    seed("tokenizer_config_roberta", 6 | 8, model_file("roberta", "tokenizer_config.json"))
    seed("charsmap", 7, charsmap)


def main():
    if os.path.isdir(MODELS):
        shutil.rmtree(MODELS)
    os.makedirs(MODELS)
    lines = corpus()
    # WordPiece vocabularies, from each flavor's basic tokenization of the corpus.
    uncased_words = refs.BertSlow({}, True)._basic
    cased_words = refs.BertSlow({}, False)._basic
    bert_ids = bert_folder("bert_uncased", train_wordpiece(lines, uncased_words), True)
    dbert_ids = bert_folder("distilbert_cased", train_wordpiece(lines, cased_words), False)
    rob_ids, merges = roberta_folder(train_bpe(lines))
    big = train_spm(lines, 2000, False, 0.995)
    small = train_spm(lines, 1200, True, 0.98)
    xlmr_tok, xlmr_map = xlmr_folder("xlmr", big)
    old_tok, _ = xlmr_folder("xlmr_old_json", big, old_json=True, write_model=False)
    bytes_tok, bytes_map = xlmr_folder("xlmr_bytes", small, byte_fallback=True)
    sp_big = spm.SentencePieceProcessor(model_proto=big)
    sp_small = spm.SentencePieceProcessor(model_proto=small)
    references = {
        "bert_uncased": {"legacy": refs.BertSlow(bert_ids, True),
                         "tokenizer.json": refs.BertFast(bert_ids, True)},
        "distilbert_cased": {"legacy": refs.BertSlow(dbert_ids, False),
                             "tokenizer.json": refs.BertFast(dbert_ids, False)},
        "roberta": {"legacy": refs.RobertaSlow(rob_ids, merges),
                    "tokenizer.json": refs.RobertaFast(rob_ids, merges)},
        "xlmr": {"legacy": refs.XlmrSlow(sp_big),
                 "tokenizer.json": unigram_fast(xlmr_tok, xlmr_map)},
        "xlmr_old_json": {"tokenizer.json": unigram_fast(old_tok, xlmr_map)},
        "xlmr_bytes": {"legacy": refs.XlmrSlow(sp_small),
                       "tokenizer.json": unigram_fast(bytes_tok, bytes_map)},
    }
    texts = HOSTILE + [(f"random_{i}", t) for i, t in enumerate(random_texts(400))] \
        + long_texts(lines)
    expected = {"generator": "tools/make_text_tokenizer_fixtures.py",
                "unicodedata": unicodedata.unidata_version,
                "texts": [{"name": n, "text": t} for n, t in texts], "ids": {}}
    codepoints = {"block": 0x1000, "end": 0x20000, "hashes": {}}
    for model, sources in references.items():
        for source, ref in sources.items():
            key = f"{model}/{source}"
            expected["ids"][key] = [expected_entry(ref.content_ids(t), t) for _, t in texts]
            codepoints["hashes"][key] = codepoint_hashes(ref.content_ids)
            print(f"{key}: done", flush=True)
    with open(os.path.join(OUT, "expected_ids.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, ensure_ascii=True, separators=(",", ":"))
    write_json(os.path.join(OUT, "codepoint_ids.json"), codepoints)
    write_json(os.path.join(OUT, "unicode_classes.json"), unicode_class_hashes())
    with open(os.path.join(OUT, "graphemes.json"), "w", encoding="utf-8") as f:
        json.dump(grapheme_cases(), f, ensure_ascii=True, separators=(",", ":"))
    write_fuzz_seeds(lines)
    write_json(os.path.join(OUT, "invalid_utf8.json"),
               [{"name": n, "hex": b.hex(), "offset": o} for n, b, o in INVALID_UTF8])
    sizes = {}
    for dirpath, _, files in os.walk(OUT):
        for name in files:
            path = os.path.join(dirpath, name)
            sizes[os.path.relpath(path, OUT)] = os.path.getsize(path)
    print(json.dumps(sizes, indent=1))


if __name__ == "__main__":
    main()
