#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# A plain PyTorch reference of GPT-2 and Llama, written from the Hugging Face conventions
# (not using the transformers library), run on the tiny checkpoints of make_fixtures.py.
# It writes expected.json (logits of a prompt and the greedy continuation), which the Lisp
# tests compare against: python3 reference.py [--check] (--check compares instead of writing).
import json
import math
import os
import struct
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PROMPT = [1, 5, 200, 17, 99, 3, 42, 7]
NEW_TOKENS = 12
# Llama 3.1's rope_scaling, with a short original context so every kind of frequency occurs
LLAMA3_SCALING = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                  "high_freq_factor": 4.0, "original_max_position_embeddings": 16}
# tiny-llama's weights as a Mistral model whose sliding window is shorter than the prompt
MISTRAL = {"model_type": "mistral", "sliding_window": 4}
DTYPE = torch.float64  # the reference computes in f64; the tests hold f32 results to 1e-4


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        chunk = bytearray(data[b:end])
        if e["dtype"] == "F32":
            t = torch.frombuffer(chunk, dtype=torch.float32)
        elif e["dtype"] == "F16":
            t = torch.frombuffer(chunk, dtype=torch.float16)
        elif e["dtype"] == "BF16":
            t = torch.frombuffer(chunk, dtype=torch.bfloat16)
        else:
            raise ValueError(e["dtype"])
        out[name] = t.reshape(e["shape"]).to(DTYPE)
    return out


