# SPDX-License-Identifier: Apache-2.0
# The Fashion-MNIST CNN of examples/fashion-mnist-cnn.lisp in PyTorch (conv 32 3x3, ReLU,
# max-pool 2, conv 64 3x3, ReLU, max-pool 2, linear 10; Adam 1e-3, batch 128): seconds per
# epoch and test accuracy. Pixels are standardized (mean 0.286, std 0.353), as the example does.
#   python3 bench/train/cnn_torch.py THREADS [EPOCHS]
import gzip
import sys
import time

import numpy as np
import torch

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 1
torch.set_num_threads(threads)
torch.manual_seed(0)
root = "/usr/share/datasets/fashion-mnist/"


def idx(name):
    with gzip.open(root + name) as f:
        data = f.read()
    rank = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


x = torch.tensor(idx("train-images-idx3-ubyte.gz").reshape(-1, 1, 28, 28), dtype=torch.float32) / 255
y = torch.tensor(idx("train-labels-idx1-ubyte.gz"), dtype=torch.long)
tx = torch.tensor(idx("t10k-images-idx3-ubyte.gz").reshape(-1, 1, 28, 28), dtype=torch.float32) / 255
ty = torch.tensor(idx("t10k-labels-idx1-ubyte.gz"), dtype=torch.long)
x = (x - 0.2860) / 0.3530
tx = (tx - 0.2860) / 0.3530
model = torch.nn.Sequential(
    torch.nn.Conv2d(1, 32, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(32, 64, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Flatten(), torch.nn.Linear(64 * 5 * 5, 10))
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
        acc = sum((model(tx[i:i + 1000]).argmax(1) == ty[i:i + 1000]).sum().item()
                  for i in range(0, tx.shape[0], 1000)) / tx.shape[0]
    print(f"torch-cnn epoch {epoch + 1}: {dt:.2f} s, test accuracy {100 * acc:.2f}%")
