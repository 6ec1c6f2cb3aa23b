// SPDX-License-Identifier: Apache-2.0
// The Lisp side of the tensor file formats: load-npy, save-npy, load-safetensors,
// save-safetensors, safetensors-header, safetensors-metadata, gguf-header, load-gguf,
// gguf-files, load-idx and load-csv, over the readers and writers of src/tensor/io/. Their errors (tl::ConditionError)
// become conditions of the same type at the call.
#include <filesystem>
#include <optional>
#include <unordered_set>

#include "bindings/files.h"
#include "bindings/tensor_value.h"
#include "eval/builtins.h"
#include "support/log.h"
#include "tensor/io/csv.h"
#include "tensor/io/gguf.h"
#include "tensor/io/idx.h"
#include "tensor/io/npy.h"
#include "tensor/io/png.h"
#include "tensor/io/safetensors.h"
#include "tensor/io/wav.h"

namespace tl::tensor {

using eval::Interp;
using eval::Value;
using Args = Value*;
using N = std::uint32_t;

namespace {

// The path argument i of builtin fn, with the context for its errors. Loaders poll it
// between chunks of input, so Ctrl-C stops a long load.
io::FileCtx file_ctx(Interp& in, const char* fn, Args a, int i) {
  return io::FileCtx{fn, eval::arg_string(in, fn, a, i)->text, [&in] {
                       if (in.interrupt_requested.load(std::memory_order_relaxed)) {
                         in.raise_interrupt();
                       }
                     }};
}

// A tensor of data read from a file. Complex data (a buffer of dtype c64 or c128) becomes a
// complex tensor over the same bytes, read as its f32 or f64 parts.
Value make_loaded_tensor(Interp& in, io::Array array) {
  in.heap.account_external(array.buffer->size_bytes());
  Shape shape(array.shape.begin(), array.shape.end());
  if (is_complex(array.buffer->dtype)) {
    array.buffer->dtype = complex_part(array.buffer->dtype);  // the same bytes, twice the count
    shape.push_back(Dim(2));
    return make_complex_tensor(in, graph_at_call(in).make_buffer(std::move(array.buffer), shape));
  }
  return make_tensor(in, graph_at_call(in).make_buffer(std::move(array.buffer), shape));
}

// A tensor's contiguous data and concrete shape, for writing. Realizes the tensor. A complex
// tensor's data is its parts' bytes, seen as one c64 or c128 element per pair.
io::Array realize_for_save(Interp& in, TensorObj* t) {
  read_back(in, t);
  if (t->complex) {
    const std::shared_ptr<Buffer>& parts = t->node->buffer;
    auto shape = eval_shape(t->node->shape, t->node->bindings);
    shape.pop_back();
    auto alias = std::make_shared<Buffer>(complex_of(parts->dtype), parts->count() / 2, parts,
                                          const_cast<void*>(std::as_const(*parts).data()));
    return io::Array{std::move(alias), std::move(shape)};
  }
  io::Array d{t->node->buffer, eval_shape(t->node->shape, t->node->bindings)};
  auto bytes = io::data_bytes(d.shape, dtype_size(d.buffer->dtype));
  if (bytes && tensor::is_quantized(d.buffer->dtype)) *bytes /= tensor::dtype_block(d.buffer->dtype);  // whole blocks
  if (!bytes || *bytes != d.buffer->size_bytes()) {
    throw tl::Error(ErrorKind::Internal, "eval", "internal-error",
                    "a realized buffer of " + std::to_string(d.buffer->size_bytes()) +
                        " bytes does not match its shape " + shape_str(t->node->shape) + " (" + __FILE__ + ":" +
                        std::to_string(__LINE__) + ")");
  }
  return d;
}

// --- npy ----------------------------------------------------------------------------------

void register_npy_builtins(Interp& in) {
  TL_BUILTIN(in, "load-npy", 1, 1, "(load-npy PATH)",
             "The tensor stored in the NumPy .npy file PATH (format 1.0, 2.0 or 3.0). Dtypes: f2 f4 "
             "f8 i1 i2 i4 i8 u1 u4 b1. Big-endian data is converted; Fortran-order data is "
             "rearranged into row-major order."
             "\n  (progn (save-npy (tensor '((1.5 2.5) (3.5 4.5))) \"/tmp/tl-doc-load-npy.npy\")"
             "\n         (to-list (load-npy \"/tmp/tl-doc-load-npy.npy\")))  ; => ((1.5 2.5) (3.5 4.5))",
             [](Interp& in, Args a, N) -> Value {
               return make_loaded_tensor(in, io::read_npy(file_ctx(in, "load-npy", a, 0)));
             });
  TL_BUILTIN(in, "save-npy", 2, 2, "(save-npy TENSOR PATH)",
             "Writes TENSOR (realizing it) to PATH as a NumPy .npy file: format 1.0, little-endian, "
             "row-major. bf16 has no NPY type: cast to f32 first. Returns PATH."
             "\n  (save-npy (tensor '((1 2) (3 4))) \"/tmp/tl-doc-save-npy.npy\")  ; => \"/tmp/tl-doc-save-npy.npy\""
             "\n  (progn (save-npy (tensor '(1 2 3) :dtype 'i64) \"/tmp/tl-doc-save-npy.npy\")"
             "\n         (dtype (load-npy \"/tmp/tl-doc-save-npy.npy\")))  ; => i64",
             [](Interp& in, Args a, N) -> Value {
               if (!is_tensor(a[0])) in.type_error("save-npy", 1, "a tensor", a[0]);
               io::FileCtx ctx = file_ctx(in, "save-npy", a, 1);
               TensorObj* t = as_tensor(a[0]);
               io::check_npy_dtype(ctx, value_dtype(t));  // before the work of realizing
               io::write_npy(ctx, realize_for_save(in, t));
               return a[1];
             });
}

// --- safetensors --------------------------------------------------------------------------

// A list of (name . value) conses for i below n, built on the value stack so that each part
// stays rooted.
template <typename NameOf, typename ValueOf>
Value make_alist(Interp& in, std::size_t n, NameOf name_of, ValueOf value_of) {
  Interp::StackMark mark(in);
  Value* base = in.sp;
  for (std::size_t i = 0; i < n; ++i) {
    in.push(value_of(i));
    in.sp[-1] = in.cons(in.make_string(name_of(i)), in.sp[-1]);
  }
  return in.list_from(base, n);
}

// The tensors of the file, or only those named by `names` (in that order) when it is given:
// a name the file does not hold is an error naming it. Only the chosen tensors are read.
Value load_safetensors(Interp& in, const io::FileCtx& ctx, const std::vector<std::string>* names) {
  io::SafetensorsReader file(ctx);
  std::vector<const io::SafetensorsEntry*> chosen;
  if (names == nullptr) {
    for (const io::SafetensorsEntry& t : file.header().tensors) chosen.push_back(&t);
  } else {
    chosen = file.find(*names);
  }
  auto name_of = [&](std::size_t i) { return chosen[i]->name; };
  return make_alist(in, chosen.size(), name_of,
                    [&](std::size_t i) { return make_loaded_tensor(in, file.read(*chosen[i])); });
}

// Each tensor's name, dtype and shape, without reading any data: ((NAME DTYPE SHAPE) ...).
Value safetensors_header(Interp& in, const io::FileCtx& ctx) {
  io::SafetensorsReader file(ctx);
  const auto& tensors = file.header().tensors;
  Interp::StackMark mark(in);
  Value* base = in.sp;
  for (const io::SafetensorsEntry& t : tensors) {
    Value* entry = in.sp;
    in.push(in.make_string(t.name));
    in.push(dtype_to_lisp(in, t.dtype));
    Value* dims = in.sp;
    for (std::int64_t d : t.shape) in.push(Value::integer(d));
    Value shape = in.list_from(dims, t.shape.size());
    in.sp = dims;
    in.push(shape);
    Value item = in.list_from(entry, 3);
    in.sp = entry;
    in.push(item);
  }
  return in.list_from(base, tensors.size());
}

Value safetensors_metadata(Interp& in, const io::FileCtx& ctx) {
  io::SafetensorsReader file(ctx);
  const auto& metadata = file.header().metadata;
  auto key_of = [&](std::size_t i) { return metadata[i].first; };
  return make_alist(in, metadata.size(), key_of, [&](std::size_t i) { return in.make_string(metadata[i].second); });
}

// The (key . value) pairs of an alist or a hash table, in order.
std::vector<std::pair<Value, Value>> pairs_of(Interp& in, const char* fn, Value v, int arg, const char* what) {
  std::vector<std::pair<Value, Value>> out;
  if (eval::is_kind(v, eval::ObjKind::HashTable)) {
    for (const auto& [k, x] : eval::as_hash(v)->entries) {
      if (k.tag == eval::Tag::Obj && k.o == nullptr) continue;  // a removed entry
      out.emplace_back(k, x);
    }
    return out;
  }
  if (!eval::is_list(v)) in.type_error(fn, arg, what, v);
  for (Value item : eval::list_items(in, fn, v, arg)) {
    if (!eval::is_cons(item)) in.type_error(fn, arg, what, v);
    out.emplace_back(eval::car(item), eval::cdr(item));
  }
  return out;
}

std::string name_text(Interp& in, const char* fn, Value k, const char* what) {
  if (eval::is_string(k)) return eval::as_string(k)->text;
  if (eval::is_symbol(k) && !k.is_nil()) return eval::as_symbol(k)->name;
  in.error("type-error", std::string(fn) + ": " + what + " must be a string or a symbol, got " + in.repr(k));
}

void save_safetensors(Interp& in, const io::FileCtx& ctx, Value tensors, Value metadata) {
  const char* fn = ctx.fn;
  std::optional<io::SafetensorsMetadata> fields;
  if (!metadata.is_nil()) {
    fields.emplace();
    for (auto [k, v] : pairs_of(in, fn, metadata, 4, "an alist or hash table of strings")) {
      if (!eval::is_string(v)) {
        in.error("type-error", std::string(fn) + ": metadata values must be strings, got " + in.repr(v));
      }
      fields->emplace_back(name_text(in, fn, k, "a metadata key"), eval::as_string(v)->text);
    }
  }
  std::unordered_set<std::string> names;
  std::vector<std::pair<std::string, io::Array>> data;
  for (auto [k, v] : pairs_of(in, fn, tensors, 1, "an alist ((name . tensor) ...) or a hash table")) {
    std::string name = name_text(in, fn, k, "a tensor name");
    io::check_safetensors_name(ctx, name, names);
    if (!is_tensor(v)) {
      in.error("type-error",
               std::string(fn) + ": the value for " + io::json_quoted(name) + " must be a tensor, got " + in.repr(v));
    }
    names.insert(name);
    if (tensor::DType t = as_tensor(v)->node->dtype; tensor::is_quantized(t)) {
      in.error("dtype-error", std::string(fn) + ": " + io::json_quoted(name) + " is a " + std::string(dtype_name(t)) +
                                  " tensor, which safetensors cannot hold: dequantize it first, e.g. (cast x 'f32)");
    }
    if (value_dtype(as_tensor(v)) == DType::C128) {
      in.error("dtype-error", std::string(fn) + ": " + io::json_quoted(name) +
                                  " is a c128 tensor, which safetensors cannot hold (its complex type is C64): "
                                  "save (view-as-real z) as f64, or cast it to c64");
    }
    data.emplace_back(std::move(name), realize_for_save(in, as_tensor(v)));
  }
  io::write_safetensors(ctx, data, fields);
}

void register_safetensors_builtins(Interp& in) {
  TL_BUILTIN(in, "load-safetensors", 1, 3, "(load-safetensors PATH &key names)",
             "The tensors of the safetensors file PATH as an alist ((name . tensor) ...), in the "
             "order of their data in the file. With :names, a list of tensor names, only those "
             "are read, in that order; a name the file does not hold is a file-error naming it."
             "\n  (let ((path \"/tmp/tl-doc-load-st.safetensors\"))"
             "\n    (save-safetensors (list (cons \"w\" (tensor '((1.0 2.0)))) (cons \"b\" (tensor '(0.5)))) path)"
             "\n    (mapcar (lambda (e) (cons (car e) (to-list (cdr e)))) (load-safetensors path)))"
             "  ; => ((\"w\" (1.0 2.0)) (\"b\" 0.5))"
             "\n  (let ((path \"/tmp/tl-doc-load-st.safetensors\"))"
             "\n    (save-safetensors (list (cons \"w\" (tensor '((1.0 2.0)))) (cons \"b\" (tensor '(0.5)))) path)"
             "\n    (mapcar #'car (load-safetensors path :names '(\"b\"))))  ; => (\"b\")",
             [](Interp& in, Args a, N n) -> Value {
               io::FileCtx ctx = file_ctx(in, "load-safetensors", a, 0);
               bool has_names = false;
               Value names = eval::keyword_arg(a, 1, n, "names", &has_names);
               if (n > 1 && !has_names) {
                 in.error("program-error", "load-safetensors: expected :names after PATH, got " + in.repr(a[1]));
               }
               if (!has_names) return load_safetensors(in, ctx, nullptr);
               std::vector<std::string> wanted;
               const char* what = "a list of strings";
               if (!eval::is_list(names)) in.type_error("load-safetensors", 3, what, names);
               for (Value v : eval::list_items(in, "load-safetensors", names, 3)) {
                 if (!eval::is_string(v)) in.type_error("load-safetensors", 3, what, names);
                 wanted.push_back(eval::as_string(v)->text);
               }
               return load_safetensors(in, ctx, &wanted);
             });
  TL_BUILTIN(in, "safetensors-header", 1, 1, "(safetensors-header PATH)",
             "The tensors the safetensors file PATH holds, without reading their data: a list of "
             "(NAME DTYPE SHAPE), NAME a string, DTYPE a symbol such as bf16, SHAPE a list, in "
             "the order of their data in the file. The header is checked as load-safetensors "
             "checks it."
             "\n  (let ((path \"/tmp/tl-doc-st-header.safetensors\"))"
             "\n    (save-safetensors (list (cons \"w\" (tensor '((1.0 2.0)))) (cons \"b\" (tensor '(1 2) :dtype "
             "'bf16))) "
             "path)"
             "\n    (safetensors-header path))  ; => ((\"w\" f32 (1 2)) (\"b\" bf16 (2)))",
             [](Interp& in, Args a, N) -> Value {
               return safetensors_header(in, file_ctx(in, "safetensors-header", a, 0));
             });
  TL_BUILTIN(in, "save-safetensors", 2, 4, "(save-safetensors TENSORS PATH &key metadata)",
             "Writes TENSORS, an alist ((name . tensor) ...) or a hash table from names to tensors, "
             "to PATH as a safetensors file, in that order, realizing them. :metadata, an alist or "
             "hash table of strings, is stored as __metadata__. Returns PATH. Like every saver (and "
             "torch.save), the value comes first; the old order (save-safetensors PATH TENSORS) still "
             "works, with a deprecation warning, until the next release."
             "\n  (save-safetensors (list (cons \"w\" (tensor '((1.0 2.0)))) (cons \"b\" (tensor '(0.5))))"
             "\n                    \"/tmp/tl-doc-save-st.safetensors\" :metadata '((\"format\" . \"pt\")))"
             "  ; => \"/tmp/tl-doc-save-st.safetensors\"",
             [](Interp& in, Args a, N n) -> Value {
               // Issue 19: save-npy took (TENSOR PATH) and this (PATH TENSORS). TENSORS is never a
               // string, so a string first and a non-string second is the old order.
               if (eval::is_string(a[0]) && !eval::is_string(a[1])) {
                 static bool warned = false;
                 if (!warned) {
                   tl::log(
                       "tensorlisp: warning: (save-safetensors PATH TENSORS) is deprecated; "
                       "write (save-safetensors TENSORS PATH)\n");
                   warned = true;
                 }
                 std::swap(a[0], a[1]);
               }
               io::FileCtx ctx = file_ctx(in, "save-safetensors", a, 1);
               bool has_metadata = false;
               Value metadata = eval::keyword_arg(a, 2, n, "metadata", &has_metadata);
               if (n > 2 && !has_metadata) {
                 in.error("program-error", "save-safetensors: expected :metadata after TENSORS, got " + in.repr(a[2]));
               }
               save_safetensors(in, ctx, a[0], metadata);
               return a[1];
             });
  TL_BUILTIN(in, "safetensors-metadata", 1, 1, "(safetensors-metadata PATH)",
             "The __metadata__ of the safetensors file PATH as an alist of strings ((key . value) "
             "...); nil when it has none."
             "\n  (let ((path \"/tmp/tl-doc-st-metadata.safetensors\"))"
             "\n    (save-safetensors (list (cons \"w\" (tensor '(1.0)))) path :metadata '((\"format\" . \"pt\")))"
             "\n    (safetensors-metadata path))  ; => ((\"format\" . \"pt\"))",
             [](Interp& in, Args a, N) -> Value {
               return safetensors_metadata(in, file_ctx(in, "safetensors-metadata", a, 0));
             });
}

// --- gguf ---------------------------------------------------------------------------------

// One metadata value: an integer, a float, t or nil for a bool, a string; an array as a list.
Value gguf_value(Interp& in, const io::GgufValue& v) {
  using T = io::GgufValueType;
  auto item = [&](std::size_t i) -> Value {
    switch (v.type) {
      case T::String: return in.make_string(v.texts[i]);
      case T::F32:
      case T::F64: return Value::real(v.reals[i]);
      case T::Bool: return in.boolean(v.ints[i] != 0);
      case T::Array: return gguf_value(in, v.items[i]);
      case T::U64:  // bits above 2^63-1 read as a float
        if (v.ints[i] < 0) return Value::real(static_cast<double>(static_cast<std::uint64_t>(v.ints[i])));
        return Value::integer(v.ints[i]);
      default: return Value::integer(v.ints[i]);
    }
  };
  if (!v.is_array) return item(0);
  const std::size_t n = v.type == T::String                      ? v.texts.size()
                        : v.type == T::Array                     ? v.items.size()
                        : (v.type == T::F32 || v.type == T::F64) ? v.reals.size()
                                                                 : v.ints.size();
  Interp::StackMark mark(in);
  Value* base = in.sp;
  for (std::size_t i = 0; i < n; ++i) in.push(item(i));
  return in.list_from(base, n);
}

// (:version V :alignment A :metadata ((KEY . VALUE) ...) :tensors ((NAME DTYPE SHAPE TYPE) ...)).
Value gguf_header(Interp& in, const io::FileCtx& ctx) {
  io::GgufReader file(ctx);
  const io::GgufHeader& h = file.header();
  Interp::StackMark mark(in);
  Value* base = in.sp;
  in.push(Value::object(in.keyword("version")));
  in.push(Value::integer(h.version));
  in.push(Value::object(in.keyword("alignment")));
  in.push(Value::integer(static_cast<std::int64_t>(h.alignment)));
  in.push(Value::object(in.keyword("metadata")));
  in.push(make_alist(
      in, h.metadata.size(), [&](std::size_t i) { return h.metadata[i].first; },
      [&](std::size_t i) { return gguf_value(in, h.metadata[i].second); }));
  in.push(Value::object(in.keyword("tensors")));
  Value* tensors = in.sp;
  for (const io::GgufTensorInfo& t : h.tensors) {
    Value* entry = in.sp;
    in.push(in.make_string(t.name));
    const auto dtype = io::gguf_load_dtype(t.type);
    in.push(dtype ? dtype_to_lisp(in, *dtype) : eval::nil());
    Value* dims = in.sp;
    for (std::int64_t d : t.shape) in.push(Value::integer(d));
    Value shape = in.list_from(dims, t.shape.size());
    in.sp = dims;
    in.push(shape);
    in.push(in.make_string(io::gguf_type_name(t.type)));
    Value item = in.list_from(entry, 4);
    in.sp = entry;
    in.push(item);
  }
  Value list = in.list_from(tensors, h.tensors.size());
  in.sp = tensors;
  in.push(list);
  return in.list_from(base, 8);
}

// The tensors of the file, or only those named by `names` (in that order) when given.
Value load_gguf(Interp& in, const io::FileCtx& ctx, const std::vector<std::string>* names, bool quantized) {
  io::GgufReader file(ctx);
  std::vector<const io::GgufTensorInfo*> chosen;
  if (names == nullptr) {
    for (const io::GgufTensorInfo& t : file.header().tensors) chosen.push_back(&t);
  } else {
    chosen = file.find(*names);
  }
  auto name_of = [&](std::size_t i) { return chosen[i]->name; };
  return make_alist(in, chosen.size(), name_of,
                    [&](std::size_t i) { return make_loaded_tensor(in, file.read(*chosen[i], quantized)); });
}

// Bytes of a scalar GGUF integer type.
std::size_t scalar_bytes_of(io::GgufValueType t) {
  using T = io::GgufValueType;
  switch (t) {
    case T::U8:
    case T::I8:
    case T::Bool: return 1;
    case T::U16:
    case T::I16: return 2;
    case T::U32:
    case T::I32:
    case T::F32: return 4;
    default: return 8;
  }
}

// A metadata value of save-gguf from Lisp: a string, an integer (u32 when it fits, else i64),
// a float (f32), t or :false (bool), a list of one kind of those (an array: integers as i32
// when all fit, else i64), or a typed value (:TYPE . VALUE) or array (:TYPE VALUE...), TYPE
// one of u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool string.
io::GgufValue gguf_value_from_lisp(Interp& in, const std::string& key, Value v, int depth = 0) {
  using T = io::GgufValueType;
  const char* fn = "save-gguf";
  auto bad = [&]() -> io::GgufValue {
    in.error("type-error", std::string(fn) + ": the value of metadata " + io::json_quoted(key) +
                               " must be a string, integer, float, t, :false, a list of one kind of those, or "
                               "(:TYPE . VALUE), got " +
                               in.repr(v));
  };
  static const std::pair<const char*, T> kTypes[] = {{"u8", T::U8},   {"i8", T::I8},     {"u16", T::U16},
                                                     {"i16", T::I16}, {"u32", T::U32},   {"i32", T::I32},
                                                     {"u64", T::U64}, {"i64", T::I64},   {"f32", T::F32},
                                                     {"f64", T::F64}, {"bool", T::Bool}, {"string", T::String}};
  io::GgufValue out;
  auto add = [&](T t, Value x) {
    if (t == T::String) {
      if (!eval::is_string(x)) bad();
      out.texts.push_back(eval::as_string(x)->text);
    } else if (t == T::F32 || t == T::F64) {
      if (!x.is_int() && !x.is_float()) bad();
      out.reals.push_back(x.is_int() ? static_cast<double>(x.i) : x.f);
    } else if (t == T::Bool) {
      const bool is_false =
          x.is_nil() || (eval::is_symbol(x) && eval::as_symbol(x)->is_keyword() && eval::as_symbol(x)->name == "false");
      if (!is_false && !(eval::is_symbol(x) && eval::as_symbol(x) == in.S.t)) bad();
      out.ints.push_back(is_false ? 0 : 1);
    } else {
      if (!x.is_int()) bad();
      // The integer types' ranges (a u64 holds the non-negative int64s).
      const int bytes = static_cast<int>(scalar_bytes_of(t));
      const bool is_signed = t == T::I8 || t == T::I16 || t == T::I32 || t == T::I64;
      const std::int64_t lo = is_signed ? (bytes == 8 ? INT64_MIN : -(std::int64_t{1} << (8 * bytes - 1))) : 0;
      const std::int64_t hi = bytes == 8  ? INT64_MAX
                              : is_signed ? (std::int64_t{1} << (8 * bytes - 1)) - 1
                                          : (std::int64_t{1} << (8 * bytes)) - 1;
      if (x.i < lo || x.i > hi) {
        in.error("value-error", std::string(fn) + ": metadata " + io::json_quoted(key) + " holds " +
                                    std::to_string(x.i) + ", outside its type's range [" + std::to_string(lo) + ", " +
                                    std::to_string(hi) + "]");
      }
      out.ints.push_back(x.i);
    }
  };
  auto kind_of = [&](Value x) -> std::optional<T> {
    if (x.is_nil()) return T::Bool;  // false (as gguf-header gives it)
    if (eval::is_string(x)) return T::String;
    if (x.is_float()) return T::F32;
    if (x.is_int()) return x.i >= 0 && x.i <= 0xffffffffLL ? T::U32 : T::I64;
    if ((eval::is_symbol(x) && eval::as_symbol(x) == in.S.t) ||
        (eval::is_symbol(x) && eval::as_symbol(x)->is_keyword() && eval::as_symbol(x)->name == "false")) {
      return T::Bool;
    }
    return std::nullopt;
  };
  const auto* typed = std::end(kTypes);
  if (eval::is_cons(v) && eval::is_symbol(eval::car(v)) && eval::as_symbol(eval::car(v))->is_keyword()) {
    const std::string& name = eval::as_symbol(eval::car(v))->name;
    typed = std::find_if(std::begin(kTypes), std::end(kTypes), [&](const auto& p) { return name == p.first; });
  }
  if (typed != std::end(kTypes)) {
    out.type = typed->second;
    Value rest = eval::cdr(v);
    if (!eval::is_list(rest) || (rest.is_nil() && out.type == T::Bool)) {
      add(out.type, rest);
      return out;
    }
    out.is_array = true;
    for (Value x : eval::list_items(in, fn, rest, 2)) add(out.type, x);
    return out;
  }
  if (auto k = kind_of(v)) {
    out.type = *k;
    add(*k, v);
    return out;
  }
  if (!eval::is_cons(v) || depth > 4) bad();
  out.is_array = true;
  std::vector<Value> items = eval::list_items(in, fn, v, 2);
  if (eval::is_cons(items[0])) {
    out.type = T::Array;
    for (Value x : items) {
      out.items.push_back(gguf_value_from_lisp(in, key, x, depth + 1));
      if (!out.items.back().is_array) bad();
    }
    return out;
  }
  auto first = kind_of(items[0]);
  if (!first) bad();
  out.type = *first;
  for (Value x : items) {
    auto k = kind_of(x);
    if (!k) bad();
    if (*k == T::I64 || (*k == T::U32 && out.type == T::I64)) {
      out.type = T::I64;
    } else if (*k != out.type && !(*k == T::U32 && out.type == T::U32)) {
      bad();
    }
  }
  if (out.type == T::U32) {
    // An array of integers: i32 when all fit (as llama.cpp writes token types), else i64.
    const bool fits = std::all_of(items.begin(), items.end(), [](Value x) { return x.i <= 0x7fffffff; });
    out.type = fits ? T::I32 : T::I64;
  }
  for (Value x : items) add(out.type, x);
  return out;
}

void save_gguf(Interp& in, const io::FileCtx& ctx, Value tensors, Value metadata) {
  const char* fn = ctx.fn;
  std::vector<std::pair<std::string, io::GgufValue>> meta;
  std::unordered_set<std::string> keys;
  for (auto [k, v] : pairs_of(in, fn, metadata, 4, "an alist or hash table")) {
    std::string key = name_text(in, fn, k, "a metadata key");
    if (key == "general.alignment") {
      in.error("value-error",
               std::string(fn) + ": general.alignment is the writer's to set (it aligns the data to 32 bytes)");
    }
    if (!keys.insert(key).second)
      in.error("value-error", std::string(fn) + ": the metadata key " + io::json_quoted(key) + " is given twice");
    meta.emplace_back(key, gguf_value_from_lisp(in, key, v));
  }
  std::unordered_set<std::string> names;
  std::vector<std::pair<std::string, io::Array>> data;
  for (auto [k, v] : pairs_of(in, fn, tensors, 1, "an alist ((name . tensor) ...) or a hash table")) {
    std::string name = name_text(in, fn, k, "a tensor name");
    if (!is_tensor(v)) {
      in.error("type-error",
               std::string(fn) + ": the value for " + io::json_quoted(name) + " must be a tensor, got " + in.repr(v));
    }
    if (!names.insert(name).second)
      in.error("value-error", std::string(fn) + ": the tensor " + io::json_quoted(name) + " is given twice");
    data.emplace_back(std::move(name), realize_for_save(in, as_tensor(v)));
  }
  io::write_gguf(ctx, meta, data);
}

// The :names argument of a loader, a list of strings, checked.
std::vector<std::string> names_arg(Interp& in, const char* fn, Value names) {
  std::vector<std::string> wanted;
  const char* what = "a list of strings";
  if (!eval::is_list(names)) in.type_error(fn, 3, what, names);
  for (Value v : eval::list_items(in, fn, names, 3)) {
    if (!eval::is_string(v)) in.type_error(fn, 3, what, names);
    wanted.push_back(eval::as_string(v)->text);
  }
  return wanted;
}

void register_gguf_builtins(Interp& in) {
  TL_BUILTIN(in, "gguf-header", 1, 1, "(gguf-header PATH)",
             "The header of the GGUF file PATH (llama.cpp's format, versions 2 and 3), without "
             "reading tensor data: a plist (:version V :alignment A :metadata ALIST :tensors LIST). "
             "ALIST holds (KEY . VALUE) in file order: integers, floats, t or nil, strings, and "
             "arrays as lists. Each tensor is (NAME DTYPE SHAPE TYPE): the dtype load-gguf gives it "
             "(f32 for Q8_0 and Q4_0, which are dequantized; nil for a type it cannot read), the "
             "row-major shape (GGUF's dimensions reversed) and the ggml type name (\"Q8_0\")."
             "\n  (let* ((u32 (lambda (n) (list n 0 0 0)))"
             "\n         (u64 (lambda (n) (list n 0 0 0 0 0 0 0)))"
             "\n         (str (lambda (s) (append (funcall u64 (length s)) (map 'list #'char-code s))))"
             "\n         (bytes (append (map 'list #'char-code \"GGUF\") (funcall u32 3) (funcall u64 1) (funcall u64 "
             "1)"
             "\n                        (funcall str \"general.name\") (funcall u32 8) (funcall str \"tiny\")"
             "\n                        (funcall str \"w\") (funcall u32 1) (funcall u64 2) (funcall u32 0) (funcall "
             "u64 0)"
             "\n                        '(0 0 0) '(0 0 0 64 0 0 64 64))))"
             "\n    (write-file \"/tmp/tl-doc-gguf-header.gguf\" (map 'string #'code-char bytes))"
             "\n    (gguf-header \"/tmp/tl-doc-gguf-header.gguf\"))"
             "  ; => (:version 3 :alignment 32 :metadata ((\"general.name\" . \"tiny\")) :tensors ((\"w\" f32 (2) "
             "\"F32\")))",
             [](Interp& in, Args a, N) -> Value { return gguf_header(in, file_ctx(in, "gguf-header", a, 0)); });
  TL_BUILTIN(in, "load-gguf", 1, 5, "(load-gguf PATH &key names quantized)",
             "The tensors of the GGUF file PATH as an alist ((name . tensor) ...), in file order, "
             "each of the row-major shape gguf-header gives: F32, F16, BF16, F64 and the integer "
             "types as stored, Q8_0 and Q4_0 dequantized to f32 (with :quantized t kept as they "
             "are, q8_0 and q4_0 tensors, which matmul reads without dequantizing them whole); "
             "another type is a dtype-error naming the tensor and the type. With :names, a list of "
             "tensor names, only those are read, in that order; a name the file does not hold is "
             "a file-error naming it."
             "\n  (let* ((u32 (lambda (n) (list n 0 0 0)))"
             "\n         (u64 (lambda (n) (list n 0 0 0 0 0 0 0)))"
             "\n         (bytes (append (map 'list #'char-code \"GGUF\") (funcall u32 3) (funcall u64 1) (funcall u64 "
             "0)"
             "\n                        (funcall u64 1) (map 'list #'char-code \"w\") (funcall u32 1) (funcall u64 2) "
             "(funcall u32 0)"
             "\n                        (funcall u64 0) (make-list 7 :initial-element 0) '(0 0 0 64 0 0 64 64))))"
             "\n    (write-file \"/tmp/tl-doc-load-gguf.gguf\" (map 'string #'code-char bytes))"
             "\n    (mapcar (lambda (e) (cons (car e) (to-list (cdr e)))) (load-gguf \"/tmp/tl-doc-load-gguf.gguf\")))"
             "  ; => ((\"w\" 2.0 3.0))",
             [](Interp& in, Args a, N n) -> Value {
               io::FileCtx ctx = file_ctx(in, "load-gguf", a, 0);
               bool has_names = false, has_quantized = false;
               Value names = eval::keyword_arg(a, 1, n, "names", &has_names);
               const bool quantized = eval::keyword_arg(a, 1, n, "quantized", &has_quantized).truthy();
               if (n % 2 == 0 || (n - 1) / 2 != static_cast<N>(has_names) + static_cast<N>(has_quantized)) {
                 in.error("program-error", "load-gguf: expected :names or :quantized after PATH, got " + in.repr(a[1]));
               }
               if (!has_names) return load_gguf(in, ctx, nullptr, quantized);
               std::vector<std::string> wanted = names_arg(in, "load-gguf", names);
               return load_gguf(in, ctx, &wanted, quantized);
             });
  TL_BUILTIN(in, "save-gguf", 2, 4, "(save-gguf TENSORS PATH &key metadata)",
             "Writes TENSORS, an alist ((name . tensor) ...) or a hash table from names to tensors, "
             "to PATH as a GGUF file (version 3, llama.cpp's format), in that order, realizing them: "
             "f32, f16, bf16, f64, the signed integers, and q8_0 and q4_0 blocks as they are (see "
             "quantize). :metadata, an alist or hash table from keys to values, is stored first: a "
             "string, an integer (u32 when it fits, else i64), a float (f32), t or :false (or nil: "
             "false, as gguf-header gives it), a list of one kind of those (integers as i32 when all "
             "fit), or a typed (:TYPE . VALUE) or (:TYPE VALUE...), TYPE one of :u8 :i8 :u16 :i16 :u32 "
             ":i32 :u64 :i64 :f32 :f64 :bool :string, its range checked. general.alignment is the "
             "writer's (32). Returns PATH."
             "\n  (let ((path \"/tmp/tl-doc-save-gguf.gguf\"))"
             "\n    (save-gguf (list (cons \"w\" (quantize (ones '(2 32)) 'q8_0))) path"
             "\n               :metadata '((\"general.architecture\" . \"gpt2\") (\"gpt2.block_count\" . (:u32 . 12))))"
             "\n    (let ((h (gguf-header path)))"
             "\n      (list (getf h :metadata) (getf h :tensors))))"
             "  ; => (((\"general.architecture\" . \"gpt2\") (\"gpt2.block_count\" . 12)) ((\"w\" f32 (2 32) "
             "\"Q8_0\")))",
             [](Interp& in, Args a, N n) -> Value {
               io::FileCtx ctx = file_ctx(in, "save-gguf", a, 1);
               bool has_metadata = false;
               Value metadata = eval::keyword_arg(a, 2, n, "metadata", &has_metadata);
               if (n > 2 && !has_metadata) {
                 in.error("program-error", "save-gguf: expected :metadata after PATH, got " + in.repr(a[2]));
               }
               save_gguf(in, ctx, a[0], metadata);
               return a[1];
             });
  TL_BUILTIN(in, "gguf-files", 1, 1, "(gguf-files DIR)",
             "The paths of the .gguf files in the directory DIR, sorted; nil when it has none or "
             "is not a directory."
             "\n  (let ((dir \"/tmp/tl-doc-gguf-files/\"))"
             "\n    (ensure-directories-exist dir)"
             "\n    (dolist (f '(\"b.gguf\" \"a.gguf\" \"notes.txt\")) (write-file (concat dir f) \"\"))"
             "\n    (gguf-files dir))  ; => (\"/tmp/tl-doc-gguf-files/a.gguf\" \"/tmp/tl-doc-gguf-files/b.gguf\")"
             "\n  (gguf-files \"/tmp/tl-doc-no-such-folder\")  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               const std::string dir = eval::arg_string(in, "gguf-files", a, 0)->text;
               std::vector<std::string> found;
               std::error_code ec;
               for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
                 if (it->path().extension() == ".gguf" && it->is_regular_file(ec)) found.push_back(it->path().string());
               }
               std::sort(found.begin(), found.end());
               Interp::StackMark mark(in);
               Value* base = in.sp;
               for (const std::string& f : found) in.push(in.make_string(f));
               return in.list_from(base, found.size());
             });
}

