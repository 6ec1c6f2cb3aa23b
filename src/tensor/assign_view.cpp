// SPDX-License-Identifier: Apache-2.0
// Assigning into a view by writing its base: an assign node that keeps the view, so executors
// write the view's elements in place (Graph::make_assign_view).
#include "tensor/assign_view.h"

#include <algorithm>
#include <vector>

#include "tensor/view.h"

namespace tl::tensor {

namespace {

[[noreturn]] void fail(const char* type, const std::string& msg) { throw GraphError(type, msg); }

bool all_const(const Shape& s) {
  return std::all_of(s.begin(), s.end(), [](const Dim& d) { return d.is_const(); });
}

// With pad or expand in the chain, some view elements may be padding (never stored) or the
// same base element several times: checked element by element on the view's index map.
void check_injective(const NodeRef& view, const Node* base, const std::vector<const Node*>& chain) {
  bool simple = std::none_of(chain.begin(), chain.end(), [](const Node* m) { return m->op == Op::Pad || m->op == Op::Expand; });
  if (simple) return;
  if (!all_const(view->shape) || !all_const(base->shape)) {
    fail("shape-error", "assign: cannot write through a padded or expanded view of symbolic shape " + shape_str(view->shape));
  }
  const Node* b = nullptr;
  ConcreteViewStack vs(view_of(view.get(), &b), {});
  std::int64_t base_count = 1;
  for (const Dim& d : base->shape) base_count *= d.value();
  std::vector<bool> hit(static_cast<std::size_t>(base_count), false);
  std::vector<std::int64_t> idx(view->shape.size(), 0);
  std::int64_t count = 1;
  for (const Dim& d : view->shape) count *= d.value();
  for (std::int64_t k = 0; k < count; ++k) {
    std::int64_t rest = k;
    for (std::size_t i = view->shape.size(); i-- > 0;) {
      idx[i] = rest % view->shape[i].value();
      rest /= view->shape[i].value();
    }
    std::int64_t at = 0;
    if (!vs.index(idx.data(), at)) {
      fail("shape-error", "assign: the view " + shape_str(view->shape) + " has elements that are padding, not stored in its base " +
                              shape_str(base->shape) + "; nothing could hold a value written there");
    }
    if (hit[static_cast<std::size_t>(at)]) {
      fail("shape-error", "assign: the view " + shape_str(view->shape) + " shows element " + std::to_string(at) +
                              " of its base " + shape_str(base->shape) + " more than once (an expand); which value to keep is not defined");
    }
    hit[static_cast<std::size_t>(at)] = true;
  }
}

}  // namespace

bool is_view(const Node* n) { return op_info(n->op).group == OpGroup::Movement; }

NodeRef assign_through_view(Graph& g, const NodeRef& view, const NodeRef& value) {
  std::vector<const Node*> chain;  // the view's movement ops, outermost first
  const Node* n = view.get();
  while (is_view(n)) {
    chain.push_back(n);
    n = n->src[0].get();
  }
  if (n->op != Op::Buffer) {
    fail("type-error", "assign: the target is a view of an unrealized " + std::string(op_info(n->op).name) +
                           " (writes into it would be lost): realize the tensor it views, then assign into the view");
  }
  if (view->shape != value->shape || view->dtype != value->dtype) {
    fail("shape-error", "assign: target view is " + shape_str(view->shape) + " " + std::string(dtype_name(view->dtype)) +
                            ", value is " + shape_str(value->shape) + " " + std::string(dtype_name(value->dtype)));
  }
  check_injective(view, n, chain);
  return g.make_assign_view(NodeRef(const_cast<Node*>(n)), view, value);
}

}  // namespace tl::tensor
