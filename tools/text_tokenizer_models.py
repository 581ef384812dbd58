"""Tiny Hugging Face model folders for the text tokenizer fixtures: training (WordPiece
and byte-level BPE here, Unigram with the sentencepiece library) and the files as
transformers ships them. Used by tools/make_text_tokenizer_fixtures.py."""
import base64
import collections
import json
import os
import shutil
import struct
import tempfile

import sentencepiece as spm

import text_tokenizer_refs as refs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "tests", "fixtures", "text", "models")


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, indent=None, separators=(",", ":"))


# ---------------------------------------------------------------- WordPiece


def train_wordpiece(lines, basic, size=3000):
    """Specials, every character seen (also with "##"), then the most frequent words
    and word-internal substrings: a small vocabulary that makes the greedy
    longest-match-first search take many paths."""
    words = collections.Counter()
    for line in lines:
        words.update(basic(line))
    chars = sorted({c for w in words for c in w})
    pieces = collections.Counter()
    for w, n in words.items():
        pieces[w] += 3 * n
        for i in range(len(w)):
            for j in range(i + 2, min(len(w), i + 8) + 1):
                pieces[w[i:j] if i == 0 else "##" + w[i:j]] += n
    vocab = ["[PAD]", "[unused0]", "[unused1]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab += chars + ["##" + c for c in chars]
    seen = set(vocab)
    for piece, _ in sorted(pieces.items(), key=lambda kv: (-kv[1], kv[0])):
        if len(vocab) >= size:
            break
        if piece not in seen:
            seen.add(piece)
            vocab.append(piece)
    return vocab


def bert_folder(name, vocab, lowercase):
    d = os.path.join(MODELS, name)
    os.makedirs(d, exist_ok=True)
    ids = {t: i for i, t in enumerate(vocab)}
    with open(os.path.join(d, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in vocab))
    specials = [("[PAD]", "pad_token"), ("[UNK]", "unk_token"), ("[CLS]", "cls_token"),
                ("[SEP]", "sep_token"), ("[MASK]", "mask_token")]
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": ids[t], "content": t, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}
                         for t, _ in specials],
        "normalizer": {"type": "BertNormalizer", "clean_text": True,
                       "handle_chinese_chars": True, "strip_accents": None,
                       "lowercase": lowercase},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {t: {"id": t, "ids": [ids[t]], "tokens": [t]}
                               for t in ("[CLS]", "[SEP]")}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": ids},
    }
    write_json(os.path.join(d, "tokenizer.json"), tokenizer)
    write_json(os.path.join(d, "tokenizer_config.json"),
               {"do_lower_case": lowercase, "model_max_length": 512,
                "tokenizer_class": "BertTokenizer", **{k: t for t, k in specials}})
    write_json(os.path.join(d, "special_tokens_map.json"), {k: t for t, k in specials})
    model_type = "bert" if lowercase else "distilbert"
    write_json(os.path.join(d, "config.json"),
               {"architectures": ["BertForSequenceClassification" if lowercase
                                  else "DistilBertForSequenceClassification"],
                "model_type": model_type, "max_position_embeddings": 512, "pad_token_id": 0,
                "vocab_size": len(vocab)})
    return ids


# ---------------------------------------------------------------- byte-level BPE


def train_bpe(lines, num_merges=1500):
    words = collections.Counter()
    for line in lines:
        for token in refs.GPT2_PATTERN.findall(line):
            words[tuple(refs.byte_encode(token))] += 1
    words = dict(words)
    merges = []
    for _ in range(num_merges):
        pairs = collections.Counter()
        for w, n in words.items():
            for i in range(len(w) - 1):
                pairs[w[i], w[i + 1]] += n
        if not pairs:
            break
        best = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        merges.append(best)
        merged = {}
        for w, n in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            merged[tuple(out)] = merged.get(tuple(out), 0) + n
        words = merged
    return merges