def read_gguf(path):
    # The tensors of a GGUF file (llama.cpp's format) by name, row-major, Q8_0 and Q4_0
    # dequantized (x = d * q, d the f16 scale of each block of 32), and its metadata
    with open(os.path.join(HERE, path), "rb") as f:
        raw = f.read()
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from("<" + fmt, raw, pos)
        pos += struct.calcsize("<" + fmt)
        return v[0]

    def string():
        nonlocal pos
        n = take("Q")
        pos += n
        return raw[pos - n:pos].decode()

    scalar = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}

    def value(t):
        if t == 8:
            return string()
        if t == 9:
            et, n = take("I"), take("Q")
            return [value(et) for _ in range(n)]
        return take(scalar[t])

    assert take("I") == 0x46554747 and take("I") == 3  # "GGUF", version 3
    n_tensors, n_kv = take("Q"), take("Q")
    meta = {}
    for _ in range(n_kv):
        key = string()
        meta[key] = value(take("I"))
    infos = []
    for _ in range(n_tensors):
        name, n_dims = string(), take("I")
        dims = [take("Q") for _ in range(n_dims)]
        infos.append((name, dims[::-1], take("I"), take("Q")))
    align = meta.get("general.alignment", 32)
    start = pos + (-pos) % align
    out = {}
    for name, shape, ggml_type, offset in infos:
        n = 1
        for d in shape:
            n *= d
        at = start + offset
        if ggml_type == 0:
            vals = list(struct.unpack_from("<%df" % n, raw, at))
        elif ggml_type == 1:
            vals = list(struct.unpack_from("<%de" % n, raw, at))
        elif ggml_type == 8:  # Q8_0: f16 d, 32 signed bytes
            vals = []
            for b in range(n // 32):
                d, *q = struct.unpack_from("<e32b", raw, at + 34 * b)
                vals += [d * x for x in q]
        elif ggml_type == 2:  # Q4_0: f16 d, 16 bytes of two 4-bit q (low: j, high: j + 16)
            vals = []
            for b in range(n // 32):
                d = struct.unpack_from("<e", raw, at + 18 * b)[0]
                qs = raw[at + 18 * b + 2:at + 18 * b + 18]
                vals += [d * ((x & 15) - 8) for x in qs] + [d * ((x >> 4) - 8) for x in qs]
        else:
            raise ValueError(ggml_type)
        out[name] = torch.tensor(vals, dtype=DTYPE).reshape(shape)
    return meta, out


def unpermute(w, heads):
    # undoes convert_hf_to_gguf.py's permute of Llama's q/k rows (for its rotary layout)
    return w.reshape(heads, w.shape[0] // heads // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def gguf_as_hf(path, config):
    # A GGUF file's tensors under the Hugging Face names of CONFIG's model
    _, g = read_gguf(path)
    w = {}
    if config["model_type"] == "gpt2":
        top = {"token_embd": "wte", "position_embd": "wpe", "output_norm": "ln_f", "output": "lm_head"}
        blk = {"attn_norm": "ln_1", "attn_qkv": "attn.c_attn", "attn_output": "attn.c_proj",
               "ffn_norm": "ln_2", "ffn_up": "mlp.c_fc", "ffn_down": "mlp.c_proj"}
    else:
        top = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}
        blk = {"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
               "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj",
               "ffn_norm": "post_attention_layernorm", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
               "ffn_down": "mlp.down_proj"}
    for name, t in g.items():
        parts = name.split(".")
        if parts[0] == "blk":
            base, kind = blk[parts[2]], parts[3]
            if config["model_type"] == "gpt2":
                hf = "h.%s.%s.%s" % (parts[1], base, kind)
                if kind == "weight" and t.dim() == 2:
                    t = t.T  # llama.cpp stores Conv1D weights (out, in)
            else:
                hf = "model.layers.%s.%s.%s" % (parts[1], base, kind)
                if parts[2] == "attn_q":
                    t = unpermute(t, config["num_attention_heads"])
                elif parts[2] == "attn_k":
                    t = unpermute(t, config["num_key_value_heads"])
        elif parts[0] in top:
            hf = top[parts[0]] + "." + parts[1]
        else:
            hf = name  # rope_freqs.weight, for the config
        w[hf] = t
    return w


def load(dirname):
    d = os.path.join(HERE, dirname)
    with open(os.path.join(d, "config.json")) as f:
        config = json.load(f)
    index = os.path.join(d, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    w = {}
    for fname in files:
        w.update(read_safetensors(os.path.join(d, fname)))
    return config, w


def causal_attention(q, k, v, window=None):
    # q (heads T hd), k and v (heads T hd); with WINDOW (Mistral's sliding_window) the query
    # at position i reads the keys at i - window < j <= i, as Hugging Face's sliding mask
    t = q.shape[1]
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    mask = torch.ones(t, t, dtype=torch.bool).tril()
    if window is not None:
        mask = mask & torch.ones(t, t, dtype=torch.bool).triu(1 - window)
    scores = scores.masked_fill(~mask, float("-inf"))
    return scores.softmax(-1) @ v


def gpt2_logits(config, w, ids):
    def g(name):
        return w.get("transformer." + name, w.get(name))

    d, heads, eps = config["n_embd"], config["n_head"], config["layer_norm_epsilon"]
    hd = d // heads
    ids = torch.tensor(ids)
    x = g("wte.weight")[ids] + g("wpe.weight")[: len(ids)]

    def ln(x, p):
        return torch.nn.functional.layer_norm(x, (d,), g(p + ".weight"), g(p + ".bias"), eps)

    def gelu_tanh(x):
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))

    for i in range(config["n_layer"]):
        p = "h.%d." % i
        h = ln(x, p + "ln_1")
        qkv = h @ g(p + "attn.c_attn.weight") + g(p + "attn.c_attn.bias")  # Conv1D: (in, out)
        q, k, v = (t.reshape(len(ids), heads, hd).transpose(0, 1) for t in qkv.split(d, -1))
        a = causal_attention(q, k, v).transpose(0, 1).reshape(len(ids), d)
        x = x + a @ g(p + "attn.c_proj.weight") + g(p + "attn.c_proj.bias")
        h = ln(x, p + "ln_2")
        m = gelu_tanh(h @ g(p + "mlp.c_fc.weight") + g(p + "mlp.c_fc.bias"))
        x = x + m @ g(p + "mlp.c_proj.weight") + g(p + "mlp.c_proj.bias")
    return ln(x, "ln_f") @ g("wte.weight").T


def llama_logits(config, w, ids, tied=False):
    d, heads = config["hidden_size"], config["num_attention_heads"]
    kv_heads = config.get("num_key_value_heads", heads)
    hd = config.get("head_dim", d // heads)
    eps, theta = config["rms_norm_eps"], config["rope_theta"]
    window = config.get("sliding_window") if config.get("model_type") == "mistral" else None
    n = len(ids)

    def rms(x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight

    inv_freq = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=DTYPE) / hd))
    scaling = config.get("rope_scaling")
    if scaling and scaling.get("rope_type", scaling.get("type")) == "llama3":
        # low frequencies divided by factor, high ones kept, a blend in between
        factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
        old = scaling["original_max_position_embeddings"]
        scaled = []
        for f in inv_freq.tolist():
            wavelen = 2 * math.pi / f
            if wavelen < old / high:
                scaled.append(f)
            elif wavelen > old / low:
                scaled.append(f / factor)
            else:
                smooth = (old / wavelen - low) / (high - low)
                scaled.append((1 - smooth) * f / factor + smooth * f)
        inv_freq = torch.tensor(scaled, dtype=DTYPE)
    if "rope_freqs" in config:  # llama.cpp's form of the same: each frequency divided by a factor
        inv_freq = inv_freq / config["rope_freqs"]
    angles = torch.arange(n, dtype=DTYPE)[:, None] * inv_freq[None, :]
    angles = torch.cat([angles, angles], -1)
    cos, sin = angles.cos(), angles.sin()

    def rope(x):  # x (heads T hd), "rotate half"
        x1, x2 = x[..., : hd // 2], x[..., hd // 2:]
        return x * cos + torch.cat([-x2, x1], -1) * sin

    x = w["model.embed_tokens.weight"][torch.tensor(ids)]
    for i in range(config["num_hidden_layers"]):
        p = "model.layers.%d." % i
        h = rms(x, w[p + "input_layernorm.weight"])
        q = (h @ w[p + "self_attn.q_proj.weight"].T).reshape(n, heads, hd).transpose(0, 1)
        k = (h @ w[p + "self_attn.k_proj.weight"].T).reshape(n, kv_heads, hd).transpose(0, 1)
        v = (h @ w[p + "self_attn.v_proj.weight"].T).reshape(n, kv_heads, hd).transpose(0, 1)
        q, k = rope(q), rope(k)
        rep = heads // kv_heads  # repeat_kv: query head j reads key/value head j // rep
        k, v = k.repeat_interleave(rep, 0), v.repeat_interleave(rep, 0)
        a = causal_attention(q, k, v, window).transpose(0, 1).reshape(n, heads * hd)
        x = x + a @ w[p + "self_attn.o_proj.weight"].T
        h = rms(x, w[p + "post_attention_layernorm.weight"])
        gate = h @ w[p + "mlp.gate_proj.weight"].T
        up = h @ w[p + "mlp.up_proj.weight"].T
        x = x + (torch.nn.functional.silu(gate) * up) @ w[p + "mlp.down_proj.weight"].T
    head = w["model.embed_tokens.weight"] if tied else w["lm_head.weight"]
    return rms(x, w["model.norm.weight"]) @ head.T


def greedy(fn, ids, count):
    ids = list(ids)
    for _ in range(count):
        ids.append(int(fn(ids)[-1].argmax()))
    return ids[-count:]


def case(fn):
    return {"prompt": PROMPT,
            "logits": [[round(float(v), 7) for v in row] for row in fn(PROMPT)],
            "greedy": greedy(fn, PROMPT, NEW_TOKENS)}


def main():
    gc, gw = load("tiny-gpt2")
    lc, lw = load("tiny-llama")
    expected = {
        "gpt2": case(lambda ids: gpt2_logits(gc, gw, ids)),
        "llama": case(lambda ids: llama_logits(lc, lw, ids)),
        "llama-tied": case(lambda ids: llama_logits(lc, lw, ids, tied=True)),
        "llama-rope-llama3": case(lambda ids: llama_logits(dict(lc, rope_scaling=LLAMA3_SCALING), lw, ids)),
        # a window of 4 positions, shorter than the prompt and the continuation
        "mistral-sliding-window": case(lambda ids: llama_logits(dict(lc, **MISTRAL), lw, ids)),
    }
    # The f32 and f16 GGUF files hold the safetensors weights exactly (q/k permuted back)
    for gguf, config, weights in (("gguf/tiny-llama-f32.gguf", lc, lw), ("gguf/tiny-gpt2-f16.gguf", gc, gw)):
        gw2 = gguf_as_hf(gguf, config)
        for name, t in gw2.items():
            if name != "lm_head.weight" or config["model_type"] != "gpt2":
                ref = weights.get(name, weights.get("transformer." + name))
                if not torch.equal(t, ref):
                    print("reference: %s holds another %s than the safetensors file" % (gguf, name))
                    return 1
    # The quantized files against their own dequantized weights
    expected["gpt2-gguf-q8_0"] = case(lambda ids: gpt2_logits(gc, gguf_as_hf("gguf/tiny-gpt2-q8_0.gguf", gc), ids))
    # (and Llama 3.1's rope scaling as llama.cpp's rope_freqs.weight)
    lq = gguf_as_hf("tiny-llama-q4_0-gguf/tiny-llama-q4_0.gguf", lc)
    lq_config = dict(lc, rope_freqs=lq.pop("rope_freqs.weight"))
    expected["llama-gguf-q4_0"] = case(lambda ids: llama_logits(lq_config, lq, ids))
    path = os.path.join(HERE, "expected.json")
    if "--check" in sys.argv:
        with open(path) as f:
            old = json.load(f)
        worst = 0.0
        for name, e in expected.items():
            for r1, r2 in zip(e["logits"], old[name]["logits"]):
                worst = max(worst, max(abs(a - b) for a, b in zip(r1, r2)))
            if e["greedy"] != old[name]["greedy"]:
                print("reference: %s greedy continuation differs from expected.json" % name)
                return 1
        print("reference: expected.json matches (max |diff| %.2g)" % worst)
        return 0 if worst <= 1e-6 else 1
    with open(path, "w") as f:
        json.dump(expected, f)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
