//===- ConstantFolding.cpp - Evaluating constant ONNX nodes at import ------===//
//
// A node whose inputs are all compile-time constants (integer and buffer
// initializers, Constant nodes, folded shapes) is evaluated here when its op
// has an evaluator, so the causal and padding masks, position ids and shape
// arithmetic that exporters build from buffers cost nothing at run time.
// Evaluators cover elementwise arithmetic, comparisons and logic, unary
// math, Cast, Where, Min/Max/Sum/Mean, Trilu, GatherElements, GatherND,
// CumSum, Transpose and Expand on f32, f64 (DOUBLE: constants only), i64,
// i32 and bool. Other data-movement ops (Gather, Concat, Slice, Reshape,
// Squeeze, Unsqueeze) fold through their pd ops' folders, and
// Shape, Size, Range and ConstantOfShape build constants in their handlers
// (ONNXOpsShape.cpp).
//
// Elements are held as int64 or double; an f32 result is computed in float
// (or rounded to float after every op), as a float32 kernel would compute it.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include <cmath>

using namespace mlir;
using namespace mlir::pd;
using namespace mlir::pd::detail;

namespace {

/// A constant tensor as the evaluators see it: row-major elements as
/// doubles (f32, f64) or int64 (i64, i32, bool as 0/1).
struct HostTensor {
  SmallVector<int64_t> shape;
  Type elem;
  std::vector<double> floats;
  std::vector<int64_t> ints;

  bool isFloat() const { return isa<FloatType>(elem); }
  bool isDouble() const { return elem.isF64(); }
  bool isBool() const { return elem.isInteger(1); }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  double real(int64_t k) const { return isFloat() ? floats[k] : (double)ints[k]; }
};

HostTensor fromAttr(DenseElementsAttr attr) {
  HostTensor t;
  t.shape.assign(attr.getType().getShape().begin(),
                 attr.getType().getShape().end());
  t.elem = attr.getElementType();
  if (t.isDouble())
    for (double v : attr.getValues<double>())
      t.floats.push_back(v);
  else if (t.isFloat())
    for (float v : attr.getValues<float>())
      t.floats.push_back(v);
  else if (t.isBool())
    for (bool v : attr.getValues<bool>())
      t.ints.push_back(v);
  else
    for (APInt v : attr.getValues<APInt>())
      t.ints.push_back(v.getSExtValue());
  return t;
}

DenseElementsAttr toAttr(const HostTensor &t) {
  auto type = RankedTensorType::get(t.shape, t.elem);
  if (t.isDouble())
    return DenseElementsAttr::get(type, ArrayRef<double>(t.floats));
  if (t.isFloat()) {
    SmallVector<float> v(t.floats.begin(), t.floats.end());
    return DenseElementsAttr::get(type, ArrayRef<float>(v));
  }
  if (t.isBool()) {
    SmallVector<bool> v;
    for (int64_t x : t.ints)
      v.push_back(x != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(v));
  }
  if (t.elem.isInteger(32)) {
    SmallVector<int32_t> v(t.ints.begin(), t.ints.end());
    return DenseElementsAttr::get(type, ArrayRef<int32_t>(v));
  }
  return DenseElementsAttr::get(type, ArrayRef<int64_t>(t.ints));
}

/// An empty tensor of `shape` and `elem`, its elements zero.
HostTensor makeTensor(ArrayRef<int64_t> shape, Type elem) {
  HostTensor t;
  t.shape.assign(shape.begin(), shape.end());
  t.elem = elem;
  if (t.isFloat())
    t.floats.assign(t.numel(), 0.0);
  else
    t.ints.assign(t.numel(), 0);
  return t;
}

/// `v` rounded to the float element type of `t` (f32 or f64).
double roundTo(const HostTensor &t, double v) {
  return t.isDouble() ? v : (double)(float)v;
}

/// Stores `v` at `k`, rounded to the tensor's element type.
void store(HostTensor &t, int64_t k, double v) {
  if (t.isFloat())
    t.floats[k] = roundTo(t, v);
  else if (t.isBool())
    t.ints[k] = v != 0.0;
  else if (t.elem.isInteger(32))
    t.ints[k] = (int32_t)(int64_t)v;
  else
    t.ints[k] = (int64_t)v;
}

/// Row-major strides of `in` broadcast to `out` (0 on broadcast axes).
SmallVector<int64_t> broadcastStrides(ArrayRef<int64_t> in,
                                      ArrayRef<int64_t> out) {
  SmallVector<int64_t> strides(out.size(), 0);
  int64_t stride = 1, lead = out.size() - in.size();
  for (int64_t d = (int64_t)in.size() - 1; d >= 0; --d) {
    strides[lead + d] = in[d] == 1 ? 0 : stride;
    stride *= in[d];
  }
  return strides;
}

/// Calls fn(output index, offsets into each input) for every element of the
/// numpy broadcast of `inputs` to `shape`.
template <typename Fn>
void forEachBroadcast(ArrayRef<int64_t> shape, ArrayRef<HostTensor> inputs,
                      Fn fn) {
  SmallVector<SmallVector<int64_t>> strides;
  for (const HostTensor &in : inputs)
    strides.push_back(broadcastStrides(in.shape, shape));
  int64_t numel = 1;
  for (int64_t d : shape)
    numel *= d;
  SmallVector<int64_t> coord(shape.size(), 0), offsets(inputs.size(), 0);
  for (int64_t k = 0; k < numel; ++k) {
    fn(k, ArrayRef<int64_t>(offsets));
    for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
      for (unsigned i = 0; i < inputs.size(); ++i)
        offsets[i] += strides[i][d];
      if (++coord[d] < shape[d])
        break;
      for (unsigned i = 0; i < inputs.size(); ++i)
        offsets[i] -= strides[i][d] * shape[d];
      coord[d] = 0;
    }
  }
}

