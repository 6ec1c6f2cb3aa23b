# SPDX-License-Identifier: Apache-2.0
# Shared by the PyTorch sides of the training benchmarks: Fashion-MNIST from Debian's
# dataset-fashion-mnist, and an epoch loop (Adam 1e-3, batch 128, cross-entropy) that prints
# "<name> epoch N: S s, test accuracy A%".
import gzip
import sys
import time

import numpy as np
import torch

ROOT = "/usr/share/datasets/fashion-mnist/"


def idx(name):
    with gzip.open(ROOT + name) as f:
        data = f.read()
    rank = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


def load(shape, normalize):
    x = torch.tensor(idx("train-images-idx3-ubyte.gz").reshape(shape), dtype=torch.float32) / 255
    y = torch.tensor(idx("train-labels-idx1-ubyte.gz"), dtype=torch.long)
    tx = torch.tensor(idx("t10k-images-idx3-ubyte.gz").reshape(shape), dtype=torch.float32) / 255
    ty = torch.tensor(idx("t10k-labels-idx1-ubyte.gz"), dtype=torch.long)
    if normalize:
        x, tx = (x - 0.2860) / 0.3530, (tx - 0.2860) / 0.3530
    return x, y, tx, ty


def run(name, make_model, shape, normalize=False):
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    x, y, tx, ty = load(shape, normalize)
    model = make_model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    for epoch in range(epochs):
        t0 = time.perf_counter()
        perm = torch.randperm(x.shape[0])
        for i in range(0, x.shape[0], 128):
            rows = perm[i:i + 128]
            loss = loss_fn(model(x[rows]), y[rows])
            opt.zero_grad()
            loss.backward()
            opt.step()
        dt = time.perf_counter() - t0
        with torch.no_grad():
            right = sum((model(tx[i:i + 1000]).argmax(1) == ty[i:i + 1000]).sum().item()
                        for i in range(0, tx.shape[0], 1000))
        print(f"{name} epoch {epoch + 1}: {dt:.2f} s, test accuracy {100 * right / tx.shape[0]:.2f}%")
