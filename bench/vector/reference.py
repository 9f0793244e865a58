"""An independent reference for the local embedder: BERT's forward pass written out in numpy from
the model's safetensors, with its own WordPiece tokenizer (BERT's basic tokenizer: clean, lower
case, strip accents, split punctuation and CJK characters; then greedy longest-match word pieces).
Shares no code with candle or the tokenizers crate. Benchmark-only: never shipped.

    python reference.py MODEL_DIR TEXTS_JSON MAX_SEQ > vectors.json
"""

import json
import struct
import sys
import unicodedata

import numpy as np


def load_safetensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            continue  # buffers such as position_ids; the forward pass uses the F32 weights only
        start, end = info["data_offsets"]
        tensors[name] = np.frombuffer(data[start:end], dtype="<f4").reshape(info["shape"])
    return tensors


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_cjk(cp):
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F
        or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


def basic_tokens(text):
    cleaned = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or (unicodedata.category(ch).startswith("C") and ch not in "\t\n\r"):
            continue
        if ch in " \t\n\r" or unicodedata.category(ch) == "Zs":
            cleaned.append(" ")
        elif is_cjk(cp):
            cleaned.append(f" {ch} ")
        else:
            cleaned.append(ch)
    text = "".join(cleaned).lower()
    text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
    out = []
    for word in text.split():
        current = ""
        for ch in word:
            if is_punctuation(ch):
                if current:
                    out.append(current)
                    current = ""
                out.append(ch)
            else:
                current += ch
        if current:
            out.append(current)
    return out


def wordpiece(word, vocab, unk="[UNK]", max_chars=100):
    if len(word) > max_chars:
        return [unk]
    pieces, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while start < end:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                found = piece
                break
            end -= 1
        if found is None:
            return [unk]
        pieces.append(found)
        start = end
    return pieces


def layer_norm(x, w, b, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def gelu(x):
    # BERT's exact GELU, with erf from the Abramowitz–Stegun 7.1.26 series would lose precision:
    # use math.erf elementwise instead (slow but exact enough for a reference).
    from math import erf, sqrt

    return 0.5 * x * (1.0 + np.vectorize(lambda v: erf(v / sqrt(2.0)))(x))


def embed(t, config, ids):
    h = config["hidden_size"]
    heads = config["num_attention_heads"]
    d = h // heads
    n = len(ids)
    x = (
        t["embeddings.word_embeddings.weight"][ids]
        + t["embeddings.position_embeddings.weight"][:n]
        + t["embeddings.token_type_embeddings.weight"][0]
    )
    x = layer_norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"]).astype(np.float64)
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        lin = lambda v, name: v @ t[p + name + ".weight"].T.astype(np.float64) + t[p + name + ".bias"]
        q = lin(x, "attention.self.query").reshape(n, heads, d).transpose(1, 0, 2)
        k = lin(x, "attention.self.key").reshape(n, heads, d).transpose(1, 0, 2)
        v = lin(x, "attention.self.value").reshape(n, heads, d).transpose(1, 0, 2)
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(d)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        ctx = (scores @ v).transpose(1, 0, 2).reshape(n, h)
        x = layer_norm(lin(ctx, "attention.output.dense") + x, t[p + "attention.output.LayerNorm.weight"], t[p + "attention.output.LayerNorm.bias"])
        inter = gelu(lin(x, "intermediate.dense"))
        x = layer_norm(lin(inter, "output.dense") + x, t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"])
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def main():
    model_dir, texts_path, max_seq = sys.argv[1], sys.argv[2], int(sys.argv[3])
    config = json.load(open(f"{model_dir}/config.json"))
    vocab = json.load(open(f"{model_dir}/tokenizer.json"))["model"]["vocab"]
    tensors = load_safetensors(f"{model_dir}/model.safetensors")
    # Some exports prefix tensor names with the architecture.
    tensors = {k.removeprefix("bert."): v for k, v in tensors.items()}
    texts = json.load(open(texts_path))
    out = []
    for text in texts:
        pieces = [p for w in basic_tokens(text) for p in wordpiece(w, vocab)]
        ids = [vocab["[CLS]"]] + [vocab[p] for p in pieces][: max_seq - 2] + [vocab["[SEP]"]]
        out.append({"tokens": len(ids), "vector": embed(tensors, config, np.array(ids)).tolist()})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
