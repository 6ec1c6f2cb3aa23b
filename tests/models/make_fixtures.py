#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Writes the tiny random-weight Hugging Face checkpoints the model tests load (tiny-gpt2,
# sharded f32; tiny-gpt2-f16, one f16 file; tiny-llama, one bf16 file), the same weights as
# GGUF files (gguf/, tiny-llama-q4_0-gguf/: llama.cpp's names, layouts and metadata, f32, f16,
# Q8_0, Q4_0) and malformed GGUF files (gguf/bad-*) into tests/models/, or into OUT_DIR:
# make_fixtures.py [OUT_DIR]. Plain Python, no dependencies; the output is the
# same on every machine (run.sh checks that it matches the committed files).
# Every weight is k/64 times a power of two with |k| < 128, exact in f32, f16 and bf16, so
# the three dtypes hold the same model.
import json
import math
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


# --- GGUF (llama.cpp's format), written by hand from its spec: gguf-py's constants.py ---

GGUF_U32, GGUF_F32, GGUF_BOOL, GGUF_STRING, GGUF_ARRAY = 4, 6, 7, 8, 9
GGML_F32, GGML_F16, GGML_Q4_0, GGML_Q8_0, GGML_Q4_K = 0, 1, 2, 8, 12


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf_value(vtype, value):
    if vtype == GGUF_U32:
        return struct.pack("<I", value)
    if vtype == GGUF_F32:
        return struct.pack("<f", value)
    if vtype == GGUF_BOOL:
        return struct.pack("<B", 1 if value else 0)
    if vtype == GGUF_STRING:
        return gguf_string(value)
    if vtype == GGUF_ARRAY:  # value: (element type, items)
        etype, items = value
        return struct.pack("<IQ", etype, len(items)) + b"".join(gguf_value(etype, v) for v in items)
    raise ValueError(vtype)


def f16(x):
    return struct.unpack("<e", struct.pack("<e", x))[0]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def quantize_q8_0(vals):
    # per 32 values: an f16 scale d = max|x| / 127 and q = round(x / d), half away from zero,
    # in f32 as gguf-py's quants.py does (so the bytes are those llama.cpp's tools write)
    out = b""
    for i in range(0, len(vals), 32):
        block = [f32(x) for x in vals[i:i + 32]]
        d = f32(max(abs(x) for x in block) / 127)
        inv = f32(1 / d) if d else 0.0
        qs = [int(math.floor(abs(f32(x * inv)) + 0.5)) * (1 if x >= 0 else -1) for x in block]
        out += struct.pack("<e32b", d, *qs)
    return out


def quantize_q4_0(vals):
    # per 32 values: d = m / -8 for m the value of largest magnitude, q = min(15, trunc(x / d
    # + 8.5)); byte j holds q[j] in its low nibble and q[j + 16] in its high one
    out = b""
    for i in range(0, len(vals), 32):
        block = [f32(x) for x in vals[i:i + 32]]
        m = max(block, key=abs)
        d = f32(m / -8)
        inv = f32(1 / d) if d else 0.0
        qs = [max(0, min(15, int(f32(x * inv + 8.5)))) for x in block]
        out += struct.pack("<e", d) + bytes(qs[j] | (qs[j + 16] << 4) for j in range(16))
    return out


def gguf_tensor_data(vals, ggml_type):
    if ggml_type == GGML_F32:
        return struct.pack("<%df" % len(vals), *vals)
    if ggml_type == GGML_F16:
        return struct.pack("<%de" % len(vals), *vals)
    if ggml_type == GGML_Q8_0:
        return quantize_q8_0(vals)
    if ggml_type == GGML_Q4_0:
        return quantize_q4_0(vals)
    raise ValueError(ggml_type)


def gguf_bytes(metadata, tensors, alignment=32):
    # metadata: list of (key, value type, value); tensors: list of (name, row-major shape,
    # ggml type, data bytes). Dimensions are stored fastest first (the shape reversed); each
    # tensor's data starts at a multiple of the alignment.
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata))
    for key, vtype, value in metadata:
        out += gguf_string(key) + struct.pack("<I", vtype) + gguf_value(vtype, value)
    offset, blobs = 0, b""
    for name, shape, ggml_type, data in tensors:
        out += gguf_string(name) + struct.pack("<I", len(shape))
        out += b"".join(struct.pack("<Q", d) for d in reversed(shape))
        out += struct.pack("<IQ", ggml_type, offset)
        pad = (-len(data)) % alignment
        blobs += data + b"\0" * pad
        offset += len(data) + pad
    out += b"\0" * ((-len(out)) % alignment)
    return out + blobs


