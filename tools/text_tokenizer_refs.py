"""Independent Python references of the text tokenizers of src/text/ (used by
tools/make_text_tokenizer_fixtures.py). Each class follows one published pipeline in
its own terms; none is derived from the C++ code.

  BertSlow        transformers' BertTokenizer (tokenization_bert.py): the
                  do_lower_case pass of PreTrainedTokenizer.tokenize, the added-token
                  trie split, BasicTokenizer (clean, CJK, NFC, whitespace split, lower,
                  NFD + drop Mn, punctuation split) and WordpieceTokenizer.
  BertFast        tokenizer.json of BertTokenizerFast (the tokenizers library, Rust):
                  added tokens split out of the raw text, BertNormalizer (clean with
                  Cc/Cf/Co as controls and White_Space as whitespace, CJK as in bert.rs,
                  NFD + drop Mn, per-character lowercase), BertPreTokenizer, WordPiece.
  RobertaSlow     transformers' RobertaTokenizer: prepare_for_tokenization, the trie
                  split with <mask>'s lstrip, re.findall of GPT-2's pattern with the
                  `regex` module, bytes_to_unicode and GPT-2's bpe().
  RobertaFast     tokenizer.json: added tokens, ByteLevel (prefix space per span,
                  GPT-2's pattern), BPE, RobertaProcessing.
  XlmrSlow        transformers' XLMRobertaTokenizer on the real sentencepiece library
                  (sp.encode(out_type=str) per span between special tokens, fairseq ids).
  UnigramFast     tokenizer.json of XLMRobertaTokenizerFast: Precompiled (grapheme
                  clusters from the `regex` module's \\X, the charsmap's double-array
                  trie read here), Replace, Strip, Metaspace, the Unigram model's
                  encode_optimized in float64 with fuse_unk, byte fallback.
"""
import re
import unicodedata

import regex

