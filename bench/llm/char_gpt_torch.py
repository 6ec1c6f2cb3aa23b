#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The model and training step of examples/char-gpt.lisp in PyTorch: token and position
# embeddings, LAYERS pre-LayerNorm blocks (nn.MultiheadAttention with a causal mask, an MLP
# 4x wide with exact GELU), a final LayerNorm and a linear head without bias; AdamW (betas 0.9,
# 0.95, weight decay 0.1), gradient clipping at norm 1, cross-entropy, random windows of the
# fortunes corpus. Prints training tokens/s over STEPS steps after 3 warm-up steps.
#   /usr/bin/python3 bench/llm/char_gpt_torch.py THREADS [STEPS 40] [LAYERS 4] [EMBED 128]
#       [HEADS 4] [CONTEXT 128] [BATCH 16]
import sys
import time

import torch
from torch import nn

FORTUNES = "/usr/share/games/fortunes/"
FILES = ["computers", "cookie", "definitions", "disclaimer", "drugs", "education", "ethnic",
         "food", "fortunes", "goedel", "humorists", "kids", "knghtbrd", "law", "linux",
         "linuxcookie", "literature", "love", "magic", "medicine", "men-women", "miscellaneous",
         "news", "paradoxum", "people", "perl", "pets", "platitudes", "politics", "pratchett",
         "riddles", "science", "songs-poems", "sports", "startrek", "tao", "translate-me",
         "wisdom", "work", "zippy"]  # as examples/char-gpt.lisp


class Block(nn.Module):
    def __init__(self, embed, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(embed)
        self.attention = nn.MultiheadAttention(embed, heads, batch_first=True)
        self.ln_2 = nn.LayerNorm(embed)
        self.fc = nn.Linear(embed, 4 * embed)
        self.proj = nn.Linear(4 * embed, embed)

    def forward(self, x, mask):
        h = self.ln_1(x)
        x = x + self.attention(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.proj(nn.functional.gelu(self.fc(self.ln_2(x))))


class CharGPT(nn.Module):
    def __init__(self, vocab, context, embed, heads, layers):
        super().__init__()
        self.tokens = nn.Embedding(vocab, embed)
        self.positions = nn.Embedding(context, embed)
        self.blocks = nn.ModuleList([Block(embed, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(embed)
        self.head = nn.Linear(embed, vocab, bias=False)

    def forward(self, ids):
        t = ids.shape[1]
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)  # True where attention is not allowed
        x = self.tokens(ids) + self.positions(torch.arange(t))
        for b in self.blocks:
            x = b(x, mask)
        return self.head(self.ln_f(x))


def main():
    args = [int(a) for a in sys.argv[1:]]
    defaults = [1, 40, 4, 128, 4, 128, 16]
    threads, steps, layers, embed, heads, context, batch = (args + defaults[len(args):])[:7]
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    text = "".join(open(FORTUNES + f, encoding="utf-8").read() for f in FILES)
    vocab = sorted(set(text))
    index = {c: i for i, c in enumerate(vocab)}
    data = torch.tensor([index[c] for c in text], dtype=torch.long)
    split = len(data) * 9 // 10
    model = CharGPT(len(vocab), context, embed, heads, layers)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        starts = torch.randint(0, split - context - 1, (batch,))
        x = torch.stack([data[s:s + context] for s in starts])
        y = torch.stack([data[s + 1:s + 1 + context] for s in starts])
        loss = loss_fn(model(x).reshape(-1, len(vocab)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()

    for _ in range(3):
        step()
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step()
    dt = time.perf_counter() - t0
    rate = steps * batch * context / dt
    print(f"torch char-gpt: {steps} steps in {dt:.2f} s, {rate:.0f} tokens/s, loss {loss:.3f}")


if __name__ == "__main__":
    main()