/// The evaluation of one node: failure means a diagnostic was emitted;
/// success with no value leaves the node to its handler.
using EvalResult = FailureOr<std::optional<HostTensor>>;
using EvalFn = EvalResult (*)(NodeBinder &b, ArrayRef<HostTensor> in);

std::optional<HostTensor> notFolded() { return std::nullopt; }

/// The broadcast shape of all inputs; nullopt when they do not broadcast
/// (the handler reports it).
std::optional<SmallVector<int64_t>> broadcastAll(ArrayRef<HostTensor> in) {
  SmallVector<int64_t> shape;
  for (const HostTensor &t : in) {
    auto next = broadcastShapes(shape, t.shape);
    if (failed(next))
      return std::nullopt;
    shape = *next;
  }
  return shape;
}

bool sameElementType(ArrayRef<HostTensor> in) {
  return llvm::all_of(in, [&](const HostTensor &t) { return t.elem == in[0].elem; });
}

//===----------------------------------------------------------------------===//
// Elementwise evaluators
//===----------------------------------------------------------------------===//

/// Integer arithmetic of `op`; fails on division by zero.
FailureOr<int64_t> intArith(StringRef op, int64_t a, int64_t b) {
  if (op == "Add")
    return a + b;
  if (op == "Sub")
    return a - b;
  if (op == "Mul")
    return a * b;
  if (op == "Pow") {
    int64_t r = 1;
    for (int64_t i = 0; i < b; ++i)
      r *= a;
    return r;
  }
  if (b == 0)
    return failure();
  if (op == "Div")
    return a / b; // ONNX integer Div truncates, as onnxruntime does.
  int64_t r = a % b; // Mod with fmod=0 takes the divisor's sign.
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/// Float arithmetic of `op` in T (float for f32, double for f64).
template <typename T>
T floatArith(StringRef op, T x, T y, bool fmodMode) {
  if (op == "Add")
    return x + y;
  if (op == "Sub")
    return x - y;
  if (op == "Mul")
    return x * y;
  if (op == "Div")
    return x / y;
  if (op == "Pow")
    return std::pow(x, y);
  T r = std::fmod(x, y);
  return (!fmodMode && r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}

/// Add, Sub, Mul, Div, Pow, Mod with numpy broadcasting.
EvalResult evalArith(NodeBinder &b, ArrayRef<HostTensor> in) {
  StringRef op = b.opType();
  if (in.size() != 2 || in[0].isBool() || (op != "Pow" && !sameElementType(in)))
    return notFolded();
  auto shape = broadcastAll(in);
  if (!shape)
    return notFolded();
  int64_t fmodMode = 0;
  if (op == "Mod" && b.attr(fmodMode, "fmod", 0))
    return failure();
  HostTensor out = makeTensor(*shape, in[0].elem);
  bool divByZero = false;
  forEachBroadcast(*shape, in, [&](int64_t k, ArrayRef<int64_t> at) {
    if (out.isFloat()) {
      double x = in[0].floats[at[0]], y = in[1].real(at[1]);
      out.floats[k] = out.isDouble()
                          ? floatArith<double>(op, x, y, fmodMode)
                          : floatArith<float>(op, x, y, fmodMode);
      return;
    }
    int64_t rhs = in[1].isFloat() ? (int64_t)in[1].floats[at[1]] : in[1].ints[at[1]];
    FailureOr<int64_t> r = intArith(op, in[0].ints[at[0]], rhs);
    divByZero |= failed(r);
    int64_t v = succeeded(r) ? *r : 0;
    out.ints[k] = out.elem.isInteger(32) ? (int32_t)v : v;
  });
  if (divByZero)
    return b.emitError() << "integer division by zero in a constant "
                            "computation";
  return std::optional<HostTensor>(std::move(out));
}

/// Equal, Less, LessOrEqual, Greater, GreaterOrEqual, And, Or, Xor: bool
/// results with numpy broadcasting.
EvalResult evalCompare(NodeBinder &b, ArrayRef<HostTensor> in) {
  StringRef op = b.opType();
  bool logic = op == "And" || op == "Or" || op == "Xor";
  if (in.size() != 2 || !sameElementType(in) || logic != in[0].isBool())
    return notFolded();
  auto shape = broadcastAll(in);
  if (!shape)
    return notFolded();
  HostTensor out = makeTensor(*shape, b.builder().getI1Type());
  forEachBroadcast(*shape, in, [&](int64_t k, ArrayRef<int64_t> at) {
    bool r;
    if (in[0].isFloat()) {
      double x = in[0].floats[at[0]], y = in[1].floats[at[1]];
      r = op == "Equal" ? x == y : op == "Less" ? x < y
          : op == "LessOrEqual" ? x <= y : op == "Greater" ? x > y : x >= y;
    } else {
      int64_t x = in[0].ints[at[0]], y = in[1].ints[at[1]];
      r = op == "Equal" ? x == y : op == "Less" ? x < y
          : op == "LessOrEqual" ? x <= y : op == "Greater" ? x > y
          : op == "GreaterOrEqual" ? x >= y : op == "And" ? (x && y)
          : op == "Or" ? (x || y) : ((x != 0) != (y != 0));
    }
    out.ints[k] = r;
  });
  return std::optional<HostTensor>(std::move(out));
}

/// Min, Max, Sum, Mean over one or more inputs with numpy broadcasting.
EvalResult evalVariadic(NodeBinder &b, ArrayRef<HostTensor> in) {
  StringRef op = b.opType();
  if (in.empty() || !sameElementType(in) || in[0].isBool() ||
      (op == "Mean" && !in[0].isFloat()))
    return notFolded();
  auto shape = broadcastAll(in);
  if (!shape)
    return notFolded();
  HostTensor out = makeTensor(*shape, in[0].elem);
  forEachBroadcast(*shape, in, [&](int64_t k, ArrayRef<int64_t> at) {
    if (out.isFloat()) {
      double acc = in[0].floats[at[0]];
      for (unsigned i = 1; i < in.size(); ++i) {
        double v = in[i].floats[at[i]];
        acc = std::isnan(acc) || std::isnan(v) ? NAN
              : op == "Min" ? std::min(acc, v) : op == "Max" ? std::max(acc, v)
              : roundTo(out, acc + v);
      }
      out.floats[k] = op == "Mean" ? roundTo(out, acc / in.size()) : acc;
      return;
    }
    int64_t acc = in[0].ints[at[0]];
    for (unsigned i = 1; i < in.size(); ++i) {
      int64_t v = in[i].ints[at[i]];
      acc = op == "Min" ? std::min(acc, v) : op == "Max" ? std::max(acc, v)
                                                         : acc + v;
    }
    out.ints[k] = acc;
  });
  return std::optional<HostTensor>(std::move(out));
}

/// The unary float ops in T (float for f32, double for f64).
template <typename T>
const llvm::StringMap<T (*)(T)> &unaryFloatFns() {
  static const llvm::StringMap<T (*)(T)> kFns = {
      {"Sqrt", [](T v) { return std::sqrt(v); }},
      {"Exp", [](T v) { return std::exp(v); }},
      {"Log", [](T v) { return std::log(v); }},
      {"Cos", [](T v) { return std::cos(v); }},
      {"Sin", [](T v) { return std::sin(v); }},
      {"Tanh", [](T v) { return std::tanh(v); }},
      {"Erf", [](T v) { return std::erf(v); }},
      {"Floor", [](T v) { return std::floor(v); }},
      {"Ceil", [](T v) { return std::ceil(v); }},
      {"Round", [](T v) { return std::nearbyint(v); }},
      {"Reciprocal", [](T v) { return T(1) / v; }},
      {"Sigmoid", [](T v) { return T(1) / (T(1) + std::exp(-v)); }},
      {"Relu", [](T v) { return v > T(0) ? v : T(0); }},
  };
  return kFns;
}

/// One element of a unary float op computed in the element type;
/// nullopt for an op it does not know.
std::optional<double> unaryFloat(StringRef op, double x, bool isDouble) {
  if (isDouble) {
    auto it = unaryFloatFns<double>().find(op);
    if (it == unaryFloatFns<double>().end())
      return std::nullopt;
    return it->second(x);
  }
  auto it = unaryFloatFns<float>().find(op);
  if (it == unaryFloatFns<float>().end())
    return std::nullopt;
  return it->second((float)x);
}

/// Neg, Abs, Sign (numbers), Not (bool), IsNaN, IsInf (f32 to bool) and the
/// float math of unaryFloat.
EvalResult evalUnary(NodeBinder &b, ArrayRef<HostTensor> in) {
  StringRef op = b.opType();
  if (in.size() != 1)
    return notFolded();
  const HostTensor &x = in[0];
  bool toBool = op == "IsNaN" || op == "IsInf";
  if ((op == "Not") != x.isBool() || (toBool && !x.isFloat()))
    return notFolded();
  int64_t positive = 1, negative = 1;
  if (op == "IsInf" && (b.attr(positive, "detect_positive", 1) ||
                        b.attr(negative, "detect_negative", 1)))
    return failure();
  HostTensor out = makeTensor(x.shape, toBool ? b.builder().getI1Type() : x.elem);
  for (int64_t k = 0; k < x.numel(); ++k) {
    if (op == "Not") {
      out.ints[k] = !x.ints[k];
    } else if (!x.isFloat()) {
      int64_t v = x.ints[k];
      if (op != "Neg" && op != "Abs" && op != "Sign")
        return notFolded();
      out.ints[k] = op == "Neg" ? -v : op == "Abs" ? std::abs(v) : (v > 0) - (v < 0);
    } else if (toBool) {
      double v = x.floats[k];
      out.ints[k] = op == "IsNaN" ? std::isnan(v)
                                  : std::isinf(v) && (v > 0 ? positive : negative);
    } else if (op == "Neg" || op == "Abs" || op == "Sign") {
      double v = x.floats[k];
      out.floats[k] = op == "Neg" ? -v : op == "Abs" ? std::fabs(v)
                                                     : (double)((v > 0) - (v < 0));
    } else {
      std::optional<double> v = unaryFloat(op, x.floats[k], x.isDouble());
      if (!v)
        return notFolded();
      out.floats[k] = *v;
    }
  }
  return std::optional<HostTensor>(std::move(out));
}

/// Where (9, 16) with numpy broadcasting of all three inputs.
EvalResult evalWhere(NodeBinder &b, ArrayRef<HostTensor> in) {
  if (in.size() != 3 || !in[0].isBool() || in[1].elem != in[2].elem)
    return notFolded();
  auto shape = broadcastAll(in);
  if (!shape)
    return notFolded();
  HostTensor out = makeTensor(*shape, in[1].elem);
  forEachBroadcast(*shape, in, [&](int64_t k, ArrayRef<int64_t> at) {
    const HostTensor &src = in[0].ints[at[0]] ? in[1] : in[2];
    int64_t from = in[0].ints[at[0]] ? at[1] : at[2];
    if (out.isFloat())
      out.floats[k] = src.floats[from];
    else
      out.ints[k] = src.ints[from];
  });
  return std::optional<HostTensor>(std::move(out));
}

/// `x` converted to `elem` with ONNX Cast semantics (float to integer
/// truncates, anything to bool is != 0).
HostTensor castTo(const HostTensor &x, Type elem) {
  HostTensor out = makeTensor(x.shape, elem);
  for (int64_t k = 0; k < x.numel(); ++k) {
    if (x.isFloat())
      store(out, k, out.isFloat() || out.isBool() ? x.floats[k]
                                                  : std::trunc(x.floats[k]));
    else if (out.isFloat())
      out.floats[k] = roundTo(out, (double)x.ints[k]);
    else if (out.isBool())
      out.ints[k] = x.ints[k] != 0;
    else
      out.ints[k] = out.elem.isInteger(32) ? (int32_t)x.ints[k] : x.ints[k];
  }
  return out;
}

/// Cast (`to`: FLOAT, INT64, INT32, BOOL) and CastLike (input 1's type).
EvalResult evalCast(NodeBinder &b, ArrayRef<HostTensor> in) {
  Type to;
  if (b.opType() == "CastLike") {
    if (in.size() != 2)
      return notFolded();
    to = in[1].elem;
  } else {
    int64_t code;
    if (b.attr(code, "to", 0))
      return failure();
    to = convertConstantElementType(code, b.context());
  }
  if (in.empty() || !to)
    return notFolded();
  return std::optional<HostTensor>(castTo(in[0], to));
}

//===----------------------------------------------------------------------===//
// Structured evaluators
//===----------------------------------------------------------------------===//

/// Trilu (14): keeps the upper (upper=1) or lower triangle of the last two
/// axes relative to diagonal k (input 1, default 0); zeroes the rest.
EvalResult evalTrilu(NodeBinder &b, ArrayRef<HostTensor> in) {
  int64_t upper;
  if (in.empty() || in.size() > 2 || b.attr(upper, "upper", 1))
    return in.empty() ? EvalResult(notFolded()) : EvalResult(failure());
  const HostTensor &x = in[0];
  if (x.shape.size() < 2)
    return b.emitError() << "input '" << b.inputName(0)
                         << "' must have rank >= 2";
  int64_t k = in.size() == 2 && in[1].numel() == 1 ? (int64_t)in[1].real(0) : 0;
  int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
  HostTensor out = x;
  for (int64_t e = 0; e < x.numel(); ++e) {
    int64_t j = e % cols, i = (e / cols) % rows;
    bool keep = upper ? j - i >= k : j - i <= k;
    if (keep)
      continue;
    if (out.isFloat())
      out.floats[e] = 0.0;
    else
      out.ints[e] = 0;
  }
  return std::optional<HostTensor>(std::move(out));
}

/// GatherElements (11, 13): out has the indices' shape; along `axis` each
/// element reads data at its index (negative counts from the end).
EvalResult evalGatherElements(NodeBinder &b, ArrayRef<HostTensor> in) {
  if (in.size() != 2 || in[1].isFloat() || in[1].isBool())
    return notFolded();
  const HostTensor &data = in[0], &idx = in[1];
  int64_t rank = data.shape.size(), axis;
  if (b.attr(axis, "axis", 0))
    return failure();
  auto axes = b.normalizeAxes({axis}, rank);
  if (failed(axes))
    return failure();
  axis = (*axes)[0];
  if ((int64_t)idx.shape.size() != rank)
    return notFolded(); // The handler reports the rank mismatch.
  SmallVector<int64_t> dataStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    dataStrides[d] = dataStrides[d + 1] * data.shape[d + 1];
  HostTensor out = makeTensor(idx.shape, data.elem);
  for (int64_t e = 0; e < idx.numel(); ++e) {
    int64_t rest = e, offset = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t c = rest % idx.shape[d];
      rest /= idx.shape[d];
      if (d == axis) {
        c = idx.ints[e] < 0 ? idx.ints[e] + data.shape[d] : idx.ints[e];
        if (c < 0 || c >= data.shape[d])
          return b.emitError() << "index " << idx.ints[e] << " at position "
                               << e << " is out of range for axis " << axis
                               << " of size " << data.shape[d];
      } else if (c >= data.shape[d]) {
        return notFolded();
      }
      offset += c * dataStrides[d];
    }
    if (out.isFloat())
      out.floats[e] = data.floats[offset];
    else
      out.ints[e] = data.ints[offset];
  }
  return std::optional<HostTensor>(std::move(out));
}

/// Expand (8, 13): the input broadcast with the constant shape (numpy rules
/// in both directions).
EvalResult evalExpand(NodeBinder &b, ArrayRef<HostTensor> in) {
  if (in.size() != 2 || in[1].isFloat() || in[1].isBool())
    return notFolded();
  HostTensor target;
  target.shape.assign(in[1].ints.begin(), in[1].ints.end());
  auto shape = broadcastAll({in[0], target});
  if (!shape)
    return notFolded();
  HostTensor out = makeTensor(*shape, in[0].elem);
  forEachBroadcast(*shape, in.take_front(), [&](int64_t k, ArrayRef<int64_t> at) {
    if (out.isFloat())
      out.floats[k] = in[0].floats[at[0]];
    else
      out.ints[k] = in[0].ints[at[0]];
  });
  return std::optional<HostTensor>(std::move(out));
}

/// CumSum (11, 14): running sums along the constant axis (input 1),
/// `exclusive` leaving out the element itself, `reverse` running backwards.
EvalResult evalCumSum(NodeBinder &b, ArrayRef<HostTensor> in) {
  if (in.size() != 2 || in[0].isBool() || in[1].isFloat() ||
      in[1].numel() != 1)
    return notFolded();
  const HostTensor &x = in[0];
  int64_t exclusive, reverse, rank = x.shape.size();
  if (b.attr(exclusive, "exclusive", 0) || b.attr(reverse, "reverse", 0))
    return failure();
  auto axes = b.normalizeAxes({in[1].ints[0]}, std::max<int64_t>(rank, 1));
  if (failed(axes))
    return failure();
  int64_t axis = (*axes)[0], len = rank ? x.shape[axis] : 1, inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= x.shape[d];
  HostTensor out = makeTensor(x.shape, x.elem);
  int64_t outer = len ? x.numel() / (len * inner) : 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double facc = 0.0;
      int64_t iacc = 0;
      auto put = [&](int64_t k) {
        if (out.isFloat())
          out.floats[k] = facc;
        else
          out.ints[k] = iacc;
      };
      for (int64_t j = 0; j < len; ++j) {
        int64_t k = (o * len + (reverse ? len - 1 - j : j)) * inner + i;
        if (exclusive)
          put(k);
        if (x.isFloat())
          facc = roundTo(out, facc + x.floats[k]);
        else
          iacc += x.ints[k];
        if (!exclusive)
          put(k);
      }
    }
  if (out.elem.isInteger(32))
    for (int64_t &v : out.ints)
      v = (int32_t)v;
  return std::optional<HostTensor>(std::move(out));
}

