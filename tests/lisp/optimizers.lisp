;;; SPDX-License-Identifier: Apache-2.0
;;; defoptimizer: every pattern feature, rule sets and switches, errors, loop detection, each
;;; built-in rule (it fires, and results are bit for bit those without rules), and random
;;; graphs computed with and without the rules.

(defun tl (x) (to-list x))
(defun bits (x)
  ;; The elements' bits, so NaN, infinities and -0 compare exactly.
  (to-list (case (dtype x) (f32 (prim:bitcast x 'i32)) (f64 (prim:bitcast x 'i64)) (t x))))
(defun fresh (x) (realize (prim:copy x)))  ; the same data in a new buffer: a new graph node
(defvar *all-sets* '(simplify fold-constants views cse user))

(defun same-without-rules (f &rest inputs)
  ;; (f inputs...) computed with the rules and without give the same bits.
  (let ((off (with-optimizers-disabled (simplify fold-constants views cse user)
               (realize (apply f (mapcar #'fresh inputs)))))
        (on (realize (apply f (mapcar #'fresh inputs)))))
    (equal (bits off) (bits on))))

(defun fires-p (rule f &rest inputs)
  (member rule (optimizers-fired (apply f (mapcar #'fresh inputs)))))

(defmacro check-rule (rule f &rest inputs)
  `(progn (is (fires-p ',rule ,f ,@inputs))
          (is (same-without-rules ,f ,@inputs))))

(defvar x (realize (tensor (list 1.5 -0.0 0.0 +inf+ (- +inf+) +nan+ -3.25 7.0))))
(defvar m (realize (reshape (arange 24 :dtype 'f32) '(2 3 4))))
(defvar k (realize (tensor '(3 -7 0 2147483647 -2147483648) :dtype 'i32)))
(defun c (v like) (prim:const v (dtype like) (shape like)))

;;; --- pattern features ----------------------------------------------------------------------

(deftest pattern-features
  ;; Nested ops and a rule's effect on the compiled kernels.
  (defoptimizer drop-copy "A copy feeding a sum is not needed." (reduce :sum (copy ?x) ?axes)
    => (reduce :sum ?x ?axes))
  (let ((s (prim:reduce :sum (prim:copy (prim:mul m m)) '(2))))
    (is (= (kernel-count s) 1))
    (is (equal (optimizers-fired s) '(drop-copy)))
    (with-optimizers-disabled (drop-copy)
      (is (= (kernel-count (prim:reduce :sum (prim:copy (prim:mul m m)) '(2))) 2))))
  ;; Op arguments: literal axes and kinds must match; a variable binds them.
  (defoptimizer sum-axis-0 (reduce :sum ?x (0)) => (reduce :sum ?x (0)))  ; (declines: same node)
  (defoptimizer max-to-neg-min (reduce :max (neg ?x) ?ax) :when (equal ?ax '(1))
    => (neg (neg (reduce :max (neg ?x) ?ax))))
  (is (null (optimizers-fired (prim:reduce :sum (prim:neg m) '(1)))))
  (is (null (optimizers-fired (prim:reduce :max (prim:neg m) '(2)))))
  (optimizer-disable 'max-to-neg-min)
  ;; Literal constants match by value: (const 0) is 0, 0.0 and -0.0 alike.
  (defoptimizer relu-twice (max (max ?x (const 0)) (const 0)) => (max ?x (const 0)))
  (dolist (zero (list (c 0 k) (c 0 m) (prim:const -0.0 'f32 (shape m))))
    (let ((a (if (eq (dtype zero) 'i32) (fresh k) (fresh m))))
      (is (member 'relu-twice (optimizers-fired (prim:max (prim:max a zero) zero))))))
  ;; Commutative operands match in either order.
  (defoptimizer one-plus (add (const 1) ?x) => (add ?x (const 1)))
  (optimizer-disable 'one-plus)
  (defoptimizer plus-one-twice (add (add ?x (const 1)) (const 1)) => (add ?x (const 2)))
  (is (member 'plus-one-twice (optimizers-fired (prim:add (c 1 m) (prim:add (fresh m) (c 1 m))))))
  (is (same-without-rules (lambda (a) (prim:add (c 1 a) (prim:add a (c 1 a)))) m))
  ;; Repeated variables must be the same node.
  (defoptimizer double (add ?x ?x) => (mul ?x (const 2)))
  (let ((a (fresh m)) (b (fresh m)))
    (is (member 'double (optimizers-fired (prim:add a a))))
    (is (null (optimizers-fired (prim:add a b)))))
  ;; An op variable matches any op of that arity and rebuilds it.
  (defoptimizer pull-neg-through-unary (?f (neg (neg ?x))) => (?f ?x))
  (optimizer-disable 'double-neg)
  (let ((e (prim:sqrt (prim:neg (prim:neg (fresh m))))))
    (is (equal (optimizers-fired e) '(pull-neg-through-unary))))
  (optimizer-enable 'double-neg)
  ;; _ matches anything; a guard can refuse; a Lisp replacement can decline with nil.
  (defoptimizer never (where _ ?a ?b) :when nil => ?a)
  (defoptimizer decline (sqrt ?x) => nil)
  (is (equal (optimizers-fired (prim:sqrt (prim:where (prim:cmplt (fresh m) (c 3 m)) m (fresh m)))) nil))
  (dolist (r '(drop-copy sum-axis-0 relu-twice plus-one-twice double pull-neg-through-unary never decline))
    (optimizer-disable r)))

(deftest sets-switches-and-backends
  (defoptimizer-set mine "Rules of this test.")
  (defoptimizer neg-zero-int (neg (const 0)) :set mine => (const 0))
  (defoptimizer only-ref (exp2 (const 0)) :backend :ref :set mine => (const 1))
  (defoptimizer only-cpu (log2 (const 1)) :backend :cpu :set mine => (const 0))
  (optimizer-disable 'fold-constants)
  (is (equal (optimizers-fired (prim:neg (prim:const 0 'i32 '(2)))) '(neg-zero-int)))
  (is (null (optimizers-fired (prim:exp2 (prim:const 0 'f32 '(2))))))      ; on cpu: not for ref
  (is (equal (optimizers-fired (prim:log2 (prim:const 1 'f32 '(2)))) '(only-cpu)))
  (optimizer-disable 'mine)
  (is (null (optimizers-fired (prim:neg (prim:const 0 'i32 '(2))))))
  (optimizer-enable 'mine)
  (with-optimizers-disabled (neg-zero-int)
    (is (null (optimizers-fired (prim:neg (prim:const 0 'i32 '(2)))))))
  (is (equal (optimizers-fired (prim:neg (prim:const 0 'i32 '(2)))) '(neg-zero-int)))
  (optimizer-enable 'fold-constants)
  (optimizer-disable 'mine)
  ;; Rules are listed with their set and how often they fired.
  (let ((r (find-if (lambda (p) (eq (getf p :name) 'neg-zero-int)) (list-optimizers))))
    (is (eq (getf r :set) 'mine))
    (is (not (getf r :enabled)))
    (is (> (getf r :fired) 0)))
  ;; Everything off, then on.
  (optimizers-enabled nil)
  (is (null (optimizers-fired (prim:neg (prim:neg (fresh m))))))
  (optimizers-enabled t)
  (is (equal (optimizers-fired (prim:neg (prim:neg (fresh m)))) '(double-neg))))

(deftest errors
  (is-error optimizer-error (eval '(defoptimizer bad-op (negate ?x) => ?x)))
  (is-error optimizer-error (eval '(defoptimizer bad-var (neg ?x) => ?y)))
  (is-error optimizer-error (eval '(defoptimizer bad-guard (neg ?x) :when (const-p ?z) => ?x)))
  (is-error optimizer-error (eval '(defoptimizer bad-arity (add ?x) => ?x)))
  (is-error optimizer-error (eval '(defoptimizer bad-arity-2 (neg ?x ?y) => ?x)))
  (is-error optimizer-error (eval '(defoptimizer no-arrow (neg ?x) ?x)))
  (is-error optimizer-error (eval '(defoptimizer bad-head (neg ?x) => (nonesuch ?x))))
  (is-error optimizer-error (optimizer-disable 'no-such-rule))
  ;; A replacement of another shape is refused when it fires, naming the rule; the graph is
  ;; unchanged and computes once the rule is off.
  (defoptimizer wrong-shape (sqrt ?x) => (reduce :sum ?x (0)))
  (let ((e (prim:sqrt (fresh m))))
    (is-error optimizer-error (realize e))
    (is (string-contains (handler-case (realize e) (optimizer-error (e) (condition-message e))) "wrong-shape"))
    (optimizer-disable 'wrong-shape)
    (is (equal (shape (realize e)) '(2 3 4))))
  ;; A rule set that never settles is reported, naming its rules.
  (defoptimizer swap-a (mul ?a ?b) => (mul ?b ?a))
  (let ((msg (handler-case (realize (prim:mul (fresh m) (fresh m)))
               (optimizer-error (e) (condition-message e)))))
    (is (string-contains msg "swap-a"))
    (is (string-contains msg "fixed point")))
  (defoptimizer grow (exp2 ?x) => (exp2 (neg (neg ?x))))
  (optimizer-disable 'double-neg)
  (optimizer-disable 'swap-a)
  (is (string-contains (handler-case (realize (prim:exp2 (fresh m))) (optimizer-error (e) (condition-message e))) "grow"))
  (optimizer-disable 'grow)
  (optimizer-enable 'double-neg)
  (is (equal (shape (realize (prim:exp2 (fresh m)))) '(2 3 4))))

;;; --- built-in rules ------------------------------------------------------------------------

(deftest simplify-rules
  (check-rule mul-one (lambda (a) (prim:mul a (c 1 a))) x)
  (check-rule mul-one (lambda (a) (prim:mul (c 1 a) a)) k)
  (check-rule add-zero (lambda (a) (prim:add a (c 0 a))) k)
  (check-rule add-zero (lambda (a) (prim:add a (prim:const -0.0 'f32 (shape a)))) x)
  (is (not (fires-p 'add-zero (lambda (a) (prim:add a (c 0 a))) x)))   ; -0 + 0 is +0
  (check-rule mul-zero (lambda (a) (prim:mul a (c 0 a))) k)
  (is (not (fires-p 'mul-zero (lambda (a) (prim:mul a (c 0 a))) x)))   ; NaN * 0 is NaN
  (check-rule double-neg (lambda (a) (prim:neg (prim:neg a))) x)
  (check-rule double-neg (lambda (a) (prim:neg (prim:neg a))) k)
  (check-rule double-not (lambda (a) (prim:xor (prim:xor a (c 12345 a)) (c 12345 a))) k)
  (check-rule max-self (lambda (a) (prim:max a a)) x)
  (check-rule and-self (lambda (a) (prim:and a a)) k)
  (check-rule or-self (lambda (a) (prim:or a a)) k)
  (check-rule where-same (lambda (a) (prim:where (prim:cmplt a (c 0 a)) a a)) x)
  (check-rule where-const (lambda (a) (prim:where (prim:const t 'bool (shape a)) a (prim:neg a))) x)
  (check-rule where-const (lambda (a) (prim:where (prim:const nil 'bool (shape a)) a (prim:neg a))) x))

(deftest unsafe-math-rules
  ;; Off by default; when on they fire and agree for ordinary inputs.
  (let ((pos (realize (tensor '(0.5 1.0 3.0 1e10 7.25)))))
    (is (not (fires-p 'double-recip (lambda (a) (prim:recip (prim:recip a))) pos)))
    (optimizer-enable 'unsafe-math)
    (dolist (case (list (cons 'double-recip (lambda (a) (prim:recip (prim:recip a))))
                        (cons 'exp2-log2 (lambda (a) (prim:exp2 (prim:log2 a))))
                        (cons 'log2-exp2 (lambda (a) (prim:log2 (prim:exp2 (prim:recip a)))))))
      (is (fires-p (car case) (cdr case) pos))
      (is (allclose (funcall (cdr case) (fresh pos))
                    (with-optimizers-disabled (unsafe-math) (realize (funcall (cdr case) (fresh pos))))
                    :rtol 1e-6)))
    (optimizer-disable 'unsafe-math)))

(deftest constant-folding
  (check-rule fold-2 (lambda (a) (prim:add a (prim:mul (c 3 a) (c 2.5 a)))) x)
  (check-rule fold-2 (lambda (a) (prim:add a (prim:idiv (c 7 a) (c -2 a)))) k)
  (check-rule fold-1 (lambda (a) (prim:add a (prim:sqrt (c 2 a)))) x)
  (check-rule fold-1 (lambda (a) (prim:add a (prim:cast (prim:const 3.75 'f64 (shape a)) 'f32))) x)
  (with-optimizers-disabled (where-const)
    (check-rule fold-3 (lambda (a) (prim:add a (prim:where (prim:const t 'bool (shape a)) (c 1 a) (c 2 a)))) x))
  ;; Views and exact reductions of constants.
  (check-rule fold-1 (lambda (a) (prim:add a (prim:reshape (prim:const 2 'f32 '(4 2)) '(8)))) x)
  (check-rule fold-1 (lambda (a) (prim:add a (prim:reshape (prim:reduce :max (prim:const 2 'f32 '(8 3)) '(1)) '(8)))) x)
  (check-rule fold-1 (lambda (a) (prim:add a (prim:reshape (prim:reduce :sum (prim:const 0 'f32 '(8 3)) '(1)) '(8)))) x)
  ;; A sum of non-zero copies is not exact in every order: not folded. Padding is not uniform.
  (is (not (fires-p 'fold-1 (lambda (a) (prim:add a (prim:reshape (prim:reduce :sum (prim:const 0.1 'f32 '(8 3)) '(1)) '(8)))) x)))
  (is (not (fires-p 'fold-1 (lambda (a) (prim:add a (prim:pad (prim:const 1 'f32 '(6)) '((1 1))))) x)))
  ;; A whole tree of constants folds to one. (Its exp2 is of an integer, exact everywhere: of
  ;; 1.5 the fold gives the correctly rounded 2^1.5, which a kernel's f32 exp2 matches to
  ;; within an ulp, not bit for bit.)
  (let ((e (prim:add (fresh x) (prim:exp2 (prim:mul (prim:add (c 1 x) (c 2 x)) (c 2 x))))))
    (is (equal (optimizers-fired e) '(fold-2 fold-2 fold-1)))
    (is (same-without-rules (lambda (a) (prim:add a (prim:exp2 (prim:mul (prim:add (c 1 a) (c 2 a)) (c 2 a))))) x))))

(deftest view-rules
  (check-rule reshape-reshape (lambda (a) (prim:reshape (prim:reshape a '(6 4)) '(4 6))) m)
  (check-rule permute-permute (lambda (a) (prim:permute (prim:permute a '(2 0 1)) '(2 0 1))) m)
  (check-rule permute-permute (lambda (a) (prim:permute (prim:permute a '(1 0 2)) '(1 0 2))) m)
  (check-rule reshape-to-source (lambda (a) (prim:reshape (prim:reshape a '(6 4)) '(2 3 4))) m)
  (check-rule expand-expand (lambda (a) (prim:expand (prim:expand (prim:reshape a '(1 1 24)) '(1 3 24)) '(5 3 24))) m)
  (check-rule flip-flip (lambda (a) (prim:flip (prim:flip a '(0 2)) '(0 2))) m)
  (check-rule shrink-shrink (lambda (a) (prim:shrink (prim:shrink a '((0 2) (1 3) (0 4))) '((1 2) (0 1) (1 3)))) m))

(deftest cse-rules
  ;; (a + b) and (b + a) become one node, computed once.
  (let* ((a (fresh m)) (b (fresh m)) (e (prim:mul (prim:add a b) (prim:add b a))))
    (is (member 'commute-canonical (optimizers-fired e)))
    (is (same-without-rules (lambda (p q) (prim:mul (prim:add p q) (prim:add q p))) m (prim:neg m)))))

;;; --- external kernels ----------------------------------------------------------------------

(deftest blas-matmul
  ;; The user's one rule (shipped as use-blas-for-matmul in set blas, off by default).
  (defoptimizer my-blas-matmul
    (reduce :sum (mul (expand ?a) (expand ?b)) ?axes)
    :when (matmul-shaped-p ?a ?b ?axes) :backend :cpu
    => (extern "sgemm" ?a ?b))
  (flet ((check (rule shapes)
           (let* ((a (realize (randn (first shapes)))) (b (realize (randn (second shapes))))
                  (own (with-optimizers-disabled (my-blas-matmul blas) (realize (matmul (fresh a) (fresh b)))))
                  (e (matmul (fresh a) (fresh b))))
             (is (member rule (optimizers-fired e)))
             (is (allclose (realize e) own :atol 1e-4)))))
    (dolist (shapes '(((64 48) (48 80)) ((3 5 7) (3 7 4)) ((2 3 5 7) (2 3 7 4))))
      (check 'my-blas-matmul shapes))
    (optimizer-disable 'my-blas-matmul)
    ;; The shipped rule also takes vectors and size-1 axes (operands that need no expand).
    (optimizer-enable 'blas)
    (dolist (shapes '(((64 48) (48 80)) ((48) (48 80)) ((64 48) (48)) ((1 1) (1 1)) ((2 1 3) (2 3 1))))
      (check 'use-blas-for-matmul shapes)))
  ;; Batch axes that broadcast are not sgemm's shape, nor is f64: the JIT keeps those.
  (is (not (member 'use-blas-for-matmul (optimizers-fired (matmul (realize (randn '(2 3 4))) (realize (randn '(4 5))))))))
  (is (not (member 'use-blas-for-matmul
                   (optimizers-fired (matmul (realize (randn '(3 4) :dtype 'f64)) (realize (randn '(4 5) :dtype 'f64)))))))
  (optimizer-disable 'blas)
  ;; A kernel the backend does not have is a clear error when it would run.
  (is-error device-error (realize (prim:extern "no-such" (list m) 'f32 '(2 3 4)))))

;;; --- seeing it work -----------------------------------------------------------------------

(deftest explain-and-dot
  (explain-optimizers (prim:mul (prim:neg (prim:neg (fresh m))) (c 1 m)))
  (graph->dot (prim:add (fresh m) (c 1 m)) "optimizers-test.dot")
  (is (string-prefix-p "digraph" (read-file "optimizers-test.dot")))
  (delete-file "optimizers-test.dot"))

;;; --- random graphs: rules on and off agree ------------------------------------------------

(defun random-graph (a depth)
  ;; A random expression over input A (f32 (2 3 4)) with constants and views that the
  ;; built-in rules rewrite.
  (let ((r (random 14)))
    (if (= depth 0)
        (case (random 3) (0 a) (1 (c (- (random 7) 3) a)) (t (prim:neg a)))
        (let ((s (random-graph a (- depth 1))))
          (case r
            (0 (prim:neg s))
            (1 (prim:mul s (c 1 a)))
            (2 (prim:add s (random-graph a (- depth 1))))
            (3 (prim:mul (random-graph a (- depth 1)) s))
            (4 (prim:max s s))
            (5 (prim:reshape (prim:reshape s '(6 4)) '(2 3 4)))
            (6 (prim:permute (prim:permute s '(2 0 1)) '(1 2 0)))
            (7 (prim:flip (prim:flip s '(1)) '(1)))
            (8 (prim:where (prim:cmplt s (c 0 a)) s (random-graph a (- depth 1))))
            (9 (prim:exp2 (prim:mul s (c 0.125 a))))
            (10 (prim:add s (prim:const -0.0 'f32 '(2 3 4))))
            (11 (prim:expand (prim:reduce :max s '(1)) '(2 3 4)))
            (12 (prim:add (prim:mul (c 2 a) (c 3 a)) s))
            (t (prim:add s (prim:neg (prim:neg s)))))))))

(deftest random-graphs-agree
  (let ((inputs (realize (prim:add (prim:mul m (c 0.25 m)) (c -2.5 m))))
        (fired 0))
    (dotimes (i 60)
      (let ((seed (+ 1000 i)))
        ;; The same expression twice (from the same random choices) on two copies of the input.
        (random-seed seed)
        (let ((off (with-optimizers-disabled (simplify fold-constants views cse)
                     (realize (random-graph (fresh inputs) 4)))))
          (random-seed seed)
          (let ((e (random-graph (fresh inputs) 4)))
            (setq fired (+ fired (length (optimizers-fired e))))
            (is (equal (bits off) (bits (realize e))))))))
    (is (> fired 60))))

(run-tests)
