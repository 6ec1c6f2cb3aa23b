# SPDX-License-Identifier: Apache-2.0
# Issue 27's complex tensors and Fourier transforms against PyTorch (Debian's python3-torch;
# skipped without it), values and gradients in f64 (c128). A complex array crosses as its
# parts, a real array with a last axis (real, imaginary): view-as-complex on the way in,
# view-as-real on the way out, as torch.view_as_complex and torch.view_as_real. Gradients are
# of sum(f(x) * w) for a random w over the parts, against torch.autograd.
import numpy as np
import pytest

import tensorlisp

torch = pytest.importorskip("torch")

GRADS = """
(defun value-and-grads (f args w)
  ;; F's value at ARGS and the gradients of sum(F(ARGS) * W).
  (let ((g (second (apply (value-and-grad (lambda (&rest xs) (sum (mul (apply f xs) w)))) args))))
    (cons (apply f args) g)))
"""


@pytest.fixture(scope="module", params=["fftw", "generated"])
def tl(request):
    """An interpreter on the CPU whose transforms run FFTW's kernels, or the generated ones
    (the fft-generated optimizer rules, as the GPUs run them)."""
    with tensorlisp.Interpreter(device="cpu") as interp:
        interp.eval(GRADS)
        if request.param == "generated":
            interp.eval("(optimizer-enable 'fft-generated)")
        yield interp


rng = np.random.default_rng(2727)


def parts(*shape):
    """Random complex values as parts: shape + (2,)."""
    return rng.standard_normal(shape + (2,))


def check(tl, lisp_fn, torch_fn, *arrays, atol=1e-9, rtol=1e-7):
    """LISP_FN (a Lisp lambda's text) and TORCH_FN agree on ARRAYS, values and gradients."""
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    ref = torch_fn(*ts)
    w = rng.standard_normal(tuple(ref.shape))
    (ref * torch.tensor(w)).sum().backward()
    got = tl.call("value-and-grads", tl.eval(lisp_fn), [tl.tensor(a) for a in arrays], tl.tensor(w))
    np.testing.assert_allclose(np.asarray(got[0]), ref.detach().numpy(), atol=atol, rtol=rtol)
    for g, t in zip(got[1:], ts):
        np.testing.assert_allclose(np.asarray(g), t.grad.numpy(), atol=atol, rtol=rtol)


def cx(t):
    return torch.view_as_complex(t)


def re(t):
    return torch.view_as_real(t) if t.is_complex() else t


def unary(tl, lisp_name, torch_fn, x, **kw):
    check(tl, f"(lambda (x) (let ((y ({lisp_name} (view-as-complex x)))) (if (complex-p y) (view-as-real y) y)))",
          lambda x: re(torch_fn(cx(x))), x, **kw)


def test_elementwise(tl):
    x = parts(3, 4)
    for name, fn in [("exp", torch.exp), ("log", torch.log), ("sqrt", torch.sqrt), ("abs", torch.abs),
                     ("angle", torch.angle), ("conj", lambda z: z.conj().resolve_conj()), ("sin", torch.sin),
                     ("cos", torch.cos), ("sinh", torch.sinh), ("cosh", torch.cosh), ("tanh", torch.tanh),
                     ("reciprocal", torch.reciprocal), ("sign", torch.sgn),
                     ("real", torch.real), ("imag", torch.imag), ("square", torch.square)]:
        unary(tl, name, fn, x)
    check(tl, "(lambda (a b) (view-as-real (div (view-as-complex a) (view-as-complex b))))",
          lambda a, b: re(cx(a) / cx(b)), parts(5), parts(5))
    check(tl, "(lambda (a b) (view-as-real (mul (view-as-complex a) b)))",
          lambda a, b: re(cx(a) * b), parts(2, 5), rng.standard_normal((5,)))
    check(tl, "(lambda (a) (view-as-real (pow (view-as-complex a) 2.5)))", lambda a: re(cx(a) ** 2.5), parts(6))
    check(tl, "(lambda (a b) (view-as-real (matmul (view-as-complex a) (view-as-complex b))))",
          lambda a, b: re(cx(a) @ cx(b)), parts(2, 3, 4), parts(4, 5))
    check(tl, "(lambda (a) (view-as-real (mean (view-as-complex a) :axis 0)))", lambda a: re(cx(a).mean(0)), parts(4, 3))


@pytest.mark.parametrize("n", [1, 2, 5, 8, 12, 64, 97, 100, 128, 131, 300, 1031, 4096])
def test_fft_lengths(tl, n):
    x = parts(2, n)
    check(tl, "(lambda (x) (view-as-real (fft (view-as-complex x))))", lambda x: re(torch.fft.fft(cx(x))), x,
          atol=1e-8 * max(1, n) ** 0.5)
    check(tl, "(lambda (x) (view-as-real (ifft (view-as-complex x))))", lambda x: re(torch.fft.ifft(cx(x))), x,
          atol=1e-8)