/// GatherND (11, 12, 13): index tuples of length q = indices.shape[-1]
/// address data after its first `batch_dims` axes; each tuple reads the
/// slice of data's remaining axes (negative indices count from the end).
EvalResult evalGatherND(NodeBinder &b, ArrayRef<HostTensor> in) {
  if (in.size() != 2 || in[1].isFloat() || in[1].isBool())
    return notFolded();
  const HostTensor &data = in[0], &idx = in[1];
  int64_t batchDims, r = data.shape.size(), q = idx.shape.size();
  if (b.attr(batchDims, "batch_dims", 0))
    return failure();
  if (q < 1 || batchDims < 0 || batchDims >= std::min(r, q) ||
      idx.shape.back() < 1 || idx.shape.back() > r - batchDims ||
      !llvm::equal(ArrayRef<int64_t>(data.shape).take_front(batchDims),
                   ArrayRef<int64_t>(idx.shape).take_front(batchDims)))
    return b.emitError() << "indices of shape " << shapeString(idx.shape)
                         << " do not address data of shape "
                         << shapeString(data.shape) << " with batch_dims "
                         << batchDims;
  int64_t tuple = idx.shape.back(), batch = 1, slice = 1;
  for (int64_t d = 0; d < batchDims; ++d)
    batch *= data.shape[d];
  for (int64_t d = batchDims + tuple; d < r; ++d)
    slice *= data.shape[d];
  SmallVector<int64_t> shape(idx.shape.begin(), idx.shape.end() - 1);
  shape.append(data.shape.begin() + batchDims + tuple, data.shape.end());
  HostTensor out = makeTensor(shape, data.elem);
  int64_t perBatch = batch ? idx.numel() / tuple / batch : 0;
  int64_t dataPerBatch = batch ? data.numel() / batch : 0;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t t = 0; t < perBatch; ++t) {
      int64_t offset = 0;
      for (int64_t j = 0; j < tuple; ++j) {
        int64_t dim = data.shape[batchDims + j];
        int64_t v = idx.ints[(n * perBatch + t) * tuple + j];
        if (v < -dim || v >= dim)
          return b.emitError() << "index " << v << " is out of range for "
                               << "axis " << batchDims + j << " of size "
                               << dim;
        offset = offset * dim + (v < 0 ? v + dim : v);
      }
      for (int64_t e = 0; e < slice; ++e) {
        int64_t from = n * dataPerBatch + offset * slice + e;
        int64_t to = (n * perBatch + t) * slice + e;
        if (out.isFloat())
          out.floats[to] = data.floats[from];
        else
          out.ints[to] = data.ints[from];
      }
    }
  return std::optional<HostTensor>(std::move(out));
}

