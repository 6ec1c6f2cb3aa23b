# SPDX-License-Identifier: Apache-2.0
# The Python module (issue 26): values both ways, arrays in and out without copies, DLPack,
# errors, host functions, interrupts, threads and lifetimes. Run by ctest (python.pytest) with
# PYTHONPATH at the build's python/ folder.
import gc
import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

import tensorlisp
from tensorlisp import Keyword, LispError, Symbol


@pytest.fixture
def tl():
    with tensorlisp.Interpreter() as interp:
        yield interp


def test_scalars_and_lists_both_ways(tl):
    assert tl.eval("(+ 1 2)") == 3
    assert tl.eval("nil") is None
    assert tl.eval("t") is True
    assert tl.eval("1.5") == 1.5
    assert tl.eval('"héllo"') == "héllo"
    assert tl.eval("'(1 (2.5 \"s\") :axis foo)") == [1, [2.5, "s"], Keyword("axis"), Symbol("foo")]
    tl.eval("(defun echo (x) x)")
    for value in [None, True, 0, -7, 2**62, 1.25, "", "ünïcode", [1, [2, [3]]], Symbol("bar"), Keyword("k")]:
        assert tl.call("echo", value) == value
    assert tl.call("echo", (1, 2)) == [1, 2]  # tuples are lists
    assert tl.call("echo", False) is None  # nil is false and the empty list
    assert tl.call("echo", np.float32(2.5)) == 2.5  # NumPy scalars are numbers
    assert tl.call("echo", np.int64(4)) == 4
    assert tl.eval("(type-of (echo 'x))") == Symbol("symbol")


def test_unconvertible_values_are_clear_errors(tl):
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        tl.call("identity", 2**70)
    with pytest.raises(TypeError, match="cannot pass a dict"):
        tl.call("identity", {"a": 1})
    with pytest.raises(TypeError, match="NumPy dtype complex64 has no TensorLisp dtype"):
        tl.call("identity", np.zeros(3, np.complex64))


def test_opaque_values_go_back(tl):
    table = tl.eval("(let ((h (make-hash-table))) (setf (gethash 'a h) 42) h)")
    assert isinstance(table, tensorlisp.LispObject)
    assert table.lisp_type == "hash-table"
    assert tl.call("gethash", Symbol("a"), table) == 42
    dotted = tl.eval("(cons 1 2)")
    assert str(dotted) == "(1 . 2)"
    assert tl.call("car", dotted) == 1


def test_calls_keywords_functions_and_globals(tl):
    tl.eval("(defun kw (&key (alpha 1) (beta-gamma 2)) (list alpha beta-gamma))")
    assert tl.call("kw", beta_gamma=5) == [1, 5]  # underscores become hyphens
    assert tl.fn.kw(alpha=3) == [3, 2]
    assert tl.fn["kw"]() == [1, 2]
    square = tl.eval("(lambda (x) (* x x))")
    assert isinstance(square, tensorlisp.Function)
    assert square(12) == 144
    assert tl.call("mapcar", square, [1, 2, 3]) == [1, 4, 9]
    tl["*answer*"] = 41
    assert tl.eval("(1+ *answer*)") == 42
    assert tl["*answer*"] == 41
    with pytest.raises(TypeError, match="is no function"):
        tl.function("*answer*")


def test_arrays_in_without_a_copy(tl):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = tl.tensor(a)
    a[1, 2] = 50.0  # the tensor reads the array when it is computed
    assert t.shape == (2, 3) and t.dtype == "f32"
    assert np.array_equal(t.numpy(), a)
    # Every dtype NumPy and TensorLisp share.
    for dt, name in [(np.float64, "f64"), (np.float16, "f16"), (np.int8, "i8"), (np.int16, "i16"),
                     (np.int32, "i32"), (np.int64, "i64"), (np.uint8, "u8"), (np.uint32, "u32"), (np.bool_, "bool")]:
        x = (np.arange(5) % 3).astype(dt)
        t = tl.tensor(x)
        assert t.dtype == name
        assert np.array_equal(np.asarray(t), x) and np.asarray(t).dtype == x.dtype
    # Views that are not row-major, byte-swapped arrays, 0-d arrays: copied, same values.
    m = np.arange(12, dtype=np.float64).reshape(3, 4)
    assert np.array_equal(tl.tensor(m.T).numpy(), m.T)
    assert np.array_equal(tl.tensor(m[:, ::2]).numpy(), m[:, ::2])
    swapped = m.astype(">f8")
    assert np.array_equal(tl.tensor(swapped).numpy(), m)
    assert tl.fn.item(tl.tensor(np.array(3.5))) == 3.5
    assert tl.tensor(np.zeros((0, 4), np.float32)).shape == (0, 4)
    # copy=True takes a copy now.
    c = np.ones(3, np.float32)
    t = tl.tensor(c, copy=True)
    c[:] = 7
    assert np.array_equal(t.numpy(), np.ones(3))
    # dtype= casts in Lisp.
    assert tl.tensor(np.arange(3), dtype="f32").dtype == "f32"
    assert tl.tensor(np.arange(3.0), dtype="bf16").dtype == "bf16"


