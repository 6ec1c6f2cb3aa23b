# SPDX-License-Identifier: Apache-2.0
# The Fashion-MNIST CNN of examples/fashion-mnist-cnn.lisp in PyTorch (conv 32 3x3, ReLU,
# max-pool 2, conv 64 3x3, ReLU, max-pool 2, linear 10; Adam 1e-3, batch 128; pixels
# standardized as the example does): seconds per epoch and test accuracy.
#   python3 bench/train/cnn_torch.py THREADS [EPOCHS]
import torch

from common import run

run("torch-cnn", lambda: torch.nn.Sequential(
    torch.nn.Conv2d(1, 32, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(32, 64, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Flatten(), torch.nn.Linear(64 * 5 * 5, 10)), (-1, 1, 28, 28), normalize=True)
