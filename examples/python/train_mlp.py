#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Trains Fashion-MNIST's 784-256-10 MLP from a Python loop: the data is read and batched with
NumPy, the model, its loss and the Adam step are defined in Lisp and called once per batch.

    PYTHONPATH=build/python python3 examples/python/train_mlp.py [--epochs N] [--limit N] [--device cpu]

Prints the loss as it trains and the test accuracy after each epoch (about 86% after 3 epochs).
"""
import argparse
import gzip
import os
import sys
import time

import numpy as np

import tensorlisp

MODEL = r"""
(require 'nn)
(require 'optim)

(defmodel mlp (in hidden out)
  ((fc1 (nn:linear in hidden))
   (fc2 (nn:linear hidden out)))
  (x) (fc2 (relu (fc1 x))))

(defun make-trainer (seed)
  "A model, an Adam optimizer and a captured training step: (funcall step x y) is the loss."
  (manual-seed seed)
  (let* ((model (mlp 784 256 10))
         (opt (optim:adam (parameters model) :lr 1e-3)))
    (train! model)
    (list model
          (jit (lambda (x y)
                 (let ((l (nn:cross-entropy (funcall model x) y)))
                   (optim:zero-grad! opt)
                   (step! opt (backward l))))))))

(defun accuracy (model x y) (nn:accuracy model x y))
"""


def read_idx(path):
    """An IDX file (MNIST's format, gzip-compressed) as a NumPy array."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load(directory, limit):
    def images(name):
        x = read_idx(os.path.join(directory, name)).reshape(-1, 784)
        return (x[:limit] if limit else x).astype(np.float32) / 255.0

    def labels(name):
        y = read_idx(os.path.join(directory, name)).astype(np.int32)
        return y[:limit] if limit else y

    return (images("train-images-idx3-ubyte.gz"), labels("train-labels-idx1-ubyte.gz"),
            images("t10k-images-idx3-ubyte.gz"), labels("t10k-labels-idx1-ubyte.gz"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--limit", type=int, default=0, help="use only the first N images of each set")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--device", default=None, help="cpu (default), ref, cuda, ...")
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    args = parser.parse_args()

    if not os.path.isdir(args.data):
        sys.exit("Fashion-MNIST not found in %s (Debian: apt install dataset-fashion-mnist)" % args.data)
    train_x, train_y, test_x, test_y = load(args.data, args.limit)
    print("train %s, test %s" % (train_x.shape, test_x.shape))

    with tensorlisp.Interpreter(device=args.device) as tl:
        tl.eval(MODEL, file="train_mlp.py")
        model, step = tl.call("make-trainer", 1)
        rng = np.random.default_rng(1)
        n = len(train_x)
        for epoch in range(1, args.epochs + 1):
            start = time.time()
            order = rng.permutation(n)
            for i, first in enumerate(range(0, n, args.batch_size)):
                rows = order[first:first + args.batch_size]
                loss = step(train_x[rows], train_y[rows])  # NumPy batches in, a tensor out
                if i % 100 == 0:
                    print("epoch %d  %5d/%d  loss %.4f" % (epoch, first, n, loss.numpy()), flush=True)
            accuracy = tl.call("accuracy", model, test_x, test_y)
            print("epoch %d: %.1f s, test accuracy %.2f%%" % (epoch, time.time() - start, 100 * accuracy),
                  flush=True)


if __name__ == "__main__":
    main()