def test_lisp_never_writes_into_an_array(tl):
    a = np.array([1.0, 2.0, 3.0, 4.0])
    tl["*w*"] = a
    tl.eval("(realize (prim:assign (slice *w* '(0 2)) (tensor '(9.0 9.0) :dtype 'f64)))")
    assert np.array_equal(a, [1, 2, 3, 4])
    assert tl.eval("(to-list *w*)") == [9.0, 9.0, 3.0, 4.0]


def test_tensors_out_without_a_copy(tl):
    t = tl.eval("(realize (mul (arange 6 :dtype 'f32) 2))")
    v1 = np.asarray(t)
    v2 = t.numpy()
    assert np.shares_memory(v1, v2)
    assert not v1.flags.writeable
    with pytest.raises(ValueError):
        v1[0] = 1
    # The view keeps the data alive after the tensor and the interpreter's value are gone.
    del t
    gc.collect()
    tl.eval("(gc)")
    assert np.array_equal(v1, np.arange(6) * 2)


def test_a_view_keeps_its_values_across_an_assign(tl):
    tl.eval("(defvar *p* (realize (tensor '(1.0 2.0 3.0))))")
    view = tl["*p*"].numpy()
    tl.eval("(realize (prim:assign *p* (tensor '(7.0 8.0 9.0))))")  # as an optimizer step does
    tl.eval("(realize (prim:assign (slice *p* '(0 1)) (tensor '(5.0))))")  # in place
    tl.eval("(gc)")
    assert np.array_equal(view, [1, 2, 3])
    assert np.array_equal(tl["*p*"].numpy(), [5, 8, 9])


def test_dlpack(tl):
    t = tl.eval("(realize (reshape (arange 6 :dtype 'i32) '(2 3)))")
    assert t.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(t)
    assert a.dtype == np.int32 and a.shape == (2, 3) and a[1, 2] == 5
    # An unconsumed capsule frees its export.
    cap = t.__dlpack__()
    del cap
    gc.collect()


def test_torch_both_ways(tl):
    torch = pytest.importorskip("torch")
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    y = tl.call("relu", x - 2)
    out = torch.from_dlpack(y)
    assert torch.equal(out, torch.relu(x - 2))
    h = torch.tensor([1.0, 2.0], dtype=torch.bfloat16)
    assert tl.tensor(h.float()).dtype == "f32"
    b = tl.eval("(realize (cast (tensor '(1.5 2.5)) 'bf16))")
    assert torch.from_dlpack(b).dtype == torch.bfloat16


def test_lisp_errors(tl):
    with pytest.raises(LispError) as info:
        tl.eval("(+ 1\n   (car 5))", file="bad.lisp")
    e = info.value
    assert e.type == "type-error"
    assert "car" in e.message
    assert (e.file, e.line, e.column) == ("bad.lisp", 2, 4)
    assert str(e).startswith("bad.lisp:2:4: eval error:")
    assert not e.internal
    with pytest.raises(LispError, match="unbound"):
        tl.eval("no-such-variable")
    with pytest.raises(LispError) as info:
        tl.call("matmul", np.ones((2, 3), np.float32), np.ones((4, 5), np.float32))
    assert "(2 3)" in str(info.value) and "(4 5)" in str(info.value)
    # The interpreter goes on.
    assert tl.eval("(+ 1 1)") == 2


