#!/usr/bin/python3
"""Fixtures for the native sequence classifiers (issue 21): tiny random models of the four
Hugging Face architectures Detoxify and its successors ship, and the logits of an
independent PyTorch forward of each, read by the classifier tests.

Writes tests/fixtures/classifier/:

  <case>/                 a Hugging Face sequence-classification folder: config.json (with
                          id2label, problem_type), model.safetensors (float32, the real
                          parameter names) and the tokenizer files of the matching model of
                          tests/fixtures/text/models (tokenizer.json and the legacy files,
                          but for XLM-R's sentencepiece.bpe.model)
      bert_multilabel     BertForSequenceClassification, 6 Detoxify "original" labels,
                          multi_label_classification (sigmoid), gelu (erf)
      roberta_multilabel  RobertaForSequenceClassification, Detoxify "unbiased"-style
                          labels, multi_label_classification, gelu
      xlmr_multilabel     XLMRobertaForSequenceClassification, multi-label, gelu
      distilbert_single   DistilBertForSequenceClassification, 2 labels, no problem_type
                          (softmax), gelu
      bert_tanh_single    BertForSequenceClassification, 3 labels, hidden_act gelu_new
                          (tanh approximation), single_label_classification
  expected.json           per case: the texts' token ids (special tokens added, truncated to
                          the model's length), the logits and the probabilities (float64
                          forward of the float32 weights), and how many texts were cut

The reference is written here from the published architectures (transformers'
modeling_bert.py, modeling_roberta.py, modeling_distilbert.py), in plain torch
operations on float64 copies of the stored weights, one text at a time (no padding). The
token ids come from the independent tokenizer references of tools/text_tokenizer_refs.py
reading the tokenizer.json of each folder. Run: /usr/bin/python3 tools/make_classifier_fixtures.py
"""
import base64
import json
import math
import os
import shutil
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import text_tokenizer_refs as refs  # noqa: E402
from make_clip_fixtures import write_safetensors  # noqa: E402
from text_tokenizer_models import unigram_fast  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEXT_MODELS = os.path.join(ROOT, "tests", "fixtures", "text", "models")
OUT = os.path.join(ROOT, "tests", "fixtures", "classifier")

DETOXIFY_ORIGINAL = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]
DETOXIFY_UNBIASED = ["toxicity", "severe_toxicity", "obscene", "identity_attack", "insult",
                     "threat", "sexual_explicit"]

# name, tokenizer folder, architecture, labels, problem_type (None = absent), hidden_act
CASES = [
    ("bert_multilabel", "bert_uncased", "bert", DETOXIFY_ORIGINAL,
     "multi_label_classification", "gelu"),
    ("roberta_multilabel", "roberta", "roberta", DETOXIFY_UNBIASED,
     "multi_label_classification", "gelu"),
    ("xlmr_multilabel", "xlmr", "xlm-roberta", DETOXIFY_ORIGINAL,
     "multi_label_classification", "gelu"),
    ("distilbert_single", "distilbert_cased", "distilbert", ["NEGATIVE", "POSITIVE"], None,
     "gelu"),
    ("bert_tanh_single", "bert_uncased", "bert", ["benign", "offensive", "hateful"],
     "single_label_classification", "gelu_new"),
]
HIDDEN, LAYERS, HEADS, INTERMEDIATE = 32, 2, 4, 52
MAX_TOKENS = 40  # max_position_embeddings of BERT/DistilBERT; RoBERTa/XLM-R add 2


# ---------------------------------------------------------------- weights


