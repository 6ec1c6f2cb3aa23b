#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# A plain PyTorch GPT-2 (no transformers library) with a KV cache, reading a Hugging Face
# checkpoint folder (config.json + model.safetensors, f32), timed as bench/llm/gpt2.lisp times
# TensorLisp: prefill of PREFILL tokens (one pass filling the cache, logits of the last
# token only) and greedy decode of DECODE tokens after a PROMPT-token prompt, each run once to
# warm up, then the best of 2 (prefill) or 3 (decode) runs; then the first greedy ids and the
# peak resident memory.
#   /usr/bin/python3 bench/llm/torch_ref.py DIR THREADS [PREFILL 512] [PROMPT 16] [DECODE 32]
import json
import math
import os
import resource
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def read_safetensors(path):
    # Each tensor read from the file into its own array (no second copy of the file in memory).
    out = {}
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        for name, info in header.items():
            if name == "__metadata__":
                continue
            a, b = info["data_offsets"]
            f.seek(8 + n + a)
            data = np.fromfile(f, dtype="<f4", count=(b - a) // 4).reshape(info["shape"])
            out[name.removeprefix("transformer.")] = torch.from_numpy(data)
    return out


class GPT2:
    def __init__(self, folder):
        with open(os.path.join(folder, "config.json")) as f:
            self.config = json.load(f)
        self.w = read_safetensors(os.path.join(folder, "model.safetensors"))
        c = self.config
        self.layers, self.heads, self.d = c["n_layer"], c["n_head"], c["n_embd"]
        self.eps = c.get("layer_norm_epsilon", 1e-5)

    def make_cache(self, length):
        hd = self.d // self.heads
        return [(torch.zeros(self.heads, length, hd), torch.zeros(self.heads, length, hd))
                for _ in range(self.layers)]

    def ln(self, x, p):
        return F.layer_norm(x, (self.d,), self.w[p + ".weight"], self.w[p + ".bias"], self.eps)

    def __call__(self, ids, cache, start):
        # ids: (T,) int64 at positions start..start+T-1; returns the last token's logits (vocab).
        w, T, hd = self.w, ids.shape[0], self.d // self.heads
        x = w["wte.weight"][ids] + w["wpe.weight"][start:start + T]
        for i in range(self.layers):
            p = "h.%d." % i
            h = self.ln(x, p + "ln_1")
            qkv = torch.addmm(w[p + "attn.c_attn.bias"], h, w[p + "attn.c_attn.weight"])
            q, k, v = (t.view(T, self.heads, hd).transpose(0, 1) for t in qkv.split(self.d, dim=1))
            kc, vc = cache[i]
            kc[:, start:start + T] = k
            vc[:, start:start + T] = v
            k, v = kc[:, :start + T], vc[:, :start + T]
            scores = (q @ k.transpose(1, 2)) / math.sqrt(hd)
            if T > 1:
                mask = torch.ones(T, start + T, dtype=torch.bool).tril(start)
                scores = scores.masked_fill(~mask, float("-inf"))
            a = (scores.softmax(-1) @ v).transpose(0, 1).reshape(T, self.d)
            x = x + torch.addmm(w[p + "attn.c_proj.bias"], a, w[p + "attn.c_proj.weight"])
            h = self.ln(x, p + "ln_2")
            m = torch.addmm(w[p + "mlp.c_fc.bias"], h, w[p + "mlp.c_fc.weight"])
            m = F.gelu(m, approximate="tanh")
            x = x + torch.addmm(w[p + "mlp.c_proj.bias"], m, w[p + "mlp.c_proj.weight"])
        return self.ln(x[-1:], "ln_f") @ w["wte.weight"].t()


def prompt_ids(n, vocab, run):
    # The same ids bench/llm/gpt2.lisp uses.
    return [(7919 * i + 11 * run) % vocab for i in range(n)]


def generate(model, ids, new):
    # Greedy: prefill, then one decode step per token; returns (ids, prefill s, decode s).
    cache = model.make_cache(len(ids) + new)
    t0 = time.perf_counter()
    nxt = int(model(torch.tensor(ids), cache, 0).argmax())
    t1 = time.perf_counter()
    out = [nxt]
    for pos in range(len(ids), len(ids) + new - 1):
        nxt = int(model(torch.tensor([nxt]), cache, pos).argmax())
        out.append(nxt)
    return out, t1 - t0, time.perf_counter() - t1


def main():
    folder, threads = sys.argv[1], int(sys.argv[2])
    prefill = int(sys.argv[3]) if len(sys.argv) > 3 else 512
    prompt = int(sys.argv[4]) if len(sys.argv) > 4 else 16
    decode = int(sys.argv[5]) if len(sys.argv) > 5 else 32
    torch.set_num_threads(threads)
    with torch.inference_mode():
        model = GPT2(folder)
        vocab = model.config["vocab_size"]
        p_s = d_s = None
        for run in range(3):  # run 0 warms up
            _, s, _ = generate(model, prompt_ids(prefill, vocab, run), 1)
            if run > 0:
                p_s = s if p_s is None else min(p_s, s)
        for run in range(4):
            out, _, s = generate(model, prompt_ids(prompt, vocab, run + 3), decode + 1)
            if run > 0:
                d_s = s if d_s is None else min(d_s, s)
    print(f"torch prefill {prefill} tokens: {p_s:.3f} s, {prefill / p_s:.1f} tokens/s")
    print(f"torch decode {decode} tokens: {1000 * d_s / decode:.2f} ms/token")
    print("torch greedy: " + " ".join(str(i) for i in out[:8]))
    print(f"torch peak rss: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB")


if __name__ == "__main__":
    main()