def roberta_folder(merges):
    d = os.path.join(MODELS, "roberta")
    os.makedirs(d, exist_ok=True)
    vocab = ["<s>", "<pad>", "</s>", "<unk>"]
    vocab += [refs.BYTE_ENCODER[b] for b in range(256)]
    seen = set(vocab)
    for a, b in merges:
        if a + b not in seen:
            seen.add(a + b)
            vocab.append(a + b)
    vocab.append("<mask>")
    ids = {t: i for i, t in enumerate(vocab)}
    write_json(os.path.join(d, "vocab.json"), ids)
    with open(os.path.join(d, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": ids[t], "content": t, "single_word": False,
                          "lstrip": t == "<mask>", "rstrip": False, "normalized": t != "<mask>",
                          "special": True} for t in ("<s>", "<pad>", "</s>", "<unk>", "<mask>")],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                          "use_regex": True},
        "post_processor": {"type": "RobertaProcessing", "sep": ["</s>", ids["</s>"]],
                           "cls": ["<s>", ids["<s>"]], "trim_offsets": True,
                           "add_prefix_space": False},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": "", "end_of_word_suffix": "", "fuse_unk": False,
                  "byte_fallback": False, "vocab": ids, "merges": [f"{a} {b}" for a, b in merges]},
    }
    write_json(os.path.join(d, "tokenizer.json"), tokenizer)
    specials = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
                "sep_token": "</s>", "pad_token": "<pad>", "cls_token": "<s>",
                "mask_token": {"content": "<mask>", "single_word": False, "lstrip": True,
                               "rstrip": False, "normalized": False}}
    write_json(os.path.join(d, "tokenizer_config.json"),
               {"add_prefix_space": False, "errors": "replace", "model_max_length": 512,
                "tokenizer_class": "RobertaTokenizer", **specials})
    write_json(os.path.join(d, "special_tokens_map.json"), specials)
    write_json(os.path.join(d, "config.json"),
               {"architectures": ["RobertaForSequenceClassification"], "model_type": "roberta",
                "max_position_embeddings": 514, "pad_token_id": 1, "vocab_size": len(vocab)})
    return ids, [tuple(m) for m in merges]


# ---------------------------------------------------------------- SentencePiece


def proto_fields(data):
    """(field number, wire type, value) of a protobuf message; value is bytes for
    length-delimited fields, an int otherwise."""
    i = 0
    out = []

    def varint():
        nonlocal i
        v = shift = 0
        while True:
            b = data[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v
    while i < len(data):
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            out.append((field, wire, varint()))
        elif wire == 2:
            n = varint()
            out.append((field, wire, data[i:i + n]))
            i += n
        elif wire == 5:
            out.append((field, wire, int.from_bytes(data[i:i + 4], "little")))
            i += 4
        elif wire == 1:
            out.append((field, wire, int.from_bytes(data[i:i + 8], "little")))
            i += 8
        else:
            raise ValueError("group")
    return out


def read_spm(model_bytes):
    """Pieces [(piece, score as float32 value, type)] and the precompiled charsmap."""
    pieces, charsmap = [], b""
    for field, _, value in proto_fields(model_bytes):
        if field == 1:
            piece, score, typ = "", 0.0, 1
            for f, _, v in proto_fields(value):
                if f == 1:
                    piece = v.decode("utf-8")
                elif f == 2:
                    score = struct.unpack("<f", v.to_bytes(4, "little"))[0]
                elif f == 3:
                    typ = v
            pieces.append((piece, score, typ))
        elif field == 3:
            for f, _, v in proto_fields(value):
                if f == 2:
                    charsmap = v
    return pieces, charsmap


def train_spm(lines, vocab_size, byte_fallback, coverage):
    # A fixed folder: the model records its training file's path (trainer_spec.input).
    tmp = os.path.join(tempfile.gettempdir(), "vlbias_text_spm_training")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        path = os.path.join(tmp, "corpus.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        spm.SentencePieceTrainer.train(
            input=path, model_prefix=os.path.join(tmp, "m"), model_type="unigram",
            vocab_size=vocab_size, character_coverage=coverage, unk_id=0, bos_id=1, eos_id=2,
            pad_id=-1, byte_fallback=byte_fallback, num_threads=1, hard_vocab_limit=False,
            shuffle_input_sentence=False, minloglevel=2)
        with open(os.path.join(tmp, "m.model"), "rb") as f:
            return f.read()
    finally:
        shutil.rmtree(tmp)


def xlmr_tokenizer_json(pieces, charsmap, byte_fallback, old):
    vocab = [["<s>", 0.0], ["<pad>", 0.0], ["</s>", 0.0], ["<unk>", 0.0]]
    vocab += [[p, s] for p, s, _ in pieces[3:]]
    vocab.append(["<mask>", 0.0])
    mask = len(vocab) - 1
    b64 = base64.b64encode(charsmap).decode("ascii")
    if old:
        normalizer = {"type": "Precompiled", "precompiled_charsmap": b64}
        pre = {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True}
    else:
        normalizer = {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": b64},
            {"type": "Strip", "strip_left": False, "strip_right": True},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "\u2581"}]}
        pre = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always",
               "split": True}
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": t, "single_word": False, "lstrip": t == "<mask>",
                          "rstrip": False, "normalized": False, "special": True}
                         for i, t in [(0, "<s>"), (1, "<pad>"), (2, "</s>"), (3, "<unk>"),
                                      (mask, "<mask>")]],
        "normalizer": normalizer,
        "pre_tokenizer": pre,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "pair": [],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]},
                               "</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}}},
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always",
                    "split": True},
        "model": {"type": "Unigram", "unk_id": 3, "vocab": vocab, "byte_fallback": byte_fallback},
    }