GPT2_PATTERN = regex.compile(
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
WHITE_SPACE = regex.compile(r"\p{White_Space}")


def is_white_space(ch):
    return bool(WHITE_SPACE.match(ch))


def trie_split(text, tokens):
    """Leftmost-longest split of text at the given added tokens: a list of
    (piece, is_token)."""
    out = []
    start = i = 0
    by_length = sorted(tokens, key=len, reverse=True)
    while i < len(text):
        hit = next((t for t in by_length if t and text.startswith(t, i)), None)
        if hit is None:
            i += 1
            continue
        if i > start:
            out.append((text[start:i], False))
        out.append((hit, True))
        i += len(hit)
        start = i
    if start < len(text):
        out.append((text[start:], False))
    return out


def slow_added_token_pieces(text, specials, lstrip_tokens=()):
    """PreTrainedTokenizer.tokenize's split: trie split, then for a token with lstrip
    the text before it loses its trailing whitespace (str.rstrip); empty pieces go."""
    pieces = [list(p) for p in trie_split(text, specials)]
    for k, (piece, is_token) in enumerate(pieces):
        if is_token and piece in lstrip_tokens and k > 0 and not pieces[k - 1][1]:
            pieces[k - 1][0] = pieces[k - 1][0].rstrip()
    return [(p, t) for p, t in pieces if p]


def fast_added_token_spans(text, tokens):
    """AddedVocabulary::find_matches (normalized=false tokens, no single_word):
    tokens = {content: (id, lstrip, rstrip)}; lstrip/rstrip take White_Space."""
    out = []
    done = i = 0
    by_length = sorted(tokens, key=len, reverse=True)
    while i < len(text):
        hit = next((t for t in by_length if text.startswith(t, i)), None)
        if hit is None:
            i += 1
            continue
        tid, lstrip, rstrip = tokens[hit]
        start, stop = i, i + len(hit)
        if lstrip:
            while start > done and is_white_space(text[start - 1]):
                start -= 1
        if rstrip:
            while stop < len(text) and is_white_space(text[stop]):
                stop += 1
        if start > done:
            out.append((text[done:start], None))
        out.append((text[start:stop], tid))
        done = i = stop
    if done < len(text):
        out.append((text[done:], None))
    return out


# ---------------------------------------------------------------- WordPiece


def wordpiece(word, vocab, unk, prefix="##", max_chars=100):
    if len(word) > max_chars:
        return [vocab[unk]]
    out = []
    start = 0
    while start < len(word):
        end = len(word)
        found = None
        while start < end:
            sub = word[start:end]
            if start > 0:
                sub = prefix + sub
            if sub in vocab:
                found = sub
                break
            end -= 1
        if found is None:
            return [vocab[unk]]
        out.append(vocab[found])
        start = end
    return out


def bert_punct(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def split_on_punc(word):
    out, cur = [], []
    for ch in word:
        if bert_punct(ch):
            if cur:
                out.append("".join(cur))
                cur = []
            out.append(ch)
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


def strip_accents(text):
    return "".join(c for c in unicodedata.normalize("NFD", text)
                   if unicodedata.category(c) != "Mn")


def python_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def rust_cjk(cp):
    return python_cjk(cp) and not 0x2B820 <= cp <= 0x2B91F


class BertSlow:
    SPECIALS = ["[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"]  # all_special_tokens order

    def __init__(self, vocab, do_lower_case=True, strip_accents=None, chinese=True):
        self.vocab = vocab
        self.lower = do_lower_case
        self.strip = strip_accents
        self.chinese = chinese

    def _clean(self, text):
        out = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD:
                continue
            if ch not in "\t\n\r" and unicodedata.category(ch).startswith("C"):
                continue
            if ch in " \t\n\r" or unicodedata.category(ch) == "Zs":
                out.append(" ")
            else:
                out.append(ch)
        return "".join(out)

    def _basic(self, text):
        text = self._clean(text)
        if self.chinese:
            text = "".join(f" {c} " if python_cjk(ord(c)) else c for c in text)
        text = unicodedata.normalize("NFC", text)
        pieces = []
        for token in text.strip().split():
            if self.lower:
                token = token.lower()
                if self.strip is not False:
                    token = strip_accents(token)
            elif self.strip:
                token = strip_accents(token)
            pieces.extend(split_on_punc(token))
        return " ".join(pieces).strip().split()

    def content_ids(self, text):
        if self.lower:
            pattern = "(" + "|".join(re.escape(s) for s in self.SPECIALS) + ")|(.+?)"
            text = re.sub(pattern, lambda m: m.groups()[0] or m.groups()[1].lower(), text)
        ids = []
        for piece, is_token in slow_added_token_pieces(text, self.SPECIALS):
            if is_token:
                ids.append(self.vocab[piece])
                continue
            for word in self._basic(piece):
                ids.extend(wordpiece(word, self.vocab, "[UNK]"))
        return ids


class BertFast:
    SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

    def __init__(self, vocab, lowercase=True, strip_accents=None, chinese=True):
        self.vocab = vocab
        self.lower = lowercase
        self.strip = lowercase if strip_accents is None else strip_accents
        self.chinese = chinese

    def normalize(self, text):
        out = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD:
                continue
            if ch not in "\t\n\r" and unicodedata.category(ch) in ("Cc", "Cf", "Co"):
                continue
            if ch in "\t\n\r" or is_white_space(ch):
                ch = " "
            out.append(f" {ch} " if self.chinese and rust_cjk(cp) else ch)
        text = "".join(out)
        if self.strip:
            text = strip_accents(text)
        if self.lower:
            text = "".join(c.lower() for c in text)  # char::to_lowercase, no context
        return text

    def content_ids(self, text):
        tokens = {t: (self.vocab[t], False, False) for t in self.SPECIALS}
        ids = []
        for span, tid in fast_added_token_spans(text, tokens):
            if tid is not None:
                ids.append(tid)
                continue
            words = regex.split(r"\p{White_Space}+", self.normalize(span))
            for word in words:
                for piece in split_on_punc(word):
                    ids.extend(wordpiece(piece, self.vocab, "[UNK]"))
        return ids


# ---------------------------------------------------------------- byte-level BPE


def bytes_to_unicode():
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1))
          + list(range(ord("\xae"), ord("\xff") + 1)))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


BYTE_ENCODER = bytes_to_unicode()


def byte_encode(piece):
    return "".join(BYTE_ENCODER[b] for b in piece.encode("utf-8"))


