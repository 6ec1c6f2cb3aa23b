(list (+ 1 2) (- 5) (* 2 3.5) (/ 7 2) (/ 1 0) (mod -7 3) (expt 2 62) (* most-positive-fixnum 2))
