#!/usr/bin/python3
"""Fuzz seeds of issue 37 (item 4): the hostile tokenizer inputs that made the tokenizers
super-linear, sized for a fuzzer (kilobytes, not megabytes), derived from the seeds that
tools/make_text_tokenizer_fixtures.py writes.

fuzz/corpus/text_tokenizer/ (fuzz/fuzz_text_tokenizer.cpp; the first byte selects the input):
  text_long_word_20000          0: a 20,000-character word through every fixture tokenizer
  text_many_added_tokens        0: a text dense with special tokens and near-misses
  json_wordpiece_hostile        1: WordPiece with max_input_chars_per_word 10^9 and 500
                                   added tokens, some prefixes of others
  json_unigram_long_piece       9: a Unigram piece of 20,000 characters
  json_unigram_stretched_charsmap 9: every charsmap replacement running over 64 KiB
  json_unigram_replace_hostile  9: Replace normalizers with a 5,000-character pattern and a
                                   100,000-character content
  charsmap_stretched            7: the charsmap blob with its replacements stretched
  sentencepiece_model_stretched_charsmap 5: a sentencepiece.bpe.model whose
                                   normalizer_spec.precompiled_charsmap is stretched
fuzz/corpus/tokenizer/ (fuzz/fuzz_tokenizer.cpp, the CLIP tokenizer):
  hf_long_word_20000.txt, oc_long_word_20000.txt   0 / 1: a 20,000-character word

Run: /usr/bin/python3 tools/make_tokenizer_limit_seeds.py (after make_text_tokenizer_fixtures.py).
"""
import base64
import json
import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEXT = os.path.join(ROOT, "fuzz", "corpus", "text_tokenizer")
CLIP = os.path.join(ROOT, "fuzz", "corpus", "tokenizer")


def read_seed(name):
    with open(os.path.join(TEXT, name), "rb") as f:
        data = f.read()
    return data[0], data[1:]


def write(folder, name, kind, payload):
    if isinstance(payload, str):
        payload = payload.encode("utf-8")
    with open(os.path.join(folder, name), "wb") as f:
        f.write(bytes([kind]) + payload)


def stretch_charsmap(blob, extra):
    """Every replacement runs to the end of the strings: each '\\0' ending one becomes 'x',
    and `extra` bytes of 'y' follow."""
    (trie,) = struct.unpack("<I", blob[:4])
    head, strings = blob[: 4 + trie], blob[4 + trie :]
    return head + strings.replace(b"\0", b"x") + b"y" * extra


def varint(data, i):
    value, shift = 0, 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def encode_varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def replace_field(message, number, edit):
    """The protobuf `message` with each length-delimited field `number` replaced by
    edit(its bytes); other fields copied as they are."""
    out, i = bytearray(), 0
    while i < len(message):
        start = i
        key, i = varint(message, i)
        wire = key & 7
        if wire == 0:
            _, i = varint(message, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            length, i = varint(message, i)
            body = message[i : i + length]
            i += length
            if key >> 3 == number:
                body = edit(body)
                out += encode_varint(key) + encode_varint(len(body)) + body
                continue
        else:
            raise ValueError(f"wire type {wire}")
        out += message[start:i]
    return bytes(out)


def main():
    write(TEXT, "text_long_word_20000", 0, "a" * 20000)
    dense = "".join(f"[CLS]<mask>[SE<s></s>{k}[MASK]<unk>" for k in range(200))
    write(TEXT, "text_many_added_tokens", 0, dense)

    kind, payload = read_seed("json_wordpiece")
    tok = json.loads(payload)
    tok["model"]["max_input_chars_per_word"] = 1000000000
    for k in range(500):
        tok["added_tokens"].append(
            {"id": 10 + k % 50, "content": "<x" + "y" * (k % 7) + str(k) + ">",
             "single_word": False, "lstrip": k % 3 == 0, "rstrip": k % 5 == 0,
             "normalized": k % 2 == 0, "special": k % 2 == 1})
    write(TEXT, "json_wordpiece_hostile", kind, json.dumps(tok, ensure_ascii=False))

    kind, payload = read_seed("json_unigram")
    base = json.loads(payload)
    tok = json.loads(payload)
    tok["model"]["vocab"].append(["Hello" * 4000, 0.0])
    write(TEXT, "json_unigram_long_piece", kind, json.dumps(tok, ensure_ascii=False))

    tok = json.loads(payload)
    for step in tok["normalizer"]["normalizers"]:
        if step["type"] == "Precompiled":
            blob = base64.b64decode(step["precompiled_charsmap"])
            step["precompiled_charsmap"] = base64.b64encode(
                stretch_charsmap(blob, 64 << 10)).decode("ascii")
    write(TEXT, "json_unigram_stretched_charsmap", kind, json.dumps(tok, ensure_ascii=False))

    tok = base
    tok["normalizer"]["normalizers"] += [
        {"type": "Replace", "pattern": {"String": "l" * 5000 + "o"}, "content": "c"},
        {"type": "Replace", "pattern": {"String": "o"}, "content": "z" * 100000},
    ]
    write(TEXT, "json_unigram_replace_hostile", kind, json.dumps(tok, ensure_ascii=False))

    kind, blob = read_seed("charsmap")
    write(TEXT, "charsmap_stretched", kind, stretch_charsmap(blob, 64 << 10))

    # ModelProto.normalizer_spec (3) . precompiled_charsmap (2)
    kind, model = read_seed("sentencepiece_model")
    stretched = replace_field(
        model, 3, lambda spec: replace_field(spec, 2, lambda blob: stretch_charsmap(blob, 64 << 10)))
    write(TEXT, "sentencepiece_model_stretched_charsmap", kind, stretched)

    word = "photofriendlypeople" * 1053
    write(CLIP, "hf_long_word_20000.txt", 0, word[:20000])
    write(CLIP, "oc_long_word_20000.txt", 1, word[:20000])


if __name__ == "__main__":
    main()