def gpt2_bpe(token, ranks):
    """GPT-2's bpe(): merge the lowest-ranked pair, all occurrences, until none."""
    word = tuple(token)
    if len(word) < 2:
        return list(word)
    while True:
        pairs = {(word[i], word[i + 1]) for i in range(len(word) - 1)}
        bigram = min(pairs, key=lambda p: ranks.get(p, float("inf")))
        if bigram not in ranks:
            break
        first, second = bigram
        new = []
        i = 0
        while i < len(word):
            if i < len(word) - 1 and word[i] == first and word[i + 1] == second:
                new.append(first + second)
                i += 2
            else:
                new.append(word[i])
                i += 1
        word = tuple(new)
        if len(word) == 1:
            break
    return list(word)


class RobertaSlow:
    SPECIALS = ["<s>", "</s>", "<unk>", "<pad>", "<mask>"]

    def __init__(self, vocab, merges, add_prefix_space=False):
        self.vocab = vocab
        self.ranks = {m: i for i, m in enumerate(merges)}
        self.prefix = add_prefix_space

    def content_ids(self, text):
        if self.prefix and text and not text[0].isspace():
            text = " " + text
        ids = []
        for piece, is_token in slow_added_token_pieces(text, self.SPECIALS, ("<mask>",)):
            if is_token:
                ids.append(self.vocab[piece])
                continue
            for token in GPT2_PATTERN.findall(piece):
                ids.extend(self.vocab[t] for t in gpt2_bpe(byte_encode(token), self.ranks))
        return ids


class RobertaFast:
    def __init__(self, vocab, merges, add_prefix_space=False):
        self.vocab = vocab
        self.ranks = {m: i for i, m in enumerate(merges)}
        self.prefix = add_prefix_space
        self.tokens = {t: (vocab[t], t == "<mask>", False)
                       for t in ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]}

    def content_ids(self, text):
        ids = []
        for span, tid in fast_added_token_spans(text, self.tokens):
            if tid is not None:
                ids.append(tid)
                continue
            if self.prefix and not span.startswith(" "):
                span = " " + span
            for token in GPT2_PATTERN.findall(span):
                ids.extend(self.vocab[t] for t in gpt2_bpe(byte_encode(token), self.ranks))
        return ids


# ---------------------------------------------------------------- SentencePiece


class XlmrSlow:
    SPECIALS = ["<s>", "</s>", "<unk>", "<pad>", "<mask>"]

    def __init__(self, sp):
        self.sp = sp
        self.fairseq = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3,
                        "<mask>": sp.get_piece_size() + 1}

    def token_id(self, piece):
        if piece in self.fairseq:
            return self.fairseq[piece]
        spm_id = self.sp.piece_to_id(piece)
        return spm_id + 1 if spm_id else 3

    def content_ids(self, text):
        ids = []
        for piece, is_token in slow_added_token_pieces(text, self.SPECIALS, ("<mask>",)):
            if is_token:
                ids.append(self.fairseq[piece])
            else:
                ids.extend(self.token_id(p) for p in self.sp.encode(piece, out_type=str))
        return ids