// --- idx, csv -----------------------------------------------------------------------------

void register_idx_builtins(Interp& in) {
  TL_BUILTIN(in, "load-idx", 1, 1, "(load-idx PATH)",
             "The tensor in the IDX file PATH (the format of MNIST and Fashion-MNIST; "
             "gzip-compressed files are read as they are): u8 images of shape (n 28 28), labels "
             "of shape (n), ..."
             "\n  (progn (write-file \"/tmp/tl-doc-load-idx\" (map 'string #'code-char '(0 0 8 2 0 0 0 2 0 0 0 3 1 2 "
             "3 4 5 6)))"
             "\n         (to-list (load-idx \"/tmp/tl-doc-load-idx\")))  ; => ((1 2 3) (4 5 6))",
             [](Interp& in, Args a, N) -> Value {
               return make_loaded_tensor(in, io::read_idx(file_ctx(in, "load-idx", a, 0)));
             });
}

// The options of (load-csv PATH &key delimiter header dtype skip), checked.
io::CsvOptions csv_options(Interp& in, Args a, N n) {
  for (N i = 1; i < n; i += 2) {
    static const char* known[] = {"delimiter", "header", "dtype", "skip"};
    bool ok = eval::is_symbol(a[i]) && eval::as_symbol(a[i])->is_keyword() && i + 1 < n;
    if (ok) {
      ok = false;
      for (const char* k : known) ok = ok || eval::as_symbol(a[i])->name == k;
    }
    if (!ok) {
      in.error("type-error",
               "load-csv: expected :delimiter, :header, :dtype or :skip with a value, got " + in.repr(a[i]));
    }
  }
  io::CsvOptions options;
  bool has = false;
  Value d = eval::keyword_arg(a, 1, n, "delimiter", &has);
  if (has) {
    if (!eval::is_string(d) || eval::as_string(d)->text.size() != 1) {
      in.error("type-error", "load-csv: the delimiter must be a one-character string, got " + in.repr(d));
    }
    options.delimiter = eval::as_string(d)->text[0];
  }
  options.header = eval::keyword_arg(a, 1, n, "header").truthy();
  Value dt = eval::keyword_arg(a, 1, n, "dtype", &has);
  if (has) options.dtype = dtype_from_lisp(in, "load-csv", dt);
  Value sk = eval::keyword_arg(a, 1, n, "skip", &has);
  if (has && (!sk.is_int() || sk.i < 0)) {
    in.error("type-error", "load-csv: :skip must be a non-negative integer, got " + in.repr(sk));
  }
  if (has) options.skip = sk.i;
  return options;
}

