#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Writes a GPT-2 124M-shaped checkpoint with random weights in the Hugging Face layout
# (config.json + model.safetensors, f32; 12 layers, 768 wide, 12 heads, vocab 50257, 1024
# positions) into OUT_DIR, for the benchmarks: make_gpt2.py OUT_DIR [SEED]. Weights are drawn
# as GPT-2 initializes them (normal, std 0.02; LayerNorm scales 1, biases 0). Needs numpy.
import json
import os
import struct
import sys

import numpy as np

CONFIG = {
    "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": 50257,
    "n_positions": 1024, "n_embd": 768, "n_layer": 12, "n_head": 12, "n_inner": None,
    "activation_function": "gelu_new", "layer_norm_epsilon": 1e-05, "bos_token_id": 50256,
    "eos_token_id": 50256, "torch_dtype": "float32",
}


def tensors(rng):
    c = CONFIG
    d, v, p = c["n_embd"], c["vocab_size"], c["n_positions"]

    def normal(*shape):
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float32)

    def ones(n):
        return np.ones(n, np.float32)

    def zeros(n):
        return np.zeros(n, np.float32)

    t = [("wte.weight", normal(v, d)), ("wpe.weight", normal(p, d))]
    for i in range(c["n_layer"]):
        h = "h.%d." % i
        t += [(h + "ln_1.weight", ones(d)), (h + "ln_1.bias", zeros(d)),
              (h + "attn.c_attn.weight", normal(d, 3 * d)), (h + "attn.c_attn.bias", zeros(3 * d)),
              (h + "attn.c_proj.weight", normal(d, d)), (h + "attn.c_proj.bias", zeros(d)),
              (h + "ln_2.weight", ones(d)), (h + "ln_2.bias", zeros(d)),
              (h + "mlp.c_fc.weight", normal(d, 4 * d)), (h + "mlp.c_fc.bias", zeros(4 * d)),
              (h + "mlp.c_proj.weight", normal(4 * d, d)), (h + "mlp.c_proj.bias", zeros(d))]
    t += [("ln_f.weight", ones(d)), ("ln_f.bias", zeros(d))]
    return t


def write_safetensors(path, named):
    header, offset = {}, 0
    for name, a in named:
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    text = json.dumps(header, separators=(",", ":"))
    text += " " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text.encode())
        for _, a in named:
            f.write(np.ascontiguousarray(a, dtype="<f4").tobytes())


def main():
    out = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2)
    write_safetensors(os.path.join(out, "model.safetensors"), tensors(np.random.default_rng(seed)))


if __name__ == "__main__":
    main()
