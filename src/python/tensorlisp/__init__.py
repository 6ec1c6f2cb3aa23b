# SPDX-License-Identifier: Apache-2.0
"""TensorLisp from Python.

    import numpy as np
    import tensorlisp

    with tensorlisp.Interpreter(device="cpu") as tl:
        tl.eval("(defun layer (x w) (relu (matmul x w)))")
        y = tl.call("layer", np.ones((2, 3), np.float32), np.eye(3, dtype=np.float32))
        print(y.numpy())                          # a read-only view, no copy
        print(tl.fn.softmax(y, axis=1).numpy())   # tl.fn.NAME is the Lisp function NAME
                                                  # (underscores become hyphens)

Values cross without surprises: None is nil, True is t, ints and floats are numbers, str is a
string, lists and tuples are lists, Symbol('x') and Keyword('axis') are 'x and :axis; NumPy
arrays and anything with __dlpack__ or the buffer protocol (PyTorch CPU tensors) become tensors
without a copy; Lisp tensors come back as Tensor (np.asarray(t), t.numpy() and
torch.from_dlpack(t) read them without a copy); other Lisp objects come back as LispObject,
which can be passed back. Keyword arguments become Lisp keywords: tl.call("sum", x, axis=1) is
(sum x :axis 1). Lisp errors raise LispError (with .type, .message, .file, .line, .column);
Ctrl-C stops a running evaluation with KeyboardInterrupt.

Arrays are shared, not copied, like torch.from_numpy: TensorLisp reads an array when it computes
a tensor from it, so change it only once the results you need are computed (or pass a copy:
tl.tensor(a, copy=True)). TensorLisp never writes into an array.
"""
from ._tensorlisp import (  # noqa: F401
    Function,
    Keyword,
    LispError,
    LispObject,
    Symbol,
    Tensor,
    __version__,
)
from ._tensorlisp import Interpreter as _Interpreter

__all__ = ["Interpreter", "LispError", "Symbol", "Keyword", "LispObject", "Function", "Tensor", "__version__"]


class _Functions:
    """tl.fn.NAME: the global Lisp function NAME, underscores read as hyphens."""

    def __init__(self, interpreter):
        self._interpreter = interpreter

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._interpreter.function(name.replace("_", "-"))

    def __getitem__(self, name):
        return self._interpreter.function(name)


class Interpreter(_Interpreter):
    """A TensorLisp interpreter: its own globals, modules and tensors.

    device: "cpu" (the default, or TENSORLISP_DEVICE), "ref", "cuda", ...; prelude: load the Lisp
    and tensor libraries; path: extra directories for require; argv: the value of *argv*;
    output: a file-like object for program output (print, format t), default sys.stdout.

    Use it in a with statement, or call close(), to free it promptly: a Python function it calls
    (define) that refers back to it keeps both alive otherwise.
    """

    def __init__(self, device=None, *, prelude=True, path=(), argv=(), output=None):
        super().__init__(device, prelude, [str(p) for p in path], [str(a) for a in argv], output)

    @property
    def fn(self):
        return _Functions(self)

    def define(self, name, fn=None, doc=None):
        """Defines the Lisp function NAME as the Python callable FN; without FN, a decorator."""
        if fn is None:
            def decorate(f):
                _Interpreter.define(self, name, f, doc)
                return f
            return decorate
        _Interpreter.define(self, name, fn, doc)
        return fn

    def __getitem__(self, name):
        return self.global_value(name)

    def __setitem__(self, name, value):
        self.set_global(name, value)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        if self.closed:
            return "<tensorlisp.Interpreter (closed)>"
        return "<tensorlisp.Interpreter device=%s>" % self.eval("(device)")