def test_python_functions_from_lisp(tl):
    calls = []

    @tl.define("py-scale")
    def scale(x, factor):
        """(py-scale X FACTOR): X times FACTOR, in Python."""
        calls.append(factor)
        return np.asarray(x) * factor

    out = tl.eval("(py-scale (tensor '(1.0 2.0)) 3)")
    assert np.array_equal(out.numpy(), [3.0, 6.0]) and calls == [3]
    assert "in Python" in tl.eval("(documentation 'py-scale 'function)")

    # A Python exception reaches the caller as itself, through Lisp.
    tl.define("py-fail", lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        tl.eval("(list (py-fail))")
    # Lisp can catch it as an error.
    assert "ZeroDivisionError" in tl.eval('(handler-case (py-fail) (error (e) (format nil "~a" e)))')
    # A Lisp error raised inside Python (a nested call) keeps its condition type.
    tl.define("py-nested", lambda: tl.eval("(car 5)"))
    assert tl.eval("(handler-case (py-nested) (type-error () :caught))") == Keyword("caught")
    with pytest.raises(TypeError):
        tl.define("not-callable", 5)


def test_output_goes_to_python(tl, capsys):
    tl.eval('(format t "out ~a~%" 7)')
    assert capsys.readouterr().out == "out 7\n"

    class Sink:
        def __init__(self):
            self.parts = []

        def write(self, s):
            self.parts.append(s)

    sink = Sink()
    with tensorlisp.Interpreter(output=sink) as other:
        other.eval('(print "x")')
    assert "".join(sink.parts) == '"x"\n'


def test_interrupt_from_another_thread(tl):
    # interrupt() stops a running evaluation (one asked for before it starts is stale), so the
    # other thread asks until the loop has stopped.
    done = threading.Event()

    def interrupter():
        while not done.wait(0.2):
            tl.interrupt()

    thread = threading.Thread(target=interrupter)
    thread.start()
    start = time.time()
    try:
        with pytest.raises(KeyboardInterrupt):
            tl.eval("(loop)")
    finally:
        done.set()
        thread.join()
    assert time.time() - start < 10
    assert tl.eval("(+ 2 2)") == 4


def test_ctrl_c_stops_lisp():
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    with tensorlisp.Interpreter() as tl:
        timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            tl.eval("(loop)")
        assert tl.eval("(+ 2 2)") == 4
        # Python's handler is back.
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_threads():
    # Interpreters on different threads run at once; one interpreter is safe from several.
    results = {}

    def work(name):
        with tensorlisp.Interpreter() as tl:
            tl.eval("(defun fib (n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))")
            results[name] = tl.call("fib", 18)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {0: 2584, 1: 2584, 2: 2584}

    with tensorlisp.Interpreter() as tl:
        tl.eval("(defvar *n* 0)")
        tl.define("py-bump", lambda: 1)

        def bump():
            for _ in range(200):
                tl.eval("(setq *n* (+ *n* (py-bump)))")
                tl.tensor(np.ones(4)).numpy()

        threads = [threading.Thread(target=bump) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert tl["*n*"] == 800


def test_close_and_lifetimes():
    tl = tensorlisp.Interpreter()
    t = tl.eval("(realize (arange 4 :dtype 'f32))")
    fn = tl.eval("(lambda (x) (+ x 1))")
    tl.close()
    assert tl.closed and "closed" in repr(tl)
    with pytest.raises(ValueError, match="closed"):
        tl.eval("1")
    # Values taken out still work: they keep the interpreter alive.
    assert np.array_equal(t.numpy(), [0, 1, 2, 3])
    assert fn(1) == 2
    del t, fn
    gc.collect()


def test_values_of_another_interpreter_are_refused(tl):
    with tensorlisp.Interpreter() as other:
        t = other.eval("(tensor '(1.0))")
        with pytest.raises(ValueError, match="another interpreter"):
            tl.call("relu", t)


def test_devices():
    with tensorlisp.Interpreter(device="ref") as tl:
        assert str(tl.eval("(device)")) == "ref"
        assert np.allclose(tl.fn.softmax(np.array([[1.0, 2.0]], np.float32), axis=1).numpy(),
                           [[0.26894143, 0.7310586]])
    with pytest.raises(LispError):
        tensorlisp.Interpreter(device="no-such-device")


def test_memory_stays_flat(tl):
    # Arrays in, tensors out, host functions: a long loop does not grow.
    tl.define("py-id", lambda x: x)
    x = np.ones((256, 256), np.float32)

    def rss_mib():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    def step():
        y = tl.call("py-id", tl.fn.relu(x))
        return float(np.asarray(y)[0, 0])

    for _ in range(200):
        step()
    gc.collect()
    before = rss_mib()
    for _ in range(1000):
        step()
    gc.collect()
    grown = rss_mib() - before
    assert grown < 16, "memory grew by %.1f MiB over 1000 steps" % grown