/// Transpose (1, 13) by `perm` (default: reversed axes); a bad perm is left
/// to the handler to report.
EvalResult evalTranspose(NodeBinder &b, ArrayRef<HostTensor> in) {
  if (in.size() != 1)
    return notFolded();
  const HostTensor &x = in[0];
  int64_t rank = x.shape.size();
  SmallVector<int64_t> perm;
  if (b.attr(perm, "perm"))
    return failure();
  if (perm.empty())
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  SmallVector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if ((int64_t)perm.size() != rank || p < 0 || p >= rank || seen[p])
      return notFolded();
    seen[p] = true;
  }
  SmallVector<int64_t> shape, inStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * x.shape[d + 1];
  for (int64_t p : perm)
    shape.push_back(x.shape[p]);
  HostTensor out = makeTensor(shape, x.elem);
  for (int64_t k = 0; k < out.numel(); ++k) {
    int64_t rest = k, from = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      from += (rest % shape[d]) * inStrides[perm[d]];
      rest /= shape[d];
    }
    if (out.isFloat())
      out.floats[k] = x.floats[from];
    else
      out.ints[k] = x.ints[from];
  }
  return std::optional<HostTensor>(std::move(out));
}

const llvm::StringMap<EvalFn> &evaluators() {
  static const llvm::StringMap<EvalFn> kEvaluators = [] {
    llvm::StringMap<EvalFn> m;
    for (StringRef op : {"Add", "Sub", "Mul", "Div", "Pow", "Mod"})
      m[op] = evalArith;
    for (StringRef op : {"Equal", "Less", "LessOrEqual", "Greater",
                         "GreaterOrEqual", "And", "Or", "Xor"})
      m[op] = evalCompare;
    for (StringRef op : {"Min", "Max", "Sum", "Mean"})
      m[op] = evalVariadic;
    for (StringRef op : {"Neg", "Abs", "Sign", "Not", "IsNaN", "IsInf", "Sqrt",
                         "Exp", "Log", "Cos", "Sin", "Tanh", "Erf", "Floor",
                         "Ceil", "Round", "Reciprocal", "Sigmoid", "Relu"})
      m[op] = evalUnary;
    m["Where"] = evalWhere;
    m["Cast"] = evalCast;
    m["CastLike"] = evalCast;
    m["Trilu"] = evalTrilu;
    m["GatherElements"] = evalGatherElements;
    m["Expand"] = evalExpand;
    m["CumSum"] = evalCumSum;
    m["GatherND"] = evalGatherND;
    m["Transpose"] = evalTranspose;
    return m;
  }();
  return kEvaluators;
}

} // namespace

std::optional<LogicalResult> mlir::pd::detail::foldConstantNode(NodeBinder &b) {
  auto it = evaluators().find(b.opType());
  if (it == evaluators().end() || b.numOutputs() != 1 || b.numInputs() == 0)
    return std::nullopt;
  // Every input must be constant before any is read (a large constant mask
  // feeding a run-time Where is not converted for each use).
  SmallVector<DenseElementsAttr> constants;
  for (unsigned i = 0; i < b.numInputs(); ++i) {
    if (!b.hasInput(i)) {
      if (i + 1 == b.numInputs())
        break; // A trailing optional input that is absent.
      return std::nullopt;
    }
    FailureOr<DenseElementsAttr> c = b.constantInput(i);
    if (failed(c))
      return failure();
    if (!*c)
      return std::nullopt;
    constants.push_back(*c);
  }
  SmallVector<HostTensor> inputs;
  for (DenseElementsAttr c : constants)
    inputs.push_back(fromAttr(c));
  EvalResult result = it->second(b, inputs);
  if (failed(result))
    return failure();
  if (!*result)
    return std::nullopt;
  Value cst = b.builder().create<ConstantOp>(b.loc(), toAttr(**result));
  return b.setResult(0, cst);
}