def xlmr_folder(name, model_bytes, old_json=False, write_model=True, byte_fallback=False):
    d = os.path.join(MODELS, name)
    os.makedirs(d, exist_ok=True)
    pieces, charsmap = read_spm(model_bytes)
    if write_model:
        with open(os.path.join(d, "sentencepiece.bpe.model"), "wb") as f:
            f.write(model_bytes)
    tok = xlmr_tokenizer_json(pieces, charsmap, byte_fallback, old_json)
    write_json(os.path.join(d, "tokenizer.json"), tok)
    specials = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
                "sep_token": "</s>", "pad_token": "<pad>", "cls_token": "<s>",
                "mask_token": {"content": "<mask>", "single_word": False, "lstrip": True,
                               "rstrip": False, "normalized": False}}
    write_json(os.path.join(d, "tokenizer_config.json"),
               {"model_max_length": 512, "tokenizer_class": "XLMRobertaTokenizer", **specials})
    write_json(os.path.join(d, "special_tokens_map.json"), specials)
    write_json(os.path.join(d, "config.json"),
               {"architectures": ["XLMRobertaForSequenceClassification"],
                "model_type": "xlm-roberta", "max_position_embeddings": 514, "pad_token_id": 1,
                "vocab_size": len(tok["model"]["vocab"])})
    return tok, refs.Charsmap(charsmap)


def unigram_fast(tok, charsmap):
    model = tok["model"]
    steps = []
    norm = tok["normalizer"]
    for n in (norm["normalizers"] if norm["type"] == "Sequence" else [norm]):
        if n["type"] == "Precompiled":
            steps.append(("precompiled",))
        elif n["type"] == "Strip":
            steps.append(("strip", n["strip_left"], n["strip_right"]))
        else:
            steps.append(("replace_spaces", n["content"]))
    pre = tok["pre_tokenizer"]
    prepend = pre.get("prepend_scheme", "always" if pre.get("add_prefix_space", True) else "never")
    tokens = {t["content"]: (t["id"], t["lstrip"], t["rstrip"]) for t in tok["added_tokens"]}
    return refs.UnigramFast([tuple(v) for v in model["vocab"]], model["unk_id"], charsmap, steps,
                            (prepend, pre.get("split", True)), model["byte_fallback"], tokens)