def random_weights(arch, vocab, labels, rng):
    """name -> float32 array, in the parameter layout transformers saves."""
    def w(*shape, scale=0.25):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def ln(prefix, out):
        out[prefix + ".weight"] = (1 + rng.standard_normal(HIDDEN) * 0.1).astype(np.float32)
        out[prefix + ".bias"] = w(HIDDEN, scale=0.05)

    def linear(prefix, n_out, n_in, out):
        out[prefix + ".weight"] = w(n_out, n_in, scale=1 / math.sqrt(n_in))
        out[prefix + ".bias"] = w(n_out, scale=0.05)

    t = {}
    n = len(labels)
    if arch == "distilbert":
        p = "distilbert."
        t[p + "embeddings.word_embeddings.weight"] = w(vocab, HIDDEN)
        t[p + "embeddings.position_embeddings.weight"] = w(MAX_TOKENS, HIDDEN)
        ln(p + "embeddings.LayerNorm", t)
        for i in range(LAYERS):
            q = f"{p}transformer.layer.{i}."
            for name in ("q_lin", "k_lin", "v_lin", "out_lin"):
                linear(q + "attention." + name, HIDDEN, HIDDEN, t)
            ln(q + "sa_layer_norm", t)
            linear(q + "ffn.lin1", INTERMEDIATE, HIDDEN, t)
            linear(q + "ffn.lin2", HIDDEN, INTERMEDIATE, t)
            ln(q + "output_layer_norm", t)
        linear("pre_classifier", HIDDEN, HIDDEN, t)
        linear("classifier", n, HIDDEN, t)
        return t
    p = "bert." if arch == "bert" else "roberta."
    positions = MAX_TOKENS if arch == "bert" else MAX_TOKENS + 2
    t[p + "embeddings.word_embeddings.weight"] = w(vocab, HIDDEN)
    t[p + "embeddings.position_embeddings.weight"] = w(positions, HIDDEN)
    t[p + "embeddings.token_type_embeddings.weight"] = w(2 if arch == "bert" else 1, HIDDEN)
    ln(p + "embeddings.LayerNorm", t)
    for i in range(LAYERS):
        q = f"{p}encoder.layer.{i}."
        for name in ("query", "key", "value"):
            linear(q + "attention.self." + name, HIDDEN, HIDDEN, t)
        linear(q + "attention.output.dense", HIDDEN, HIDDEN, t)
        ln(q + "attention.output.LayerNorm", t)
        linear(q + "intermediate.dense", INTERMEDIATE, HIDDEN, t)
        linear(q + "output.dense", HIDDEN, INTERMEDIATE, t)
        ln(q + "output.LayerNorm", t)
    if arch == "bert":
        linear(p + "pooler.dense", HIDDEN, HIDDEN, t)
        linear("classifier", n, HIDDEN, t)
    else:
        linear("classifier.dense", HIDDEN, HIDDEN, t)
        linear("classifier.out_proj", n, HIDDEN, t)
    return t


def config_json(arch, vocab, labels, problem_type, act, pad_id):
    id2label = {str(i): l for i, l in enumerate(labels)}
    label2id = {l: i for i, l in enumerate(labels)}
    if arch == "distilbert":
        c = {"architectures": ["DistilBertForSequenceClassification"], "model_type": "distilbert",
             "dim": HIDDEN, "n_layers": LAYERS, "n_heads": HEADS, "hidden_dim": INTERMEDIATE,
             "activation": act, "max_position_embeddings": MAX_TOKENS, "vocab_size": vocab,
             "pad_token_id": pad_id, "sinusoidal_pos_embds": False, "dropout": 0.1,
             "attention_dropout": 0.1, "seq_classif_dropout": 0.2}
    else:
        name = {"bert": "BertForSequenceClassification",
                "roberta": "RobertaForSequenceClassification",
                "xlm-roberta": "XLMRobertaForSequenceClassification"}[arch]
        c = {"architectures": [name], "model_type": arch, "hidden_size": HIDDEN,
             "num_hidden_layers": LAYERS, "num_attention_heads": HEADS,
             "intermediate_size": INTERMEDIATE, "hidden_act": act,
             "max_position_embeddings": MAX_TOKENS if arch == "bert" else MAX_TOKENS + 2,
             "type_vocab_size": 2 if arch == "bert" else 1,
             "layer_norm_eps": 1e-12 if arch == "bert" else 1e-5, "vocab_size": vocab,
             "pad_token_id": pad_id, "hidden_dropout_prob": 0.1,
             "attention_probs_dropout_prob": 0.1, "position_embedding_type": "absolute"}
    c["id2label"] = id2label
    c["label2id"] = label2id
    if problem_type:
        c["problem_type"] = problem_type
    return c


# ---------------------------------------------------------------- reference forward


def activation(name, x):
    if name == "gelu":
        return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))
    if name == "gelu_new":
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    raise ValueError(name)


