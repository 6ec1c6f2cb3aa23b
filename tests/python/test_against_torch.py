# SPDX-License-Identifier: Apache-2.0
# Issue 27's ops against PyTorch (Debian's python3-torch; skipped without it), values and
# gradients in f64: the linalg module, conv3d and the transposed convolutions in 1-d and 3-d,
# pooling in 1-d and 3-d, adaptive pools whose output size does not divide the input.
# Gradients are of sum(f(x) * w) for a random w, from value-and-grad against torch.autograd.
import numpy as np
import pytest

import tensorlisp
from tensorlisp import Symbol

torch = pytest.importorskip("torch")

GRADS = """
(require 'linalg)
(defun value-and-grads (f args w)
  ;; F's value at ARGS and the gradients of sum(F(ARGS) * W).
  (let ((g (second (apply (value-and-grad (lambda (&rest xs) (sum (mul (apply f xs) w)))) args))))
    (cons (apply f args) g)))
"""


@pytest.fixture(scope="module")
def tl():
    with tensorlisp.Interpreter(device="cpu") as interp:
        interp.eval(GRADS)
        yield interp


rng = np.random.default_rng(27)


def check(tl, lisp_fn, torch_fn, *arrays, atol=1e-9):
    """LISP_FN (a Lisp lambda's text) and TORCH_FN agree on ARRAYS, values and gradients."""
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    ref = torch_fn(*ts)
    w = rng.standard_normal(tuple(ref.shape))
    (ref * torch.tensor(w)).sum().backward()
    got = tl.call("value-and-grads", tl.eval(lisp_fn), [tl.tensor(a) for a in arrays], tl.tensor(w))
    np.testing.assert_allclose(np.asarray(got[0]), ref.detach().numpy(), atol=atol, rtol=1e-7)
    for g, t in zip(got[1:], ts):
        np.testing.assert_allclose(np.asarray(g), t.grad.numpy(), atol=atol, rtol=1e-6)


def spd(n, batch=()):
    x = rng.standard_normal(batch + (n, n))
    return x @ np.swapaxes(x, -1, -2) + n * np.eye(n)


def test_solve_inv_det(tl):
    a = rng.standard_normal((2, 4, 4)) + 3 * np.eye(4)
    b = rng.standard_normal((2, 4, 3))
    check(tl, "(lambda (a b) (linalg:solve a b))", torch.linalg.solve, a, b)
    check(tl, "(lambda (a) (linalg:inv a))", torch.linalg.inv, a)
    check(tl, "(lambda (a) (linalg:det a))", torch.linalg.det, a)
    check(tl, "(lambda (a) (second (linalg:slogdet a)))", lambda a: torch.linalg.slogdet(a)[1], a)


def test_cholesky(tl):
    sym = "(lambda (a) (linalg:cholesky (mul (add a (transpose a)) 0.5)))"
    check(tl, sym, lambda a: torch.linalg.cholesky((a + a.mT) / 2), spd(5, (3,)))


def test_qr_eigh_svd(tl):
    a = rng.standard_normal((5, 3))
    # Q and R are unique once R's diagonal is positive; LAPACK and PyTorch agree on the sign
    # convention (both are Householder QR), so compare them directly.
    check(tl, "(lambda (a) (first (linalg:qr a)))", lambda a: torch.linalg.qr(a)[0], a)
    check(tl, "(lambda (a) (second (linalg:qr a)))", lambda a: torch.linalg.qr(a)[1], a)
    s = spd(4)
    check(tl, "(lambda (a) (first (linalg:eigh (mul (add a (transpose a)) 0.5))))",
          lambda a: torch.linalg.eigh((a + a.mT) / 2)[0], s)
    # Eigen- and singular vectors are defined up to sign: compare squares.
    check(tl, "(lambda (a) (let ((v (second (linalg:eigh (mul (add a (transpose a)) 0.5))))) (mul v v)))",
          lambda a: torch.linalg.eigh((a + a.mT) / 2)[1] ** 2, s)
    check(tl, "(lambda (a) (linalg:svdvals a))", torch.linalg.svdvals, a)
    check(tl, "(lambda (a) (let ((u (first (linalg:svd a :full-matrices nil)))) (mul u u)))",
          lambda a: torch.linalg.svd(a, full_matrices=False)[0] ** 2, a)
    check(tl, "(lambda (a) (linalg:pinv a))", torch.linalg.pinv, a)
    check(tl, "(lambda (a b) (linalg:lstsq a b))", lambda a, b: torch.linalg.lstsq(a, b).solution,
          a, rng.standard_normal((5, 2)))
    for ord_lisp, ord_torch in (("'fro", "fro"), ("'nuc", "nuc"), ("2", 2), ("1", 1), ("'inf", float("inf"))):
        check(tl, "(lambda (a) (linalg:matrix-norm a :ord %s))" % ord_lisp,
              lambda a, o=ord_torch: torch.linalg.matrix_norm(a, ord=o), a)


