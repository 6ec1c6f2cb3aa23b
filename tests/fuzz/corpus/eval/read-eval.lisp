(read-from-string "(1 2 #(3))")
(eval '(+ 1 2))
(eval (read-from-string "(list 'a)"))