def test_fft_options(tl):
    x = parts(3, 6, 10)
    for norm in ["backward", "ortho", "forward"]:
        check(tl, f"(lambda (x) (view-as-real (fft (view-as-complex x) :axis 1 :norm '{norm})))",
              lambda x: re(torch.fft.fft(cx(x), dim=1, norm=norm)), x)
        check(tl, f"(lambda (x) (view-as-real (ifft (view-as-complex x) :n 7 :norm \"{norm}\")))",
              lambda x: re(torch.fft.ifft(cx(x), n=7, norm=norm)), x)
    check(tl, "(lambda (x) (view-as-real (fft (view-as-complex x) :n 16 :axis 0)))",
          lambda x: re(torch.fft.fft(cx(x), n=16, dim=0)), x)
    check(tl, "(lambda (x) (view-as-real (fft2 (view-as-complex x))))", lambda x: re(torch.fft.fft2(cx(x))), x)
    check(tl, "(lambda (x) (view-as-real (ifft2 (view-as-complex x) :s '(4 12))))",
          lambda x: re(torch.fft.ifft2(cx(x), s=(4, 12))), x)
    check(tl, "(lambda (x) (view-as-real (fftn (view-as-complex x))))", lambda x: re(torch.fft.fftn(cx(x))), x)
    check(tl, "(lambda (x) (view-as-real (ifftn (view-as-complex x) :axes '(0 2))))",
          lambda x: re(torch.fft.ifftn(cx(x), dim=(0, 2))), x)


@pytest.mark.parametrize("n", [1, 2, 7, 16, 30, 257])
def test_real_transforms(tl, n):
    x = rng.standard_normal((3, n))
    check(tl, "(lambda (x) (view-as-real (rfft x)))", lambda x: re(torch.fft.rfft(x)), x)
    check(tl, "(lambda (x) (view-as-real (fft x :norm 'ortho)))", lambda x: re(torch.fft.fft(x, norm="ortho")), x)
    m = n // 2 + 1
    h = parts(3, m)
    check(tl, f"(lambda (h) (irfft (view-as-complex h) :n {n}))", lambda h: torch.fft.irfft(cx(h), n=n), h)
    if m > 1:
        check(tl, "(lambda (h) (irfft (view-as-complex h) :norm 'forward))",
              lambda h: torch.fft.irfft(cx(h), norm="forward"), h)


def test_frequencies_and_shifts(tl):
    for n in [1, 4, 5]:
        np.testing.assert_allclose(np.asarray(tl.eval(f"(fftfreq {n} :d 0.5 :dtype 'f64)")),
                                   torch.fft.fftfreq(n, d=0.5, dtype=torch.float64).numpy())
        np.testing.assert_allclose(np.asarray(tl.eval(f"(rfftfreq {n} :dtype 'f64)")),
                                   torch.fft.rfftfreq(n, dtype=torch.float64).numpy())
    x = rng.standard_normal((4, 5))
    np.testing.assert_array_equal(np.asarray(tl.call("fftshift", tl.tensor(x))), torch.fft.fftshift(torch.tensor(x)).numpy())
    np.testing.assert_array_equal(np.asarray(tl.call("ifftshift", tl.tensor(x))),
                                  torch.fft.ifftshift(torch.tensor(x)).numpy())


@pytest.mark.parametrize("n_fft,hop,win,center,kind", [(16, 4, 16, True, "hann"), (16, 5, 12, True, "hann"),
                                                        (8, 2, 8, False, "hamming"), (15, 3, 15, True, "blackman")])
def test_stft_istft(tl, n_fft, hop, win, center, kind):
    x = rng.standard_normal((2, 90))
    lisp_window = f"({kind}-window {win} :dtype 'f64)"
    kw = f":hop-length {hop} :win-length {win} :window {lisp_window} :center {'t' if center else 'nil'}"
    window = getattr(torch, f"{kind}_window")(win, dtype=torch.float64)
    check(tl, f"(lambda (x) (view-as-real (stft x {n_fft} {kw})))",
          lambda x: re(torch.stft(x, n_fft, hop_length=hop, win_length=win, window=window, center=center,
                                  return_complex=True)), x)
    check(tl, f"(lambda (x) (view-as-real (stft x {n_fft} {kw} :normalized t :onesided :false)))",
          lambda x: re(torch.stft(x, n_fft, hop_length=hop, win_length=win, window=window, center=center,
                                  normalized=True, onesided=False, return_complex=True)), x)
    spec = torch.stft(torch.tensor(x), n_fft, hop_length=hop, win_length=win, window=window, center=center,
                      return_complex=True)
    s = torch.view_as_real(spec).numpy()
    length = 90 if center else None
    lisp_len = f":length {length}" if length else ""
    check(tl, f"(lambda (s) (istft (view-as-complex s) {n_fft} {kw} {lisp_len}))",
          lambda s: torch.istft(cx(s), n_fft, hop_length=hop, win_length=win, window=window, center=center,
                                length=length), s)


def test_istft_uncovered_window(tl):
    # A Hann window without centering leaves the first sample uncovered: PyTorch raises, so do we.
    with pytest.raises(tensorlisp.LispError, match="overlap-add is zero"):
        tl.eval("(istft (stft (randn '(64)) 8 :window (hann-window 8) :center nil) 8 :window (hann-window 8) :center nil)")
