;;; SPDX-License-Identifier: Apache-2.0
;;; manual: the reference manual, generated from the definitions themselves. (require 'manual)
;;;
;;;   tlisp doc build/manual            ; or (manual:write "build/manual")
;;;
;;; Every global function, macro, builtin and documented variable (names starting with %, *%
;;; or MODULE:% are internal and left out) gets an entry on its module's page: its usage, its
;;; docstring, where it is defined, and its examples with the values they print. An example
;;; is a docstring line indented by two spaces that starts with "(": it is run (a doctest), and
;;; when it ends with "; => TEXT", its value must print as TEXT. The pages cross-link names,
;;; and index.html has every entry and a search box. What (describe 'name) prints comes from
;;; the same definitions.
;;; Examples run in the current folder: one that writes a file writes it under /tmp.

(defvar manual:*modules* '(nn optim data plot hf tokenizers conformance manual aot linalg sparse audio "models/gpt2" "models/llama")
  "The modules whose definitions the manual covers besides those loaded at start-up.
  (and (member 'nn manual:*modules*) t)  ; => t")

(defvar manual:*pages*
  '(("language" "The language" ("lisp/" "src/eval/" "src/reader/") "Special forms aside, the Lisp itself: definitions, control, lists, sequences, strings, numbers, conditions, structures, output.")
    ("tensors" "Tensors" ("stdlib/tensor/0" "stdlib/tensor/1" "stdlib/tensor/2" "stdlib/tensor/3" "stdlib/tensor/4"
                          "stdlib/tensor/5" "stdlib/tensor/6" "stdlib/tensor/7" "stdlib/tensor/8" "stdlib/tensor/90"
                          "src/bindings/" "src/tensor/")
     "Creating tensors, elementwise math, reductions, shapes, linear algebra, convolutions, random numbers, autograd and the prim:* primitives.")
    ("devices" "Devices and the JIT" ("stdlib/tensor/9" "src/api/" "src/runtime/" "src/codegen/" "backends/")
     "Backends, use-backend, realize, jit capture, caches, profiling and the kernels the JIT makes.")
    ("optimizers" "Optimizer rules" ("src/rewrite/" "stdlib/optimizers/") "Graph rewrites: defoptimizer, rule sets, explaining and drawing graphs.")
    ("nn" "nn: layers and losses" ("stdlib/nn.lisp") "(require 'nn): models, layers, losses, training loops, checkpoints.")
    ("optim" "optim: optimizers" ("stdlib/optim.lisp") "(require 'optim): SGD, Adam, AdamW, schedules, gradient clipping.")
    ("data" "data: datasets and batches" ("stdlib/data.lisp") "(require 'data): Fashion-MNIST, batching, progress bars.")
    ("linalg" "linalg and sparse: linear algebra" ("stdlib/linalg.lisp" "stdlib/sparse.lisp" "src/support/lapack")
     "(require 'linalg): solve, inverses, determinants, Cholesky, QR, eigh, SVD and what is built on them; (require 'sparse): sparse COO tensors and sparse-dense products.")
    ("audio" "audio: sound and spectrograms" ("stdlib/audio.lisp")
     "(require 'audio): mel filter banks, spectrograms and decibels, over the core library's stft, istft, windows, load-wav and save-wav.")
    ("models" "Language models and text" ("stdlib/hf.lisp" "stdlib/models/" "stdlib/tokenizers" "src/text/")
     "JSON, tokenizers, Hugging Face checkpoints, GPT-2 and Llama.")
    ("tools" "Tools" ("stdlib/plot.lisp" "stdlib/conformance.lisp" "stdlib/manual.lisp" "stdlib/aot.lisp")
     "Plots, backend conformance reports, compiling ahead of time (tlisp compile), this manual."))
  "The pages: (FILE TITLE SOURCE-PREFIXES BLURB). An entry goes on the first page one of whose
prefixes starts its source file; entries with none go on the language page.
  (mapcar #'first (subseq manual:*pages* 0 3))  ; => (\"language\" \"tensors\" \"devices\")")

(defvar manual:*guides*
  '(("embedding" "Embedding: C, C++ and Python" "embedding.md")
    ("aot" "Compiling ahead of time" "aot.md"))
  "Guide pages made from the Markdown files in docs/: (FILE TITLE MARKDOWN). Their code blocks
are shown, not run (the tests of docs/ run them).
  (mapcar #'first manual:*guides*)  ; => (\"embedding\" \"aot\")")

(defvar manual:*docs-dir*
  (let* ((here (or *load-file* "")) (slash (position #\/ here :from-end t)))
    (concat (if slash (subseq here 0 (+ slash 1)) "") "../docs/"))
  "Where the guides' Markdown files are: docs/ beside the stdlib/ this file was loaded from.
  (stringp manual:*docs-dir*)  ; => t")

(defun manual:%anchor (name)
  "An anchor for NAME made of letters, digits and dashes only (other characters as _XX)."
  (with-output-to-string (out)
    (loop for c across (string-downcase name)
          do (if (or (alpha-char-p c) (digit-char-p c) (char= c #\-))
                 (write-char c out)
                 (format out "_~2,'0x" (char-code c))))))

(defun manual:%page-of (file)
  (or (first (find-if (lambda (p) (and file (some (lambda (prefix) (eql 0 (search prefix file))) (third p))))
                      manual:*pages*))
      "language"))

(defun manual:%example-p (line)
  (and (> (length line) 3) (string= (subseq line 0 3) "  (")))

(defun manual:%continuation-p (line)
  (and (> (length line) 4) (string= (subseq line 0 4) "    ")))

(defun manual:%examples (lines)
  "The examples among docstring LINES: each a line starting \"  (\" and the lines after it
indented further, joined."
  (let ((out nil) (current nil))
    (dolist (line lines)
      (cond ((manual:%example-p line)
             (when current (push current out))
             (setq current line))
            ((and current (manual:%continuation-p line))
             (setq current (concat current (string #\Newline) line)))
            (t (when current (push current out)) (setq current nil))))
    (when current (push current out))
    (reverse out)))

(defun manual:%prose (lines)
  "Docstring LINES without the examples."
  (let ((out nil) (in-example nil))
    (dolist (line lines)
      (cond ((manual:%example-p line) (setq in-example t))
            ((and in-example (manual:%continuation-p line)))
            (t (setq in-example nil) (push line out))))
    (reverse out)))

(defun manual:%split-example (line)
  "An example line as (FORM-TEXT EXPECTED-OR-NIL)."
  (let* ((text (string-trim " " line))
         (arrow (search "; =>" text :from-end t)))
    (if arrow
        (list (string-trim " " (subseq text 0 arrow)) (string-trim " " (subseq text (+ arrow 4))))
        (list text nil))))

(defun manual:%entries ()
  "Every documented global definition: a list of plists (:name :kind :usage :doc :file :line :page)."
  (let ((entries nil))
    (dolist (s (apropos-list ""))
      (let ((name (symbol-name s)))
        (unless (or (eql 0 (search "%" name)) (search ":%" name) (eql 0 (search "*%" name)))
          (let ((d (%definition s)))
            (when (and d (or (not (eq (getf d :kind) 'variable)) (getf d :doc)))
              (push (append (list :name name :page (manual:%page-of (getf d :file))) d) entries))))))
    (sort entries (lambda (a b) (string< (getf a :name) (getf b :name))))))

(defvar manual:*failures* nil "The examples that failed in the last manual:write: (NAME FORM WHY).
  (listp manual:*failures*)  ; => t")

(defun manual:%run-example (name form-text expected)
  "Runs one example; returns (PRINTED OK). A failure is recorded in manual:*failures*."
  (manual-seed 0)
  (when (getenv "TENSORLISP_MANUAL_TRACE") (format t "example of ~a: ~a~%" name form-text))
  (handler-case
      (let* ((form (read-from-string form-text))
             (printed (prin1-to-string (eval form))))
        (if (and expected (not (equal printed expected)))
            (progn (push (list name form-text (format nil "printed ~a, the docstring says ~a" printed expected))
                         manual:*failures*)
                   (list printed nil))
            (list printed t)))
    (error (e)
      (push (list name form-text (format nil "~a" (condition-message e))) manual:*failures*)
      (list (format nil "error: ~a" (condition-message e)) nil))))

(defun manual:%link-names (html names &optional self)
  "HTML with each token that names an entry (and has a -, :, >, ! or * in it, so ordinary words
stay words) linked to that entry."
  (with-output-to-string (out)
    (let ((i 0) (n (length html)))
      (loop while (< i n)
            do (let ((c (char html i)))
                 (if (or (alpha-char-p c) (char= c #\*))
                     (let ((j i))
                       (loop while (and (< j n) (let ((d (char html j)))
                                                  (or (alpha-char-p d) (digit-char-p d)
                                                      (member d '(#\- #\: #\! #\* #\? #\> #\+ #\/)))))
                             do (incf j))
                       ;; a trailing - or : belongs to the text, not the name
                       (loop while (and (> j (+ i 1)) (member (char html (- j 1)) '(#\- #\: #\/))) do (decf j))
                       (when (= j i) (setq j (+ i 1)))  ; never stand still
                       (let* ((token (subseq html i j))
                              (target (and (some (lambda (ch) (find ch token)) "-:!*")
                                           (not (search "&" token))
                                           (not (equal token self))
                                           (gethash token names))))
                         (if target
                             (format out "<a href=\"~a.html#~a\">~a</a>" target (manual:%anchor token) token)
                             (write-string token out))
                         (setq i j)))
                     (progn (write-char c out) (incf i))))))))

(defun manual:%entry-html (e names)
  (let* ((name (getf e :name))
         (doc (manual:%without-usage name (or (getf e :doc) "")))
         (lines (string-split doc (string #\Newline)))
         (prose (manual:%prose lines))
         (examples (mapcar #'manual:%split-example (manual:%examples lines))))
    (with-output-to-string (out)
      (format out "<div class=\"entry\" id=\"~a\">~%" (manual:%anchor name))
      (format out "<h3><a href=\"#~a\"><code>~a</code></a> <span class=\"kind\">~a</span></h3>~%"
              (manual:%anchor name) (xml-escape name) (string-downcase (symbol-name (getf e :kind))))
      (when (getf e :usage)
        (format out "<pre class=\"usage\">~a</pre>~%" (xml-escape (getf e :usage))))
      (if (string= (string-trim " " (or (getf e :doc) "")) "")
          (format out "<p class=\"doc missing\">No documentation.</p>~%")
          (dolist (para (manual:%paragraphs prose))
            (format out "<p class=\"doc\">~a</p>~%" (manual:%link-names (xml-escape para) names name))))
      (dolist (ex examples)
        (let ((r (manual:%run-example name (first ex) (second ex))))
          (format out "<pre class=\"example~a\">~a~%<span class=\"result\">=&gt; ~a</span></pre>~%"
                  (if (second r) "" " failed") (manual:%link-names (xml-escape (first ex)) names name)
                  (xml-escape (first r)))))
      (when (getf e :file)
        (format out "<p class=\"source\">defined at <code>~a:~a</code></p>~%"
                (xml-escape (getf e :file)) (getf e :line)))
      (format out "</div>~%"))))

;;; Markdown, as much of it as docs/ uses: headings, paragraphs, lists, fenced code, tables,
;;; inline code, emphasis and links (to the other guides, to the web; other links become text).

(defun manual:%md-inline (text)
  "TEXT (one paragraph of Markdown) as HTML: `code`, **bold**, [label](target)."
  (with-output-to-string (out)
    (let ((i 0) (n (length text)))
      (loop while (< i n)
            do (let* ((c (char text i)))
                 (cond ((and (char= c #\`) (position #\` text :start (+ i 1)))
                        (let ((j (position #\` text :start (+ i 1))))
                          (format out "<code>~a</code>" (xml-escape (subseq text (+ i 1) j)))
                          (setq i (+ j 1))))
                       ((and (char= c #\*) (< (+ i 1) n) (char= (char text (+ i 1)) #\*)
                             (search "**" text :start2 (+ i 2)))
                        (let ((j (search "**" text :start2 (+ i 2))))
                          (format out "<strong>~a</strong>" (manual:%md-inline (subseq text (+ i 2) j)))
                          (setq i (+ j 2))))
                       ((and (char= c #\[) (search "](" text :start2 i)
                             (position #\) text :start (search "](" text :start2 i)))
                        (let* ((mid (search "](" text :start2 i))
                               (end (position #\) text :start mid))
                               (label (subseq text (+ i 1) mid))
                               (target (subseq text (+ mid 2) end))
                               (guide (find-if (lambda (g) (search (third g) target)) manual:*guides*)))
                          (cond ((or (eql 0 (search "http://" target)) (eql 0 (search "https://" target)))
                                 (format out "<a href=\"~a\">~a</a>" (xml-escape target) (manual:%md-inline label)))
                                (guide (format out "<a href=\"~a.html\">~a</a>" (first guide) (manual:%md-inline label)))
                                (t (write-string (manual:%md-inline label) out)))
                          (setq i (+ end 1))))
                       (t (write-string (xml-escape (string c)) out) (incf i))))))))

(defun manual:%markdown (text)
  "TEXT, a Markdown document, as HTML (its first heading left out: the page has the title)."
  (let ((lines (string-split text (string #\Newline))) (para nil) (items nil) (first-heading t))
    (with-output-to-string (out)
      (labels ((flush ()
                 (when para
                   (format out "<p>~a</p>~%" (manual:%md-inline (string-join (reverse para) " ")))
                   (setq para nil))
                 (when items
                   (format out "<ul>~%~{<li>~a</li>~%~}</ul>~%" (mapcar #'manual:%md-inline (reverse items)))
                   (setq items nil)))
               (cells (line) (mapcar (lambda (c) (string-trim " " c))
                                     (butlast (cdr (string-split line "|"))))))
        (loop while lines
              do (let* ((line (pop lines)) (trimmed (string-trim " " line)))
                   (cond ((eql 0 (search "```" trimmed))
                          (flush)
                          (let ((code nil))
                            (loop while (and lines (not (eql 0 (search "```" (string-trim " " (first lines))))))
                                  do (push (pop lines) code))
                            (pop lines)
                            (format out "<pre>~a</pre>~%" (xml-escape (string-join (reverse code) (string #\Newline))))))
                         ((eql 0 (search "#" trimmed))
                          (flush)
                          (let* ((level (or (position #\# trimmed :test-not #'char=) 1))
                                 (title (string-trim " " (subseq trimmed level))))
                            (if first-heading
                                (setq first-heading nil)
                                (format out "<h~a>~a</h~a>~%" (min 4 (+ level 0)) (manual:%md-inline title) (min 4 (+ level 0))))))
                         ((eql 0 (search "|" trimmed))
                          (flush)
                          (let ((rows (list (cells trimmed))))
                            (loop while (and lines (eql 0 (search "|" (string-trim " " (first lines)))))
                                  do (let ((row (string-trim " " (pop lines))))
                                       (unless (every (lambda (ch) (find ch "|-: ")) row) (push (cells row) rows))))
                            (setq rows (reverse rows))
                            (format out "<table>~%<tr>~{<th>~a</th>~}</tr>~%" (mapcar #'manual:%md-inline (first rows)))
                            (dolist (r (rest rows)) (format out "<tr>~{<td>~a</td>~}</tr>~%" (mapcar #'manual:%md-inline r)))
                            (format out "</table>~%")))
                         ((or (eql 0 (search "- " trimmed)) (eql 0 (search "* " trimmed)))
                          (when para (let ((items0 items)) (setq items nil) (flush) (setq items items0)))
                          (push (subseq trimmed 2) items))
                         ((string= trimmed "") (flush))
                         ((and items (> (length line) 0) (char= (char line 0) #\Space))
                          (setf (first items) (concat (first items) " " trimmed)))
                         (t (when items (flush)) (push trimmed para)))))
        (flush)))))

(defvar manual:*style* "
body { font-family: sans-serif; max-width: 60em; margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.45; }
nav a { margin-right: 1em; } h1 { font-size: 1.6em; } h3 { margin-bottom: .2em; font-size: 1.05em; }
h3 a { color: inherit; text-decoration: none; } .kind { color: #777; font-weight: normal; font-size: .85em; }
table { border-collapse: collapse; } td, th { border: 1px solid #ddd; padding: .2em .5em; text-align: left; vertical-align: top; }
pre { background: #f5f5f5; padding: .5em .7em; overflow-x: auto; } pre.usage { background: #eef3fa; }
.missing { color: #999; } .source { color: #777; font-size: .85em; }
.result { color: #2a6f2a; } pre.failed .result { color: #b00; } .entry { border-top: 1px solid #e5e5e5; padding-top: .3em; }
#search { width: 100%; font-size: 1.1em; padding: .3em; } #results li { margin: .2em 0; }
")

(defun manual:%nav ()
  (with-output-to-string (out)
    (format out "<nav><a href=\"index.html\">Index</a>")
    (dolist (p manual:*pages*) (format out "<a href=\"~a.html\">~a</a>" (first p) (xml-escape (second p))))
    (dolist (g manual:*guides*) (format out "<a href=\"~a.html\">~a</a>" (first g) (xml-escape (second g))))
    (format out "</nav>~%")))

(defun manual:%page (title body)
  (format nil "<!DOCTYPE html>~%<html lang=\"en\"><head><meta charset=\"utf-8\"><title>~a — TensorLisp manual</title>~%<link rel=\"stylesheet\" href=\"style.css\"></head><body>~%~a<h1>~a</h1>~%~a</body></html>~%"
          (xml-escape title) (manual:%nav) (xml-escape title) body))

(defun manual:%js-string (s)
  (with-output-to-string (out)
    (write-char #\" out)
    (loop for c across s
          do (cond ((member c '(#\" #\\)) (write-char #\\ out) (write-char c out))
                   ((char= c #\Newline) (write-string " " out))
                   ((char= c #\<) (write-string "\\u003c" out))
                   (t (write-char c out))))
    (write-char #\" out)))

(defun manual:%without-usage (name doc)
  "DOC without the usage form it may start with, (NAME ...), which the entry shows already."
  (if (and (> (length doc) (+ 1 (length name)))
           (char= (char doc 0) #\()
           (string= (subseq doc 1 (+ 1 (length name))) name)
           (member (char doc (+ 1 (length name))) '(#\Space #\))))
      (let ((depth 0) (end nil))
        (loop for i from 0 below (length doc)
              until end
              do (case (char doc i)
                   (#\( (incf depth))
                   (#\) (decf depth) (when (= depth 0) (setq end (+ i 1))))))
        (if end (string-left-trim '(#\Space #\Newline) (subseq doc end)) doc))
      doc))

(defun manual:%summary (e)
  "The first line of E's documentation, without the usage it may repeat."
  (let* ((doc (manual:%without-usage (getf e :name) (or (getf e :doc) "")))
         (line (first (string-split doc (string #\Newline)))))
    (if (> (length line) 110) (concat (subseq line 0 107) "...") line)))

(defun manual:%paragraphs (lines)
  "LINES as HTML paragraphs: blank lines separate them, other line breaks are spaces."
  (let ((out nil) (current nil))
    (dolist (line lines)
      (if (string= (string-trim " " line) "")
          (progn (when current (push current out)) (setq current nil))
          (setq current (if current (concat current " " (string-trim " " line)) (string-trim " " line)))))
    (when current (push current out))
    (reverse out)))

(defun manual:write (dir &key quiet)
  "(manual:write DIR &key quiet) Writes the HTML manual into the folder DIR (made when missing):
index.html (every entry, a search box), one page per module, style.css and search.js. Runs
every example (a doctest: each failure is listed, and in manual:*failures*). Returns a plist
(:entries :documented :with-examples :examples :failures).
  (fboundp 'manual:write)  ; => t"
  (dolist (m manual:*modules*) (require m))
  (ensure-directories-exist (concat dir "/"))
  (setq manual:*failures* nil)
  (let* ((entries (manual:%entries))
         (names (make-hash-table :test #'equal))
         (examples 0) (with-examples 0) (documented 0))
    (dolist (e entries) (setf (gethash (getf e :name) names) (getf e :page)))
    (dolist (p manual:*pages*)
      (let* ((mine (remove-if-not (lambda (e) (equal (getf e :page) (first p))) entries))
             (body (with-output-to-string (out)
                     (format out "<p>~a</p>~%<p>~a entries.</p>~%" (xml-escape (fourth p)) (length mine))
                     (dolist (e mine)
                       (let ((n (length (manual:%examples (string-split (or (getf e :doc) "") (string #\Newline))))))
                         (incf examples n)
                         (when (> n 0) (incf with-examples))
                         (when (getf e :doc) (incf documented)))
                       (write-string (manual:%entry-html e names) out)))))
        (write-file (format nil "~a/~a.html" dir (first p)) (manual:%page (second p) body))))
    (dolist (g manual:*guides*)
      (let ((file (concat manual:*docs-dir* (third g))))
        (write-file (format nil "~a/~a.html" dir (first g))
                    (manual:%page (second g)
                                  (if (probe-file file)
                                      (manual:%markdown (read-file file))
                                      (format nil "<p>This guide is docs/~a in the source tree (not found here).</p>~%"
                                              (third g)))))))
    (write-file (format nil "~a/style.css" dir) manual:*style*)
    (write-file (format nil "~a/search.js" dir)
                (with-output-to-string (out)
                  (format out "// The manual's entries, for the search box of index.html.~%const ENTRIES = [~%")
                  (dolist (e entries)
                    (format out "[~a,~a,~a,~a],~%" (manual:%js-string (getf e :name)) (manual:%js-string (getf e :page))
                            (manual:%js-string (manual:%anchor (getf e :name))) (manual:%js-string (manual:%summary e))))
                  (format out "];
function search(q) {
  q = q.trim().toLowerCase();
  const list = document.getElementById('results');
  list.innerHTML = '';
  if (!q) return;
  const hits = ENTRIES.filter(e => e[0].toLowerCase().includes(q) || e[3].toLowerCase().includes(q));
  hits.sort((a, b) => (b[0].toLowerCase() === q) - (a[0].toLowerCase() === q) ||
                      (b[0].toLowerCase().startsWith(q)) - (a[0].toLowerCase().startsWith(q)) || a[0].localeCompare(b[0]));
  for (const e of hits.slice(0, 50)) {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = e[1] + '.html#' + e[2];
    a.textContent = e[0];
    li.appendChild(a);
    li.appendChild(document.createTextNode(' ' + e[3]));
    list.appendChild(li);
  }
  document.getElementById('count').textContent = hits.length + ' found';
}
window.addEventListener('load', () => {
  const box = document.getElementById('search');
  box.addEventListener('input', () => search(box.value));
  const q = new URLSearchParams(location.search).get('q');
  if (q) { box.value = q; search(q); }
});
")))
    (write-file (format nil "~a/index.html" dir)
                (manual:%page "TensorLisp reference manual"
                              (with-output-to-string (out)
                                (format out "<script src=\"search.js\"></script>~%")
                                (format out "<p><input id=\"search\" type=\"search\" placeholder=\"Search the manual (e.g. softmax)\" autofocus> <span id=\"count\"></span></p>~%<ul id=\"results\"></ul>~%")
                                (format out "<h2>Pages</h2>~%<ul>~%")
                                (dolist (p manual:*pages*)
                                  (format out "<li><a href=\"~a.html\">~a</a>: ~a</li>~%" (first p)
                                          (xml-escape (second p)) (xml-escape (fourth p))))
                                (format out "</ul>~%<h2>Guides</h2>~%<ul>~%")
                                (dolist (g manual:*guides*)
                                  (format out "<li><a href=\"~a.html\">~a</a></li>~%" (first g) (xml-escape (second g))))
                                (format out "</ul>~%<h2>Every entry</h2>~%<p>")
                                (dolist (e entries)
                                  (format out "<a href=\"~a.html#~a\"><code>~a</code></a> " (getf e :page)
                                          (manual:%anchor (getf e :name)) (xml-escape (getf e :name))))
                                (format out "</p>~%"))))
    (unless quiet
      (format t "manual: ~a entries (~a documented, ~a with examples), ~a examples run, ~a failed; written to ~a/index.html~%"
              (length entries) documented with-examples examples (length manual:*failures*) dir))
    (dolist (f (reverse manual:*failures*))
      (format t "  example of ~a failed: ~a~%    ~a~%" (first f) (second f) (third f)))
    (list :entries (length entries) :documented documented :with-examples with-examples
          :examples examples :failures (length manual:*failures*))))

(defun manual:main (args)
  "(manual:main ARGS) What tlisp doc runs: ARGS are DIR [--quiet]. Exits with 1 when an example
fails, 2 on bad arguments.
  (fboundp 'manual:main)  ; => t"
  (let ((dir nil) (quiet nil))
    (dolist (a args)
      (cond ((equal a "--quiet") (setq quiet t))
            ((and (null dir) (not (eql 0 (search "-" a)))) (setq dir a))
            (t (format t "tlisp doc: unexpected argument ~s~%" a) (exit 2))))
    (unless dir
      (format t "usage: tlisp doc DIR [--quiet]~%  writes the HTML reference manual into DIR, running every example~%")
      (exit 2))
    (ensure-directories-exist (concat dir "/"))
    (let ((r (manual:write dir :quiet quiet)))
      (exit (if (> (getf r :failures) 0) 1 0)))))

(provide 'manual)
