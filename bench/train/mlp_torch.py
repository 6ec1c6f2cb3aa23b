# SPDX-License-Identifier: Apache-2.0
# The Fashion-MNIST MLP of examples/fashion-mnist-mlp.lisp in PyTorch (784-256-10, ReLU,
# Adam 1e-3, batch 128): seconds per epoch and test accuracy.
#   python3 bench/train/mlp_torch.py THREADS [EPOCHS]
import torch

from common import run

run("torch-mlp", lambda: torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)),
    (-1, 784))