class Charsmap:
    """The precompiled charsmap: <u32 trie bytes><darts-clone units><strings>."""

    def __init__(self, blob):
        size = int.from_bytes(blob[:4], "little")
        self.units = [int.from_bytes(blob[4 + 4 * i:8 + 4 * i], "little")
                      for i in range(size // 4)]
        self.strings = blob[4 + size:]

    def _string(self, offset):
        end = self.strings.index(b"\0", offset) if b"\0" in self.strings[offset:] else None
        return self.strings[offset:end].decode("utf-8")

    def prefix_matches(self, data):
        """(length, replacement) of every key that prefixes data, shortest first."""
        def offset(u):
            return (u >> 10) << ((u & (1 << 9)) >> 6)
        out = []
        node = offset(self.units[0])
        for i, c in enumerate(data):
            if c == 0:
                break
            node ^= c
            unit = self.units[node]
            if unit & ((1 << 31) | 0xFF) != c:
                break
            node ^= offset(unit)
            if (unit >> 8) & 1:
                out.append((i + 1, self._string(self.units[node] & ((1 << 31) - 1))))
        return out

    def transform(self, s):
        m = self.prefix_matches(s.encode("utf-8"))
        return m[0][1] if m else None

    def normalize_graphemes(self, text):
        """tokenizers' Precompiled: per grapheme cluster (under 6 bytes: whole), else
        per character."""
        out = []
        for g in regex.findall(r"\X", text):
            whole = self.transform(g) if len(g.encode("utf-8")) < 6 else None
            if whole is not None:
                out.append(whole)
                continue
            for ch in g:
                t = self.transform(ch)
                out.append(ch if t is None else t)
        return "".join(out)


class UnigramFast:
    def __init__(self, vocab, unk_id, charsmap, steps, metaspace, byte_fallback=False,
                 tokens=None):
        """vocab: [(piece, score)]; steps: normalizer steps ("precompiled",),
        ("strip", left, right), ("replace_spaces", content) or ("replace", pattern,
        content); metaspace: (prepend "always"/"first"/"never", split); tokens:
        {content: (id, lstrip, rstrip)} added tokens matched in the raw text."""
        self.pieces = [p for p, _ in vocab]
        self.scores = [s for _, s in vocab]
        self.ids = {p: i for i, p in enumerate(self.pieces)}
        self.unk = unk_id
        self.charsmap = charsmap
        self.steps = steps
        self.prepend, self.split = metaspace
        self.byte_fallback = byte_fallback
        self.tokens = tokens or {}
        self.unk_score = min(self.scores) - 10.0
        self.max_len = max(len(p.encode("utf-8")) for p in self.pieces)

    def normalize(self, text):
        for step in self.steps:
            if step[0] == "precompiled":
                text = self.charsmap.normalize_graphemes(text)
            elif step[0] == "strip":
                if step[1]:
                    while text and is_white_space(text[0]):
                        text = text[1:]
                if step[2]:
                    while text and is_white_space(text[-1]):
                        text = text[:-1]
            elif step[0] == "replace_spaces":
                text = re.sub(" {2,}", step[1], text)
            else:
                text = text.replace(step[1], step[2])
        return text

    def viterbi(self, s):
        data = s.encode("utf-8")
        n = len(data)
        best = [None] * (n + 1)  # (score, start, id)
        best[0] = (0.0, None, None)
        start = 0
        while start < n:
            here = best[start][0]
            lead = data[start]
            ch_len = min(1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4,
                         n - start)
            single = False
            for end in range(start + 1, min(n, start + self.max_len) + 1):
                try:
                    piece = data[start:end].decode("utf-8")
                except UnicodeDecodeError:
                    continue
                if piece not in self.ids:
                    continue
                pid = self.ids[piece]
                cand = self.scores[pid] + here
                if best[end] is None or cand > best[end][0]:
                    best[end] = (cand, start, pid)
                if end - start == ch_len:
                    single = True
            if not single:
                end = start + ch_len
                cand = self.unk_score + here
                if best[end] is None or cand > best[end][0]:
                    best[end] = (cand, start, self.unk)
            start += ch_len
        path = []
        end = n
        while end > 0:
            _, begin, pid = best[end]
            path.append((data[begin:end].decode("utf-8"), pid))
            end = begin
        path.reverse()
        # fuse_unk
        fused = []
        for piece, pid in path:
            if pid == self.unk and fused and fused[-1][1] == self.unk:
                fused[-1] = (fused[-1][0] + piece, pid)
            else:
                fused.append((piece, pid))
        return [p for p, _ in fused]

    def token_ids(self, token):
        if token in self.ids:
            return [self.ids[token]]
        if self.byte_fallback:
            pieces = ["<0x%02X>" % b for b in token.encode("utf-8")]
            if all(p in self.ids for p in pieces):
                return [self.ids[p] for p in pieces]
        return [self.unk]

    def content_ids(self, text):
        ids = []
        first = True
        for span, tid in fast_added_token_spans(text, self.tokens):
            at_start = first
            first = False
            if tid is not None:
                ids.append(tid)
                continue
            s = self.normalize(span).replace(" ", "\u2581")
            if not s:
                continue
            if (self.prepend == "always" or (self.prepend == "first" and at_start)) \
                    and not s.startswith("\u2581"):
                s = "\u2581" + s
            pieces = re.split("(?=\u2581)", s) if self.split else [s]
            for piece in pieces:
                if piece:
                    for token in self.viterbi(piece):
                        ids.extend(self.token_ids(token))
        return ids