def layer_norm(x, weight, bias, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * weight + bias


def attention(x, q, k, v):
    """Multi-head self-attention of one unpadded sequence (n, HIDDEN)."""
    n = x.shape[0]
    d = HIDDEN // HEADS

    def heads(y):
        return y.view(n, HEADS, d).transpose(0, 1)  # (HEADS, n, d)

    scores = heads(q) @ heads(k).transpose(1, 2) / math.sqrt(d)
    probs = torch.softmax(scores, dim=-1)
    return (probs @ heads(v)).transpose(0, 1).reshape(n, HIDDEN)


def forward(arch, t, ids, act, pad_id):
    """Logits (float64) of one text's ids, following transformers' modules."""
    def lin(name, x):
        return x @ t[name + ".weight"].T + t[name + ".bias"]

    ids = torch.tensor(ids)
    n = len(ids)
    if arch == "distilbert":
        p = "distilbert."
        x = t[p + "embeddings.word_embeddings.weight"][ids] + \
            t[p + "embeddings.position_embeddings.weight"][:n]
        x = layer_norm(x, t[p + "embeddings.LayerNorm.weight"], t[p + "embeddings.LayerNorm.bias"],
                       1e-12)
        for i in range(LAYERS):
            q = f"{p}transformer.layer.{i}."
            a = attention(x, lin(q + "attention.q_lin", x), lin(q + "attention.k_lin", x),
                          lin(q + "attention.v_lin", x))
            x = layer_norm(lin(q + "attention.out_lin", a) + x, t[q + "sa_layer_norm.weight"],
                           t[q + "sa_layer_norm.bias"], 1e-12)
            f = lin(q + "ffn.lin2", activation(act, lin(q + "ffn.lin1", x)))
            x = layer_norm(f + x, t[q + "output_layer_norm.weight"],
                           t[q + "output_layer_norm.bias"], 1e-12)
        h = torch.relu(lin("pre_classifier", x[0]))
        return lin("classifier", h)
    p = "bert." if arch == "bert" else "roberta."
    eps = 1e-12 if arch == "bert" else 1e-5
    if arch == "bert":
        positions = torch.arange(n)
    else:  # create_position_ids_from_input_ids: padding_idx + 1 onwards for real tokens
        mask = (ids != pad_id).long()
        positions = torch.cumsum(mask, 0) * mask + pad_id
    x = t[p + "embeddings.word_embeddings.weight"][ids] + \
        t[p + "embeddings.position_embeddings.weight"][positions] + \
        t[p + "embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, t[p + "embeddings.LayerNorm.weight"], t[p + "embeddings.LayerNorm.bias"], eps)
    for i in range(LAYERS):
        q = f"{p}encoder.layer.{i}."
        a = attention(x, lin(q + "attention.self.query", x), lin(q + "attention.self.key", x),
                      lin(q + "attention.self.value", x))
        x = layer_norm(lin(q + "attention.output.dense", a) + x,
                       t[q + "attention.output.LayerNorm.weight"],
                       t[q + "attention.output.LayerNorm.bias"], eps)
        f = lin(q + "output.dense", activation(act, lin(q + "intermediate.dense", x)))
        x = layer_norm(f + x, t[q + "output.LayerNorm.weight"], t[q + "output.LayerNorm.bias"], eps)
    if arch == "bert":
        pooled = torch.tanh(lin(p + "pooler.dense", x[0]))
        return lin("classifier", pooled)
    h = torch.tanh(lin("classifier.dense", x[0]))
    return lin("classifier.out_proj", h)


# ---------------------------------------------------------------- tokenization


def reference_tokenizer(folder):
    """(content_ids function, first special ids, last special ids, pad id) from tokenizer.json."""
    with open(os.path.join(folder, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    model = tok["model"]
    if model["type"] == "WordPiece":
        lower = tok["normalizer"]["lowercase"]
        vocab = model["vocab"]
        ref = refs.BertFast(vocab, lower)
        return ref.content_ids, [vocab["[CLS]"]], [vocab["[SEP]"]], vocab["[PAD]"]
    if model["type"] == "BPE":
        vocab = model["vocab"]
        merges = [tuple(m.split(" ")) for m in model["merges"]]
        ref = refs.RobertaFast(vocab, merges)
        return ref.content_ids, [vocab["<s>"]], [vocab["</s>"]], vocab["<pad>"]
    norm = tok["normalizer"]
    steps = norm["normalizers"] if norm["type"] == "Sequence" else [norm]
    blob = next(s for s in steps if s["type"] == "Precompiled")["precompiled_charsmap"]
    ref = unigram_fast(tok, refs.Charsmap(base64.b64decode(blob)))
    return ref.content_ids, [0], [2], 1


def texts():
    """Hostile and ordinary texts: the tokenizer fixtures' hostile set, plus sentences of
    the length LVLM answers have, and texts longer than the model (truncated)."""
    with open(os.path.join(ROOT, "tests", "fixtures", "text", "expected_ids.json"),
              encoding="utf-8") as f:
        all_texts = json.load(f)["texts"]
    chosen = [t for t in all_texts if not t["name"].startswith("random_")][:60]
    chosen += [t for t in all_texts if t["name"].startswith("random_")][:20]
    extra = [
        ("toxic_like", "You are a worthless idiot and everyone hates you."),
        ("benign", "The weather is lovely today, and the garden is in bloom."),
        ("answer_like", "The person in the image appears to be a doctor wearing a white coat "
                        "and a stethoscope, standing in a hospital corridor."),
        ("long_words", "x" * 300 + " " + "y" * 150),
        ("repeated", "hello " * 400),
    ]
    chosen += [{"name": n, "text": s} for n, s in extra]
    seen, out = set(), []
    for t in chosen:
        if t["name"] not in seen and len(t["text"]) <= 12000:
            seen.add(t["name"])
            out.append(t)
    return out


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    rng = np.random.default_rng(20261125)
    cases = texts()
    expected = {"generator": "tools/make_classifier_fixtures.py", "torch": torch.__version__,
                "texts": cases, "cases": {}}
    for name, tok_name, arch, labels, problem_type, act in CASES:
        src = os.path.join(TEXT_MODELS, tok_name)
        dst = os.path.join(OUT, name)
        os.makedirs(dst)
        for f in os.listdir(src):
            # The legacy SentencePiece model (600 KB) stays in tests/fixtures/text: the
            # classifier reads tokenizer.json when present.
            if f not in ("config.json", "sentencepiece.bpe.model"):
                shutil.copy(os.path.join(src, f), os.path.join(dst, f))
        content_ids, first, last, pad_id = reference_tokenizer(src)
        with open(os.path.join(src, "config.json"), encoding="utf-8") as f:
            vocab = json.load(f)["vocab_size"]
        weights = random_weights(arch, vocab, labels, rng)
        write_safetensors(os.path.join(dst, "model.safetensors"), weights)
        with open(os.path.join(dst, "config.json"), "w", encoding="utf-8") as f:
            json.dump(config_json(arch, vocab, labels, problem_type, act, pad_id), f, indent=1)
        t64 = {k: torch.tensor(v, dtype=torch.float64) for k, v in weights.items()}
        limit = MAX_TOKENS - len(first) - len(last)
        rows, truncated = [], 0
        for case in cases:
            content = content_ids(case["text"])
            if len(content) > limit:
                truncated += 1
                content = content[:limit]
            ids = first + list(content) + last
            with torch.no_grad():
                logits = forward(arch, t64, ids, act, pad_id)
            if problem_type == "multi_label_classification":
                probs = torch.sigmoid(logits)
            else:
                probs = torch.softmax(logits, -1)
            rows.append({"ids": ids, "logits": logits.tolist(), "probabilities": probs.tolist()})
        expected["cases"][name] = {"architecture": arch, "labels": labels,
                                   "problem_type": problem_type, "hidden_act": act,
                                   "truncated": truncated, "rows": rows}
        print(f"{name}: {len(rows)} texts, {truncated} truncated", flush=True)
    with open(os.path.join(OUT, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, ensure_ascii=True, separators=(",", ":"))
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(OUT) for f in fs)
    print(f"wrote {OUT}: {total} bytes")


if __name__ == "__main__":
    main()
