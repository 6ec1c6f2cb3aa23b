;; The surface of the tensor library: every function it promises has a docstring, the numeric
;; builtins that also take tensors say what they do with them, and dtype arguments are checked.

(defparameter *tensor-functions*
  '(;; creation
    tensor zeros ones full arange linspace eye zeros-like ones-like full-like rand randn uniform
    normal randint bernoulli manual-seed rand-like randn-like
    ;; elementwise
    + - * / pow exp log sqrt rsqrt abs sign sin cos tan asin acos atan sinh cosh tanh asinh
    acosh atanh floor ceil round clip maximum minimum < > <= >= = /= lt gt le ge equals ne
    where logical-and logical-or logical-not logical-xor cast add sub mul div neg reciprocal
    square exp2 log2 trunc isnan isinf erf atan2 fmod remainder floor-divide mod rem
    ;; activations
    relu leaky-relu elu selu gelu silu sigmoid softplus mish hardswish
    ;; reductions
    sum mean prod max min amax amin argmax argmin var std logsumexp softmax log-softmax cumsum
    ;; shape and indexing
    reshape permute transpose expand pad slice flip squeeze unsqueeze flatten cat stack vstack
    hstack split chunk repeat tile gather take one-hot triu tril contiguous
    ;; linear algebra
    matmul dot outer einsum
    ;; inspection
    shape dtype numel ndim aref to-list item realize tensorp allclose tensor-equal
    symbolic-shape
    ;; files
    save-npy load-npy save-safetensors load-safetensors safetensors-metadata safetensors-header))

(defparameter *undocumented*
  (remove-if (lambda (f) (stringp (documentation f))) *tensor-functions*))
(format t "undocumented: ~s~%" *undocumented*)

;; Numeric builtins that dispatch on tensors name that in their docs.
(defparameter *polymorphic*
  '(+ - * / < > <= >= = /= mod rem floor round abs min max expt sqrt exp log sin cos tan
    asin acos atan sinh cosh tanh aref))
(format t "without a tensor note: ~s~%"
        (remove-if (lambda (f) (string-contains (documentation f) "On tensors:")) *polymorphic*))
(format t "~a~%" (documentation 'max))
(format t "~a~%" (documentation 'softmax))

;; Bad dtype arguments are dtype-errors from the function the user called.
(deftest dtype-arguments
  (dolist (thunk (list (lambda () (zeros '(2) :dtype 'f128))
                       (lambda () (ones '(2) :dtype 'x))
                       (lambda () (full '(2) 1 :dtype 'x))
                       (lambda () (zeros-like (ones 2) :dtype 'x))
                       (lambda () (arange 3 :dtype 'x))
                       (lambda () (linspace 0 1 3 :dtype 'x))
                       (lambda () (eye 2 :dtype 'x))
                       (lambda () (randint 0 3 '(2) :dtype 'x))
                       (lambda () (bernoulli 0.5 :shp '(2) :dtype 'x))
                       (lambda () (cast (ones 2) 'x))
                       (lambda () (tensor '(1 2) :dtype 'x))
                       ;; random floats need a float dtype
                       (lambda () (rand '(2) :dtype 'i32))
                       (lambda () (randn '(2) :dtype 'bool))
                       (lambda () (uniform '(2) :dtype 'u8))
                       (lambda () (normal '(2) :dtype 'i64))))
    (is-error dtype-error (funcall thunk)))
  (is-error type-error (eye 2 :foo 3))
  ;; Integer linspace truncates, as NumPy's does.
  (is (equal (to-list (linspace 0 10 5 :dtype 'i32)) '(0 2 5 7 10)))
  (is (equal (to-list (eye 2 3 :dtype 'i32)) '((1 0 0) (0 1 0))))
  ;; rand in a narrow float stays below 1: values are exact multiples of 2^-11 (f16), 2^-8 (bf16).
  (let ((h (rand '(20000) :dtype 'f16))
        (b (rand '(20000) :dtype 'bf16)))
    (is (< (item (amax h)) 1.0))
    (is (< (item (amax b)) 1.0))
    (is (>= (item (amin h)) 0.0))
    (is (equal (item (sum (ne (mul (cast h 'f32) 2048.0) (floor (mul (cast h 'f32) 2048.0))))) 0))
    (is (equal (item (sum (ne (mul (cast b 'f32) 256.0) (floor (mul (cast b 'f32) 256.0))))) 0))
    (is (< (abs (- (item (mean (cast h 'f32))) 0.5)) 0.02))))

(run-tests)
