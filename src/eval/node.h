// SPDX-License-Identifier: Apache-2.0
// The compiled form of Lisp code: a tree of nodes with variables resolved to lexical
// addresses (frame depth, slot) or global symbols. The analyzer builds it; eval runs it.
#pragma once

#include <vector>

#include "eval/value.h"

namespace tl::eval {

enum class NodeKind : std::uint8_t {
  Const,
  Local,
  LocalSet,
  Global,
  GlobalSet,
  If,
  Progn,
  Lambda,
  Call,
  Let,
  DynBind,
  And,
  Or,
  While,
  Block,
  ReturnFrom,
  UnwindProtect,
  HandlerCase,
  PrimCall,
  MultipleValueCall,
};

struct Node {
  explicit Node(NodeKind k, Span s) : kind(k), span(s) {}
  virtual ~Node() = default;
  NodeKind kind;
  Span span;
};

struct ConstNode : Node {
  ConstNode(Span s, Value v) : Node(NodeKind::Const, s), value(v) {}
  Value value;
};

struct LocalNode : Node {  // Local and LocalSet
  LocalNode(NodeKind k, Span s, std::uint32_t d, std::uint32_t i, Node* v = nullptr)
      : Node(k, s), depth(d), index(i), value(v) {}
  std::uint32_t depth;
  std::uint32_t index;
  Node* value;  // LocalSet only
  Symbol* name = nullptr;
};

struct GlobalNode : Node {  // Global and GlobalSet
  GlobalNode(NodeKind k, Span s, Symbol* sym, Node* v = nullptr) : Node(k, s), symbol(sym), value(v) {}
  Symbol* symbol;
  Node* value;  // GlobalSet only
};

struct IfNode : Node {
  IfNode(Span s, Node* c, Node* t, Node* e) : Node(NodeKind::If, s), test(c), then(t), otherwise(e) {}
  Node* test;
  Node* then;
  Node* otherwise;
};

struct SeqNode : Node {  // Progn, And, Or
  SeqNode(NodeKind k, Span s) : Node(k, s) {}
  std::vector<Node*> body;
};

struct OptionalParam {
  Node* init = nullptr;  // null: nil
  std::int32_t supplied_slot = -1;
};

struct KeyParam {
  Symbol* keyword;
  Node* init = nullptr;
  std::uint32_t slot = 0;
  std::int32_t supplied_slot = -1;
};

struct LambdaNode : Node {
  LambdaNode(Span s) : Node(NodeKind::Lambda, s) {}
  std::uint32_t required = 0;
  std::vector<OptionalParam> optional;  // slots follow the required ones
  std::int32_t rest_slot = -1;
  std::vector<KeyParam> keys;
  bool has_keys = false;
  bool allow_other_keys = false;
  std::uint32_t frame_size = 0;
  Node* body = nullptr;
  Value name;      // symbol or nil
  Value doc;       // string or nil
  Value arglist;   // the lambda list as written, for describe
  CodeUnit* unit = nullptr;  // the code unit that owns this node
  bool stack_frame = false;  // no closure can capture the frame: it lives on the frame stack
  bool simple() const { return optional.empty() && rest_slot < 0 && !has_keys; }
};

struct CallNode : Node {
  CallNode(Span s) : Node(NodeKind::Call, s) {}
  Node* fn = nullptr;
  std::vector<Node*> args;
};

// (op a b) where op named an arithmetic builtin when the code was compiled. At run time, if
// the symbol still holds that builtin and both arguments are numbers, the evaluator computes
// the result inline; otherwise it runs `call`, the general form of the same call.
struct PrimCallNode : Node {
  PrimCallNode(Span s) : Node(NodeKind::PrimCall, s) {}
  Symbol* symbol = nullptr;  // null: the builtin itself was the head, so it cannot change
  Obj* builtin = nullptr;
  Prim op = Prim::None;
  Node* a = nullptr;
  Node* b = nullptr;
  // a and b are constants, variables, or such calls in turn (at most kMaxPureDepth deep):
  // computing them has no effects, so the evaluator may try it inline and, when a value is
  // not what the inline path takes, run the general call instead (eval.cpp fast_prim).
  bool leaves = false;
  std::uint8_t depth = 1;  // of nested such calls, this one included
  static constexpr std::uint8_t kMaxPureDepth = 8;
  bool unary = false;  // the builtin takes a alone (b is the constant 1: Native::prim_unary)
  CallNode* call = nullptr;
};

// (multiple-value-call FUNCTION FORM...): calls FUNCTION with every value of every FORM.
struct MultipleValueCallNode : Node {
  MultipleValueCallNode(Span s) : Node(NodeKind::MultipleValueCall, s) {}
  Node* fn = nullptr;
  std::vector<Node*> forms;
};

struct LetNode : Node {
  LetNode(Span s) : Node(NodeKind::Let, s) {}
  std::vector<Node*> inits;  // one per slot
  bool sequential = false;   // let*: inits run inside the new frame
  bool stack_frame = false;  // no closure can capture the frame
  std::uint32_t frame_size = 0;  // the inits' slots, plus hidden slots (block tags)
  Node* body = nullptr;
};

struct DynBindNode : Node {  // binds a special variable for the extent of body
  DynBindNode(Span s, Symbol* sym, Node* v, Node* b) : Node(NodeKind::DynBind, s), symbol(sym), value(v), body(b) {}
  Symbol* symbol;
  Node* value;
  Node* body;
};

struct WhileNode : Node {
  WhileNode(Span s, Node* t, Node* b) : Node(NodeKind::While, s), test(t), body(b) {}
  Node* test;
  Node* body;
};

// A block. A return-from in the same function returns to the innermost running evaluation
// of this node. One inside a closure may run in another activation, so the block then keeps a
// unique tag in a frame slot (tag_slot) that the closure captures, and the return-from names it.
struct BlockNode : Node {
  BlockNode(Span s, Symbol* n) : Node(NodeKind::Block, s), name(n) {}
  Symbol* name;
  Node* body = nullptr;
  std::int32_t tag_slot = -1;     // slot in the current frame holding this activation's tag
  std::uint32_t own_frame = 0;    // >0: a top-level block makes its own frame of this size
};

struct ReturnFromNode : Node {
  ReturnFromNode(Span s, const BlockNode* b, Node* v) : Node(NodeKind::ReturnFrom, s), block(b), value(v) {}
  const BlockNode* block;
  Node* value;
  Node* tag = nullptr;  // reads the block's tag when the return-from is inside a closure
  // Reached from its block through statement positions only (Analyzer::clean_floor_): it
  // sets Interp::pending_block and returns instead of throwing ReturnFromSignal.
  bool local = false;
};

struct UnwindProtectNode : Node {
  UnwindProtectNode(Span s, Node* b, Node* c) : Node(NodeKind::UnwindProtect, s), body(b), cleanup(c) {}
  Node* body;
  Node* cleanup;
};

struct HandlerClause {
  std::vector<Symbol*> types;  // condition types this clause handles
  bool has_var = false;        // binds the condition in a frame (slot 0)
  bool stack_frame = false;
  std::uint32_t frame_size = 0;
  Node* body = nullptr;
};

struct HandlerCaseNode : Node {
  HandlerCaseNode(Span s) : Node(NodeKind::HandlerCase, s) {}
  Node* body = nullptr;
  std::vector<HandlerClause> clauses;
  Value types;  // every clause's types as one list, for the handler cluster (a unit constant)
};

// Thrown by return-from; caught by the innermost active evaluation of its block.
struct ReturnFromSignal {
  const BlockNode* block;
  std::int64_t tag;  // 0: the innermost running evaluation of `block`
  Value value;
};

}  // namespace tl::eval