void register_csv_builtins(Interp& in) {
  TL_BUILTIN(in, "load-csv", 1, 9, "(load-csv PATH &key (delimiter \",\") header (dtype 'f32) (skip 0))",
             "The numbers of the CSV file PATH as a (rows columns) tensor of DTYPE. With :header t the "
             "first line names the columns and the result is (TENSOR . NAMES). Fields may be quoted; "
             "empty fields are nan (float dtypes only); :skip drops that many leading lines; .gz files "
             "are read as they are."
             "\n  (progn (write-file \"/tmp/tl-doc-load-csv.csv\" (format nil \"1,2.5~%3,4.5~%\"))"
             "\n         (to-list (load-csv \"/tmp/tl-doc-load-csv.csv\")))  ; => ((1.0 2.5) (3.0 4.5))"
             "\n  (progn (write-file \"/tmp/tl-doc-load-csv.csv\" (format nil \"x;y~%1;2~%3;~%\"))"
             "\n         (let ((r (load-csv \"/tmp/tl-doc-load-csv.csv\" :header t :delimiter \";\")))"
             "\n           (list (to-list (car r)) (cdr r))))  ; => (((1.0 2.0) (3.0 nan)) (\"x\" \"y\"))",
             [](Interp& in, Args a, N n) -> Value {
               io::FileCtx ctx = file_ctx(in, "load-csv", a, 0);
               const io::CsvOptions options = csv_options(in, a, n);
               io::CsvTable table = io::read_csv(ctx, options);
               Value t = make_loaded_tensor(in, std::move(table.array));
               if (!options.header) return t;
               Interp::StackMark mark(in);
               in.push(t);
               Value* base = in.sp;
               for (const auto& name : table.names) in.push(in.make_string(name));
               Value list = in.list_from(base, table.names.size());
               in.push(list);
               return in.cons(t, list);
             });
}

