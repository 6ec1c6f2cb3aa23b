;;; SPDX-License-Identifier: Apache-2.0
;;; The profiler (issue 26): with-profile and profile-start/profile-stop record each realize,
;;; new plan, compile or disk-cache load and kernel run; the summary names the stages and the
;;; kernels; the trace is a Chrome trace (Trace Event Format, JSON object form) that json-read
;;; parses, with a host track and a device track, every event complete and nested in time.

(defun stat (k) (getf (jit-stats) k))
(defvar trace-file (format nil "/tmp/tlisp-profile-test-~a.json" (random 1000000000)))
(defvar w (realize (mul (randn '(24 40)) 0.1)))
(defvar x (realize (randn '(12 24))))
(defun forward (x) (softmax (relu (matmul x w)) :axis 1))
(defun field (event key) (gethash key event))
(defun events-of (trace category)
  (remove-if-not (lambda (e) (equal (field e "cat") category)) (coerce (gethash "traceEvents" trace) 'list)))

(deftest with-profile-returns-the-value-and-records-every-kernel
  (let* ((runs-before (stat :kernels-run))
         (made-before (+ (stat :kernels-compiled) (stat :disk-hits)))
         (v (with-profile (:trace trace-file :print nil)
              (realize (forward x))
              (realize (forward (mul x 2.0)))
              'done))
         (runs (- (stat :kernels-run) runs-before))
         (made (- (+ (stat :kernels-compiled) (stat :disk-hits)) made-before))
         (trace (json-read-file trace-file))
         (events (coerce (gethash "traceEvents" trace) 'list)))
    (is (eq v 'done))
    (is (not (profilingp)))
    ;; Metadata names the process and the tracks: the host first, then the device.
    (let ((names (loop for e in events
                       when (equal (field e "name") "thread_name")
                         collect (gethash "name" (field e "args")))))
      (is (equal names '("host" "cpu"))))
    ;; Every other event is complete: a name, a category, start and duration in microseconds.
    (let ((complete (remove-if-not (lambda (e) (equal (field e "ph") "X")) events)))
      (is (every (lambda (e) (and (stringp (field e "name")) (stringp (field e "cat"))
                                  (numberp (field e "ts")) (>= (field e "ts") 0)
                                  (numberp (field e "dur")) (>= (field e "dur") 0)
                                  (eql (field e "pid") 1)))
                 complete)))
    ;; One kernel event per kernel run, on the device's track, with its rates.
    (let ((kernels (events-of trace "kernel")))
      (is (= (length kernels) runs))
      (is (every (lambda (e) (and (eql (field e "tid") 1)
                                  (stringp (gethash "GFLOP/s" (field e "args")))
                                  (stringp (gethash "kernel" (field e "args")))))
                 kernels)))
    ;; Two realizes, each kernel inside one of them in time; kernels compiled or loaded.
    (let ((realizes (events-of trace "realize")))
      (is (= (length realizes) 2))
      (is (every (lambda (k)
                   (some (lambda (r) (and (<= (field r "ts") (+ (field k "ts") 0.01))
                                          (<= (+ (field k "ts") (field k "dur"))
                                              (+ (field r "ts") (field r "dur") 0.01))))
                         realizes))
                 (events-of trace "kernel"))))
    (is (= (+ (length (events-of trace "compile")) (length (events-of trace "load"))) made))
    ;; The whole profiled code is one span.
    (is (= (length (events-of trace "lisp")) 1))))

(deftest the-summary-names-stages-and-kernels
  (profile-start)
  (is (profilingp))
  (realize (forward (add x 1.0)))
  (let ((s (profile-stop)))
    (is (not (profilingp)))
    (is (search "realize" s))
    (is (search "kernels running" s))
    (is (search "by time:" s))
    (is (search "GFLOP/s" s))
    ;; the matmul's kernel is named by its node, dtype and shape
    (is (search "f32 (12 40)" s))))

(deftest a-matmul-counts-its-real-flops
  ;; 2 x 64 x 128 x 96 flops (a multiply and an add per term), whatever the time.
  (let* ((a (realize (randn '(64 128))))
         (b (realize (randn '(128 96)))))
    (with-profile (:trace trace-file :print nil) (realize (matmul a b)))
    (let* ((k (first (events-of (json-read-file trace-file) "kernel")))
           (seconds (* 1e-6 (field k "dur")))
           (gflops (read-from-string (gethash "GFLOP/s" (field k "args")))))
      (is (< (abs (- (* gflops seconds 1e9) (* 2 64 128 96))) (* 0.01 (* 2 64 128 96)))))))

(deftest profiles-nest
  ;; An inner with-profile (or profile-start/stop) inside a running profile records into it and
  ;; stops nothing: the outer profile keeps what ran before, inside and after.
  (let ((runs-before (stat :kernels-run)))
    (with-profile (:trace trace-file :print nil)
      (realize (forward (mul x 3.0)))
      (is (eq (with-profile (:print nil) (realize (forward (mul x 4.0))) 'inner) 'inner))
      (is (profilingp))
      (profile-start)
      (is (search "kernels running" (profile-stop)))
      (is (profilingp))
      (realize (forward (mul x 5.0))))
    (is (not (profilingp)))
    (let ((trace (json-read-file trace-file)))
      (is (= (length (events-of trace "realize")) 3))
      (is (= (length (events-of trace "kernel")) (- (stat :kernels-run) runs-before))))))

(deftest errors
  ;; An error in the body stops the profile and goes on out.
  (is (eq (handler-case (with-profile (:print nil) (error 'type-error "boom")) (type-error (e) 'caught)) 'caught))
  (is (not (profilingp)))
  (is (eq (handler-case (profile-stop) (program-error (e) 'not-running)) 'not-running))
  (profile-start)
  (is (eq (handler-case (profile-stop "/nonexistent-dir/trace.json") (file-error (e) 'cannot-write)) 'cannot-write))
  (is (not (profilingp))))

(unwind-protect (run-tests)
  (when (probe-file trace-file) (delete-file trace-file)))