def test_singular_matrix_is_a_value_error(tl):
    with pytest.raises(tensorlisp.LispError) as e:
        tl.eval("(realize (linalg:inv (tensor '((1.0 2.0) (2.0 4.0)))))")
    assert e.value.type == "value-error" and "singular" in e.value.message


F = torch.nn.functional


def test_conv3d_and_transposed(tl):
    x = rng.standard_normal((2, 4, 5, 6, 7))
    w = rng.standard_normal((6, 2, 3, 2, 3))
    b = rng.standard_normal(6)
    check(tl, "(lambda (x w b) (conv3d x w :bias b :stride '(1 2 1) :padding '(1 0 1) :dilation '(1 1 2) :groups 2))",
          lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=(1, 0, 1), dilation=(1, 1, 2), groups=2),
          x, w, b)
    x1 = rng.standard_normal((2, 4, 7))
    w1 = rng.standard_normal((4, 3, 3))
    check(tl, "(lambda (x w) (conv-transpose1d x w :stride 2 :padding 1 :output-padding 1))",
          lambda x, w: F.conv_transpose1d(x, w, stride=2, padding=1, output_padding=1), x1, w1)
    x3 = rng.standard_normal((1, 4, 3, 4, 2))
    w3 = rng.standard_normal((4, 1, 2, 3, 2))
    check(tl, "(lambda (x w) (conv-transpose3d x w :stride '(2 1 2) :groups 2))",
          lambda x, w: F.conv_transpose3d(x, w, stride=(2, 1, 2), groups=2), x3, w3)


def test_pools(tl):
    x1 = rng.standard_normal((2, 3, 11))
    check(tl, "(lambda (x) (max-pool1d x 3 :stride 2 :padding 1))",
          lambda x: F.max_pool1d(x, 3, stride=2, padding=1), x1)
    check(tl, "(lambda (x) (avg-pool1d x 4 :stride 3 :padding 2 :count-include-pad nil))",
          lambda x: F.avg_pool1d(x, 4, stride=3, padding=2, count_include_pad=False), x1)
    x3 = rng.standard_normal((1, 2, 5, 6, 7))
    check(tl, "(lambda (x) (max-pool3d x '(2 3 2) :stride '(1 2 2)))",
          lambda x: F.max_pool3d(x, (2, 3, 2), stride=(1, 2, 2)), x3)
    check(tl, "(lambda (x) (avg-pool3d x 2 :padding 1))", lambda x: F.avg_pool3d(x, 2, padding=1), x3)


def test_adaptive_pools_of_any_size(tl):
    x1 = rng.standard_normal((2, 3, 10))
    check(tl, "(lambda (x) (adaptive-avg-pool1d x 4))", lambda x: F.adaptive_avg_pool1d(x, 4), x1)
    check(tl, "(lambda (x) (adaptive-max-pool1d x 3))", lambda x: F.adaptive_max_pool1d(x, 3), x1)
    x2 = rng.standard_normal((2, 3, 10, 9))
    check(tl, "(lambda (x) (adaptive-avg-pool2d x 7))", lambda x: F.adaptive_avg_pool2d(x, 7), x2)
    check(tl, "(lambda (x) (adaptive-max-pool2d x '(4 5)))", lambda x: F.adaptive_max_pool2d(x, (4, 5)), x2)
    x3 = rng.standard_normal((1, 2, 5, 6, 7))
    check(tl, "(lambda (x) (adaptive-avg-pool3d x '(2 4 3)))", lambda x: F.adaptive_avg_pool3d(x, (2, 4, 3)), x3)
    check(tl, "(lambda (x) (adaptive-max-pool3d x 3))", lambda x: F.adaptive_max_pool3d(x, 3), x3)