def as_bf16(vals):
    # VALS as encode(..., "BF16") stores them (the high half of each f32, so 1 + k/256 loses
    # its last bit)
    raw = encode(vals, "BF16")
    return list(struct.unpack("<%df" % len(vals), b"".join(b"\0\0" + raw[i:i + 2] for i in range(0, len(raw), 2))))


def permute_rope(vals, shape, heads):
    # llama.cpp's converter (convert_hf_to_gguf.py, LlamaModel.permute) reorders the rows of
    # q_proj and k_proj for its rotary layout: row h*hd + 2*i + j holds row h*hd + j*hd/2 + i
    rows, cols = shape
    half = rows // heads // 2
    out = []
    for h in range(heads):
        for i in range(half):
            for j in range(2):
                r = h * 2 * half + j * half + i
                out += vals[r * cols:(r + 1) * cols]
    return out


def transpose(vals, shape):
    rows, cols = shape
    return [vals[r * cols + c] for c in range(cols) for r in range(rows)], [cols, rows]


# Llama 3.1's rope_scaling with a short original context (as reference.py's LLAMA3_SCALING)
LLAMA3_SCALING = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                  "high_freq_factor": 4.0, "original_max_position_embeddings": 16}


def rope_freqs(config, scaling):
    # What llama.cpp's converter writes as rope_freqs.weight for llama3 rope scaling: per
    # rotary frequency f, the divisor that turns f into Hugging Face's scaled frequency
    dim = config["hidden_size"] // config["num_attention_heads"]
    factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    old = scaling["original_max_position_embeddings"]
    out = []
    for i in range(0, dim, 2):
        wavelen = 2 * math.pi * config["rope_theta"] ** (i / dim)
        if wavelen < old / high:
            out.append(1.0)
        elif wavelen > old / low:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return out


