// SPDX-License-Identifier: Apache-2.0
// The graph side of autograd: which nodes gradients flow through (a flag on each node, part
// of its identity), leaves that accumulate gradients, and the walk backward follows. The
// backward rules and backward itself are Lisp (stdlib/tensor/90-autograd.lisp).
#include <unordered_set>

#include "bindings/tensor_value.h"
#include "eval/builtins.h"

namespace tl::tensor {

using eval::Interp;
using eval::Value;
using Args = Value*;
using N = std::uint32_t;

namespace {

// The nodes gradients flow back to from n: an op's sources, or the graph a realized value
// came from.
std::vector<const Node*> grad_sources(const Node* n) {
  std::vector<const Node*> out;
  if (n->op == Op::Buffer) {
    if (n->origin) out.push_back(n->origin.get());
    return out;
  }
  if (n->custom_grad) {
    for (const auto& s : n->custom_inputs) out.push_back(s.get());
    return out;
  }
  for (const auto& s : n->src) out.push_back(s.get());
  return out;
}

}  // namespace

void register_grad_builtins(Interp& in) {
  TL_BUILTIN(in, "requires-grad!", 1, 2, "(requires-grad! X [FLAG])",
             "Marks tensor X (realized first) as a leaf whose gradient backward accumulates, or unmarks it "
             "when FLAG is nil. Ops built from X afterwards carry gradients; returns X."
             "\n  (let ((x (requires-grad! (tensor '(1.0 2.0))))) (backward (sum (* x x))) (to-list (grad x)))"
             "  ; => (2.0 4.0)"
             "\n  (requires-grad-p (requires-grad! (requires-grad! (tensor '(1.0))) nil))  ; => nil",
             [](Interp& in, Args a, N n) -> Value {
               TensorObj* t = tensor_arg_any(in, "requires-grad!", a, 0);
               const bool on = n < 2 || a[1].truthy();
               if (on && !is_float(t->node->dtype)) {
                 in.error("dtype-error", "requires-grad!: only float and complex tensors have gradients, got " +
                                             std::string(dtype_name(t->node->dtype)));
               }
               realize(in, t);
               NodeRef leaf = t->node;
               if (leaf->origin) {
                 // A computed value becomes a leaf of its own (its graph is forgotten).
                 leaf = runtime(in).graph.make_buffer(leaf->buffer, leaf->shape, leaf->bindings);
               }
               t->node = runtime(in).graph.with_grad(leaf, on);
               return a[0];
             });
  TL_BUILTIN(in, "%fresh-leaf", 1, 1, "(%fresh-leaf X)",
             "X's value (realized) as a new leaf that requires a gradient, distinct from every other node "
             "(so its gradient starts empty).",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* t = tensor_arg_any(in, "%fresh-leaf", a, 0);
               if (!is_float(t->node->dtype))
                 in.error("dtype-error", "value-and-grad: only float tensors have gradients");
               const Buffer& b = realize(in, t);
               (void)b;
               static std::uint64_t counter = 0;
               const Node* n = t->node.get();
               NodeRef leaf = runtime(in).graph.make_buffer(n->buffer, n->shape, n->bindings,
                                                            "leaf " + std::to_string(++counter));
               return make_tensor_like(in, runtime(in).graph.with_grad(leaf, true), t->complex);
             });
  TL_BUILTIN(in, "requires-grad-p", 1, 1, "(requires-grad-p X)",
             "True when gradients flow through tensor X: a leaf marked with requires-grad!, or a value "
             "computed from one while gradients were on."
             "\n  (let ((x (requires-grad! (tensor '(1.0 2.0)))))"
             "\n    (list (requires-grad-p x) (requires-grad-p (* x 2)) (requires-grad-p (detach x))))  ; => (t t nil)"
             "\n  (requires-grad-p (tensor '(1.0)))  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               return in.boolean(tensor_arg_any(in, "requires-grad-p", a, 0)->node->grad);
             });
  TL_BUILTIN(in, "detach", 1, 1, "(detach X)",
             "Tensor X's value without its gradient history: backward does not go through it."
             "\n  (let ((x (requires-grad! (tensor '(1.0 2.0)))))"
             "\n    (backward (sum (* (detach x) x)))"
             "\n    (to-list (grad x)))  ; => (1.0 2.0)"
             "\n  (requires-grad-p (detach (requires-grad! (tensor '(1.0)))))  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* t = tensor_arg_any(in, "detach", a, 0);
               return make_tensor_like(in, graph_at_call(in).make_detached(t->node), t->complex);
             });
  TL_BUILTIN(in, "%set-grad-enabled", 1, 1, "(%set-grad-enabled FLAG)",
             "Turns gradient tracking of new ops on or off; returns the previous setting. Use no-grad.",
             [](Interp& in, Args a, N) -> Value {
               Graph& g = runtime(in).graph;
               const bool old = g.grad_enabled;
               g.grad_enabled = a[0].truthy();
               return in.boolean(old);
             });
  TL_BUILTIN(in, "grad-enabled-p", 0, 0, "(grad-enabled-p)",
             "True unless inside no-grad."
             "\n  (grad-enabled-p)  ; => t"
             "\n  (no-grad (grad-enabled-p))  ; => nil",
             [](Interp& in, Args, N) -> Value { return in.boolean(runtime(in).graph.grad_enabled); });
  TL_BUILTIN(in, "grad", 1, 1, "(grad X)",
             "The gradient backward accumulated for leaf tensor X (marked with requires-grad!), or nil."
             "\n  (let ((x (requires-grad! (tensor '(1.0 2.0))))) (backward (sum (* 3.0 x))) (to-list (grad x)))"
             "  ; => (3.0 3.0)"
             "\n  (grad (tensor '(1.0 2.0)))  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               // A complex leaf's gradient is complex: dL/dX + i dL/dY, the gradients of its parts.
               TensorObj* t = tensor_arg_any(in, "grad", a, 0);
               const NodeRef& g = t->node->grad_value;
               return g ? make_tensor_like(in, g, t->complex) : eval::nil();
             });
  TL_BUILTIN(in, "%set-grad", 2, 2, "(%set-grad X G)", "Sets leaf X's accumulated gradient to G (nil clears it).",
             [](Interp& in, Args a, N) -> Value {
               Node* leaf = tensor_arg_any(in, "%set-grad", a, 0)->node.get();
               // Detached: a gradient that led back to the leaf would be a reference cycle.
               if (a[1].is_nil()) leaf->grad_value = NodeRef();
               else leaf->grad_value = runtime(in).graph.make_detached(tensor_arg_any(in, "%set-grad", a, 1)->node);
               return a[1];
             });
  TL_BUILTIN(in, "%set-custom-grad", 2, 2, "(%set-custom-grad Y INPUTS)",
             "Marks Y's node as having a custom gradient with respect to the tensors INPUTS and returns its "
             "id, under which the Lisp side keeps the rule. Use with-custom-grad.",
             [](Interp& in, Args a, N) -> Value {
               Node* y = const_cast<Node*>(tensor_arg_any(in, "%set-custom-grad", a, 0)->node.get());
               std::vector<NodeRef> inputs;
               for (Value l = a[1]; !l.is_nil(); l = eval::cdr(l)) {
                 Value x = eval::car(l);
                 if (!is_tensor(x)) in.error("type-error", "with-custom-grad: the inputs must be tensors");
                 inputs.push_back(as_tensor(x)->node);
               }
               y->custom_grad = true;
               y->custom_inputs = std::move(inputs);
               return Value::integer(y->id);
             });
  TL_BUILTIN(in, "custom-grad-p", 1, 1, "(custom-grad-p X)",
             "True when X's node has a custom gradient."
             "\n  (custom-grad-p (with-custom-grad ((a (requires-grad! (tensor '(1.0 2.0))))) (* a 3) (g) (list (* g "
             "3))))"
             "  ; => t"
             "\n  (custom-grad-p (* (requires-grad! (tensor '(1.0))) 3))  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               return in.boolean(tensor_arg_any(in, "custom-grad-p", a, 0)->node->custom_grad);
             });
  TL_BUILTIN(in, "%dead-custom-grads", 0, 0, "(%dead-custom-grads)",
             "The ids of nodes with custom gradients that died since the last call.",
             [](Interp& in, Args, N) -> Value {
               auto& dead = runtime(in).graph.dead_custom_grads;
               Interp::StackMark mark(in);
               Value* base = in.sp;
               for (auto id : dead) in.push(Value::integer(id));
               dead.clear();
               return in.list_from(base, static_cast<std::size_t>(in.sp - base));
             });
  TL_BUILTIN(in, "grad-sources", 1, 1, "(grad-sources X)",
             "The tensors gradients flow to from X: its op's sources, or for a realized value the graph "
             "that computed it (nil for a leaf)."
             "\n  (let ((x (requires-grad! (tensor '(1.0 2.0)))))"
             "\n    (mapcar #'node-op (grad-sources (prim:mul x x))))  ; => (buffer buffer)"
             "\n  (let* ((x (requires-grad! (tensor '(1.0 2.0))))"
             "\n         (y (realize (prim:mul x x))))"
             "\n    (mapcar #'node-op (grad-sources y)))  ; => (mul)"
             "\n  (grad-sources (requires-grad! (tensor '(1.0))))  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               Interp::StackMark mark(in);
               Value* base = in.sp;
               for (const Node* s : grad_sources(tensor_arg_any(in, "grad-sources", a, 0)->node.get())) {
                 in.push(make_tensor(in, NodeRef(const_cast<Node*>(s))));
               }
               return in.list_from(base, static_cast<std::size_t>(in.sp - base));
             });
  TL_BUILTIN(in, "grad-order", 1, 1, "(grad-order X)",
             "The nodes gradients flow through from X, each once, sources before users (X last)."
             "\n  (let ((x (requires-grad! (tensor '(1.0 2.0)))))"
             "\n    (mapcar #'node-op (grad-order (prim:neg (prim:mul x x)))))  ; => (buffer mul neg)",
             [](Interp& in, Args a, N) -> Value {
               const Node* root = tensor_arg_any(in, "grad-order", a, 0)->node.get();
               std::vector<const Node*> order;
               if (root->grad) {
                 std::unordered_set<const Node*> seen{root};
                 std::vector<std::pair<const Node*, std::vector<const Node*>>> stack;
                 stack.emplace_back(root, grad_sources(root));
                 while (!stack.empty()) {
                   auto& [n, pending] = stack.back();
                   if (!pending.empty()) {
                     const Node* c = pending.back();
                     pending.pop_back();
                     if (c->grad && seen.insert(c).second) stack.emplace_back(c, grad_sources(c));
                     continue;
                   }
                   order.push_back(n);
                   stack.pop_back();
                 }
               }
               // Like PyTorch's version counter: a node whose source was overwritten in place
               // would differentiate with the new data (issue 19).
               for (const Node* n : order) {
                 if (n->overwritten) {
                   in.error("type-error", std::string("backward: the loss depends on ") + op_name(n->op) + " (built at " +
                                              span_text(in, n->span) + ") of a tensor that an assign then wrote in place (at " +
                                              span_text(in, n->overwritten_at) +
                                              "): compute the loss again after the assign, or run backward before it");
                 }
               }
               Interp::StackMark mark(in);
               Value* base = in.sp;
               for (const Node* n : order) in.push(make_tensor(in, NodeRef(const_cast<Node*>(n))));
               return in.list_from(base, order.size());
             });
  TL_BUILTIN(in, "grad-leaf-p", 1, 1, "(grad-leaf-p X)",
             "True when X is a leaf marked with requires-grad!."
             "\n  (let ((x (requires-grad! (tensor '(1.0 2.0))))) (list (grad-leaf-p x) (grad-leaf-p (* x 2))))"
             "  ; => (t nil)",
             [](Interp& in, Args a, N) -> Value {
               const Node* n = tensor_arg_any(in, "grad-leaf-p", a, 0)->node.get();
               return in.boolean(n->grad && n->op == Op::Buffer && !n->origin);
             });
}

}  // namespace tl::tensor