def test_sparse_matmul_and_coalesce(tl):
    tl.eval("(require 'sparse)")
    idx = np.stack([rng.integers(0, 6, 15), rng.integers(0, 5, 15)])
    vals = rng.standard_normal(15)
    d = rng.standard_normal((5, 3))
    tl.eval("(defvar *idx* nil)")
    tl.call("set", Symbol("*idx*"), tl.tensor(idx))
    check(tl, "(lambda (v d) (sparse:matmul (sparse:coo *idx* v '(6 5)) d))",
          lambda v, d: torch.sparse.mm(torch.sparse_coo_tensor(torch.tensor(idx), v, (6, 5)), d), vals, d)
    got = tl.eval("(sparse:coalesce (sparse:coo *idx* (tensor '(%s) :dtype 'f64) '(6 5)))"
                  % " ".join(repr(float(v)) for v in vals))
    ref = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), (6, 5)).coalesce()
    np.testing.assert_array_equal(np.asarray(tl.call("sparse:indices", got)), ref.indices().numpy())
    np.testing.assert_allclose(np.asarray(tl.call("sparse:values", got)), ref.values().numpy(), rtol=1e-12)


def test_norms_rank_condition_powers(tl):
    a = rng.standard_normal((3, 4))
    check(tl, "(lambda (a) (linalg:vector-norm a :ord 3 :axis 1))",
          lambda a: torch.linalg.vector_norm(a, ord=3, dim=1), a)
    s = spd(4)
    check(tl, "(lambda (a) (linalg:cond a))", torch.linalg.cond, s)
    check(tl, "(lambda (a) (linalg:matrix-power a -2))", lambda a: torch.linalg.matrix_power(a, -2), s)
    low = rng.standard_normal((5, 2)) @ rng.standard_normal((2, 4))
    assert tl.fn.item(tl.call("linalg:matrix-rank", tl.tensor(low))) == int(torch.linalg.matrix_rank(torch.tensor(low)))


def lisp_literal(a):
    """A nested Lisp list of the numbers of array A."""
    if np.ndim(a) == 0:
        return repr(float(a))
    return "(" + " ".join(lisp_literal(v) for v in a) + ")"


@pytest.mark.parametrize("shape,kernel,out", [((2, 3, 11, 9), 3, (5, 4)), ((1, 2, 7, 7), (2, 3), (4, 5)),
                                              ((2, 1, 6, 8), 2, (5, 7))])
def test_fractional_max_pool2d(tl, shape, kernel, out):
    # The pseudo-random window starts fixed by the same samples (width's, then height's).
    x = rng.standard_normal(shape)
    samples = rng.uniform(0, 1, (shape[0], shape[1], 2))
    k = str(kernel) if isinstance(kernel, int) else f"'({kernel[0]} {kernel[1]})"
    lisp = (f"(lambda (x) (fractional-max-pool2d x {k} :output-size '({out[0]} {out[1]})"
            f" :samples (tensor '{lisp_literal(samples)} :dtype 'f64)))")
    check(tl, lisp, lambda x: torch.nn.functional.fractional_max_pool2d(
        x, kernel, output_size=out, _random_samples=torch.tensor(samples)), x)


def test_fractional_max_pool3d(tl):
    x = rng.standard_normal((2, 2, 7, 6, 8))
    samples = rng.uniform(0, 1, (2, 2, 3))
    check(tl, f"(lambda (x) (fractional-max-pool3d x 2 :output-size '(4 3 5) :samples (tensor '{lisp_literal(samples)} :dtype 'f64)))",
          lambda x: torch.nn.functional.fractional_max_pool3d(x, 2, output_size=(4, 3, 5),
                                                              _random_samples=torch.tensor(samples)), x)