def llama_gguf(quant, alignment=32, tokens=False, scaling=None):
    # tiny-llama's weights under llama.cpp's names, q/k permuted; 2-d weights in QUANT, norms
    # f32; with SCALING (llama3 rope scaling), its rope_freqs.weight as the converter writes it
    c = LLAMA_CONFIG
    heads, kv_heads = c["num_attention_heads"], c["num_key_value_heads"]
    names = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
             "lm_head.weight": "output.weight"}
    per_layer = {"input_layernorm.weight": "attn_norm.weight", "self_attn.q_proj.weight": "attn_q.weight",
                 "self_attn.k_proj.weight": "attn_k.weight", "self_attn.v_proj.weight": "attn_v.weight",
                 "self_attn.o_proj.weight": "attn_output.weight",
                 "post_attention_layernorm.weight": "ffn_norm.weight", "mlp.gate_proj.weight": "ffn_gate.weight",
                 "mlp.up_proj.weight": "ffn_up.weight", "mlp.down_proj.weight": "ffn_down.weight"}
    tensors = []
    if scaling:
        factors = rope_freqs(c, scaling)
        tensors.append(("rope_freqs.weight", [len(factors)], GGML_F32, gguf_tensor_data(factors, GGML_F32)))
    for name, shape, vals in llama_tensors():
        vals = as_bf16(vals)  # the values tiny-llama's bf16 file holds
        parts = name.split(".")
        if parts[1] == "layers":
            rest = ".".join(parts[3:])
            gname = "blk.%s.%s" % (parts[2], per_layer[rest])
            if rest == "self_attn.q_proj.weight":
                vals = permute_rope(vals, shape, heads)
            elif rest == "self_attn.k_proj.weight":
                vals = permute_rope(vals, shape, kv_heads)
        else:
            gname = names[name]
        ggml_type = quant if len(shape) == 2 else GGML_F32
        tensors.append((gname, shape, ggml_type, gguf_tensor_data(vals, ggml_type)))
    metadata = [("general.architecture", GGUF_STRING, "llama"), ("general.name", GGUF_STRING, "tiny-llama")]
    if alignment != 32:
        metadata.append(("general.alignment", GGUF_U32, alignment))
    metadata += [("llama.context_length", GGUF_U32, c["max_position_embeddings"]),
                 ("llama.embedding_length", GGUF_U32, c["hidden_size"]),
                 ("llama.block_count", GGUF_U32, c["num_hidden_layers"]),
                 ("llama.feed_forward_length", GGUF_U32, c["intermediate_size"]),
                 ("llama.rope.dimension_count", GGUF_U32, c["hidden_size"] // heads),
                 ("llama.attention.head_count", GGUF_U32, heads),
                 ("llama.attention.head_count_kv", GGUF_U32, kv_heads),
                 ("llama.attention.layer_norm_rms_epsilon", GGUF_F32, c["rms_norm_eps"]),
                 ("llama.rope.freq_base", GGUF_F32, c["rope_theta"]),
                 ("tokenizer.ggml.add_bos_token", GGUF_BOOL, True)]
    if tokens:  # an array of strings, as real files carry their vocabulary
        metadata.append(("tokenizer.ggml.tokens", GGUF_ARRAY,
                         (GGUF_STRING, ["<%d>" % i for i in range(c["vocab_size"])])))
    return gguf_bytes(metadata, tensors, alignment)


def gpt2_gguf(quant, output=False):
    # tiny-gpt2's weights under llama.cpp's names, Conv1D weights transposed to (out, in);
    # OUTPUT adds output.weight, a copy of token_embd.weight, as llama.cpp's converter does
    c = GPT2_CONFIG
    names = {"wte.weight": "token_embd.weight", "wpe.weight": "position_embd.weight",
             "ln_f.weight": "output_norm.weight", "ln_f.bias": "output_norm.bias"}
    per_layer = {"ln_1": "attn_norm", "attn.c_attn": "attn_qkv", "attn.c_proj": "attn_output",
                 "ln_2": "ffn_norm", "mlp.c_fc": "ffn_up", "mlp.c_proj": "ffn_down"}
    tensors = []
    for name, shape, vals in gpt2_tensors():
        name = name[len("transformer."):]
        parts = name.split(".")
        if name.endswith(".attn.bias"):
            continue  # the causal-mask buffer, which the converter drops
        if parts[0] == "h":
            rest, kind = ".".join(parts[2:-1]), parts[-1]
            gname = "blk.%s.%s.%s" % (parts[1], per_layer[rest], kind)
            if kind == "weight" and len(shape) == 2:
                vals, shape = transpose(vals, shape)
        else:
            gname = names[name]
        ggml_type = quant if len(shape) == 2 else GGML_F32
        data = gguf_tensor_data(vals, ggml_type)
        tensors.append((gname, shape, ggml_type, data))
        if output and gname == "token_embd.weight":
            tensors.append(("output.weight", shape, ggml_type, data))
    metadata = [("general.architecture", GGUF_STRING, "gpt2"), ("general.name", GGUF_STRING, "tiny-gpt2"),
                ("gpt2.context_length", GGUF_U32, c["n_positions"]),
                ("gpt2.embedding_length", GGUF_U32, c["n_embd"]),
                ("gpt2.feed_forward_length", GGUF_U32, 4 * c["n_embd"]),
                ("gpt2.block_count", GGUF_U32, c["n_layer"]),
                ("gpt2.attention.head_count", GGUF_U32, c["n_head"]),
                ("gpt2.attention.layer_norm_epsilon", GGUF_F32, c["layer_norm_epsilon"])]
    return gguf_bytes(metadata, tensors)


def bad_ggufs():
    # Malformed files for the error tests and the fuzzer's seeds: name -> bytes
    one = [("general.architecture", GGUF_STRING, "llama")]
    ok = gguf_bytes(one, [("w", [4, 32], GGML_F32, struct.pack("<128f", *range(128)))])
    header = lambda count, kvs: b"GGUF" + struct.pack("<IQQ", 3, count, kvs)
    info = lambda name, dims, t: gguf_string(name) + struct.pack("<I", len(dims)) + \
        b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", t, 0)
    return {
        "bad-magic.gguf": b"GGML" + ok[4:],
        "bad-version.gguf": b"GGUF" + struct.pack("<I", 1) + ok[8:],
        "truncated-header.gguf": ok[:60],
        "truncated-data.gguf": ok[:-100],
        "huge-count.gguf": header(1 << 62, 0),
        "huge-dims.gguf": header(1, 0) + info("w", [1 << 32, 1 << 32], GGML_F32) + b"\0" * 8,
        "q4_k.gguf": gguf_bytes([], [("blk.0.attn_q.weight", [1, 256], GGML_Q4_K, b"\0" * 144)]),
    }


def write_ggufs():
    files = {"gguf/tiny-llama-f32.gguf": llama_gguf(GGML_F32, tokens=True),
             "gguf/tiny-gpt2-f16.gguf": gpt2_gguf(GGML_F16, output=True),
             "gguf/tiny-gpt2-q8_0.gguf": gpt2_gguf(GGML_Q8_0),
             # a folder holding one .gguf; data aligned to 64 bytes (general.alignment); Llama
             # 3.1's rope scaling as llama.cpp stores it (rope_freqs.weight)
             "tiny-llama-q4_0-gguf/tiny-llama-q4_0.gguf": llama_gguf(GGML_Q4_0, alignment=64,
                                                                    scaling=LLAMA3_SCALING)}
    for name, data in bad_ggufs().items():
        files["gguf/bad/" + name] = data
    for name, data in files.items():
        path = os.path.join(OUT, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


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
    write_ggufs()
    return 0


if __name__ == "__main__":
    sys.exit(main())
