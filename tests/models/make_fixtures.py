#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Writes the tiny random-weight Hugging Face checkpoints the model tests load (tiny-gpt2,
# sharded f32; tiny-gpt2-f16, one f16 file; tiny-llama, one bf16 file) into tests/models/, or
# into OUT_DIR: make_fixtures.py [OUT_DIR]. Plain Python, no dependencies; the output is the
# same on every machine (run.sh checks that it matches the committed files).
# Every weight is k/64 times a power of two with |k| < 128, exact in f32, f16 and bf16, so
# the three dtypes hold the same model.
import json
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else HERE


def values(rng, n, scale, center=0.0):
    out = []
    for _ in range(n):
        k = max(-127, min(127, round(rng.gauss(0.0, 1.0) * 32)))
        out.append(center + k / 64.0 * scale)
    return out


def encode(vals, dtype):
    if dtype == "F32":
        return struct.pack("<%df" % len(vals), *vals)
    if dtype == "F16":
        return struct.pack("<%de" % len(vals), *vals)
    if dtype == "BF16":  # exact: every value has at most 8 significant bits
        raw = struct.pack("<%df" % len(vals), *vals)
        return b"".join(raw[i + 2:i + 4] for i in range(0, len(raw), 4))
    raise ValueError(dtype)


def write_safetensors(path, tensors, dtype):
    # tensors: list of (name, shape, values)
    header, blobs, offset = {}, [], 0
    for name, shape, vals in tensors:
        blob = encode(vals, dtype)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":"))
    text += " " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text.encode())
        for b in blobs:
            f.write(b)


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


GPT2_CONFIG = {
    "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": 256,
    "n_positions": 32, "n_embd": 32, "n_layer": 2, "n_head": 4, "n_inner": None,
    "activation_function": "gelu_new", "layer_norm_epsilon": 1e-05, "bos_token_id": 0,
    "eos_token_id": 0, "torch_dtype": "float32",
}

LLAMA_CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 256,
    "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "hidden_act": "silu",
    "max_position_embeddings": 64, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
    "tie_word_embeddings": False, "attention_bias": False, "bos_token_id": 1,
    "eos_token_id": 2, "torch_dtype": "bfloat16",
}


def gpt2_tensors():
    c = GPT2_CONFIG
    d, v, p, inner = c["n_embd"], c["vocab_size"], c["n_positions"], 4 * c["n_embd"]
    rng = random.Random(2)
    t = [("transformer.wte.weight", [v, d], values(rng, v * d, 0.25)),
         ("transformer.wpe.weight", [p, d], values(rng, p * d, 1.0))]
    for i in range(c["n_layer"]):
        h = "transformer.h.%d." % i
        t += [(h + "ln_1.weight", [d], values(rng, d, 0.25, 1.0)),
              (h + "ln_1.bias", [d], values(rng, d, 0.0625)),
              # the causal-mask buffer old checkpoints carry; loaders ignore it
              (h + "attn.bias", [1, 1, p, p],
               [1.0 if col <= row else 0.0 for row in range(p) for col in range(p)]),
              (h + "attn.c_attn.weight", [d, 3 * d], values(rng, d * 3 * d, 0.25)),
              (h + "attn.c_attn.bias", [3 * d], values(rng, 3 * d, 0.0625)),
              (h + "attn.c_proj.weight", [d, d], values(rng, d * d, 0.125)),
              (h + "attn.c_proj.bias", [d], values(rng, d, 0.0625)),
              (h + "ln_2.weight", [d], values(rng, d, 0.25, 1.0)),
              (h + "ln_2.bias", [d], values(rng, d, 0.0625)),
              (h + "mlp.c_fc.weight", [d, inner], values(rng, d * inner, 0.25)),
              (h + "mlp.c_fc.bias", [inner], values(rng, inner, 0.0625)),
              (h + "mlp.c_proj.weight", [inner, d], values(rng, inner * d, 0.125)),
              (h + "mlp.c_proj.bias", [d], values(rng, d, 0.0625))]
    t += [("transformer.ln_f.weight", [d], values(rng, d, 0.25, 1.0)),
          ("transformer.ln_f.bias", [d], values(rng, d, 0.0625))]
    return t