// --- audio and images ----------------------------------------------------------------------

void register_media_builtins(Interp& in) {
  TL_BUILTIN(in, "load-wav", 1, 1, "(load-wav PATH)",
             "The audio of the WAV file PATH as (SAMPLES SAMPLE-RATE): SAMPLES an f32 tensor (channels frames) "
             "scaled to [-1, 1), as torchaudio.load. Reads PCM of 8, 16, 24 or 32 bits and floats of 32 or 64 "
             "bits (WAVE_FORMAT_EXTENSIBLE too)."
             "\n  (progn (save-wav (tensor '((0.0 0.5 -0.5))) \"/tmp/tl-doc-load-wav.wav\" :sample-rate 8000)"
             "\n         (let ((w (load-wav \"/tmp/tl-doc-load-wav.wav\"))) (list (shape (first w)) (second w))))"
             "  ; => ((1 3) 8000)",
             [](Interp& in, Args a, N) -> Value {
               io::WavAudio audio = io::read_wav(file_ctx(in, "load-wav", a, 0));
               Interp::StackMark mark(in);
               Value* base = in.sp;
               in.push(make_loaded_tensor(in, std::move(audio.samples)));
               in.push(Value::integer(audio.sample_rate));
               return in.list_from(base, 2);
             });
  TL_BUILTIN(in, "%write-wav", 4, 4, "(%write-wav SAMPLES PATH SAMPLE-RATE ENCODING)",
             "Writes SAMPLES, an f32 tensor (channels frames), as a WAV file (ENCODING pcm16 or f32); save-wav "
             "is the Lisp entry.",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* t = tensor_arg(in, "save-wav", a, 0);
               io::FileCtx ctx = file_ctx(in, "save-wav", a, 1);
               const std::int64_t rate = eval::arg_int(in, "save-wav", a, 2);
               const std::string enc = eval::is_symbol(a[3]) ? eval::as_symbol(a[3])->name : "";
               if (enc != "pcm16" && enc != "f32") {
                 in.error("value-error", "save-wav: :encoding must be pcm16 or f32, got " + in.repr(a[3]));
               }
               io::write_wav(ctx, realize_for_save(in, t), rate,
                             enc == "pcm16" ? io::WavEncoding::Pcm16 : io::WavEncoding::Float32);
               return a[1];
             });
  TL_BUILTIN(in, "%write-png", 2, 2, "(%write-png PIXELS PATH)",
             "Writes PIXELS, a u8 tensor (height width [channels]), as a PNG file; save-png is the Lisp entry.",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* t = tensor_arg(in, "save-png", a, 0);
               io::FileCtx ctx = file_ctx(in, "save-png", a, 1);
               io::write_png(ctx, realize_for_save(in, t));
               return a[1];
             });
}

}  // namespace

void register_file_builtins(Interp& in) {
  register_media_builtins(in);
  register_npy_builtins(in);
  register_safetensors_builtins(in);
  register_gguf_builtins(in);
  register_idx_builtins(in);
  register_csv_builtins(in);
}

}  // namespace tl::tensor