def llama_tensors():
    c = LLAMA_CONFIG
    d, v, inner = c["hidden_size"], c["vocab_size"], c["intermediate_size"]
    hd = d // c["num_attention_heads"]
    kv = c["num_key_value_heads"] * hd
    rng = random.Random(3)
    t = [("model.embed_tokens.weight", [v, d], values(rng, v * d, 0.5))]
    for i in range(c["num_hidden_layers"]):
        h = "model.layers.%d." % i
        t += [(h + "input_layernorm.weight", [d], values(rng, d, 0.25, 1.0)),
              (h + "self_attn.q_proj.weight", [d, d], values(rng, d * d, 0.5)),
              (h + "self_attn.k_proj.weight", [kv, d], values(rng, kv * d, 0.5)),
              (h + "self_attn.v_proj.weight", [kv, d], values(rng, kv * d, 0.25)),
              (h + "self_attn.o_proj.weight", [d, d], values(rng, d * d, 0.125)),
              (h + "post_attention_layernorm.weight", [d], values(rng, d, 0.25, 1.0)),
              (h + "mlp.gate_proj.weight", [inner, d], values(rng, inner * d, 0.25)),
              (h + "mlp.up_proj.weight", [inner, d], values(rng, inner * d, 0.25)),
              (h + "mlp.down_proj.weight", [d, inner], values(rng, d * inner, 0.125))]
    t += [("model.norm.weight", [d], values(rng, d, 0.25, 1.0)),
          ("lm_head.weight", [v, d], values(rng, v * d, 0.25))]
    return t


def write_dir(name, config, files):
    # files: list of (file name, tensors, dtype); several files make a sharded checkpoint
    out = os.path.join(OUT, name)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    for fname, tensors, dtype in files:
        write_safetensors(os.path.join(out, fname), tensors, dtype)
    if len(files) > 1:
        index = {"metadata": {"total_size": sum(4 * numel(s) for fs in files for _, s, _ in fs[1])},
                 "weight_map": {n: fname for fname, ts, _ in files for n, _, _ in ts}}
        with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
            json.dump(index, f, indent=2)
            f.write("\n")


def byte_level_tokenizer():
    # A Hugging Face tokenizer.json for tiny-gpt2 and tiny-llama: GPT-2's byte-level BPE with only the 256
    # byte tokens (ids in GPT-2's order, no merges), enough for examples/generate.lisp.
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\u00a1"), ord("\u00ac") + 1)) + \
        list(range(ord("\u00ae"), ord("\u00ff") + 1))
    cs = bs[:]
    for b in range(256):
        if b not in bs:  # the bytes GPT-2 remaps become 256, 257, ... in byte order
            bs.append(b)
            cs.append(256 + len(cs) - 188)
    vocab = {chr(c): i for i, c in enumerate(cs)}
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
            "normalizer": None,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                              "use_regex": True},
            "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
                               "use_regex": True},
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                        "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None,
                      "continuing_subword_prefix": "", "end_of_word_suffix": "",
                      "fuse_unk": False, "byte_fallback": False, "vocab": vocab, "merges": []}}


def write_index(name, weight_map):
    out = os.path.join(OUT, name)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(GPT2_CONFIG, f, indent=2)
        f.write("\n")
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": weight_map}, f, indent=2)
        f.write("\n")


def main():
    g = gpt2_tensors()
    half = len(g) // 2
    write_dir("tiny-gpt2", GPT2_CONFIG,
              [("model-00001-of-00002.safetensors", g[:half], "F32"),
               ("model-00002-of-00002.safetensors", g[half:], "F32")])
    write_dir("tiny-gpt2-f16", dict(GPT2_CONFIG, torch_dtype="float16"),
              [("model.safetensors", [(n[len("transformer."):], s, v) for n, s, v in g], "F16")])
    write_dir("tiny-llama", LLAMA_CONFIG, [("model.safetensors", llama_tensors(), "BF16")])
    for name in ("tiny-gpt2", "tiny-llama"):
        with open(os.path.join(OUT, name, "tokenizer.json"), "w") as f:
            json.dump(byte_level_tokenizer(), f, ensure_ascii=False)
            f.write("\n")
    # Broken sharded checkpoints for the error tests: an index naming a shard that does not
    # exist, and one putting a tensor in a shard (tiny-gpt2's) that does not hold it.
    write_index("bad-index-missing-shard",
                {"transformer.wte.weight": "model-00001-of-00002.safetensors"})
    write_index("bad-index-wrong-shard",
                {"transformer.wte.weight": "../tiny-gpt2/model-00002-of-00002.safetensors"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
