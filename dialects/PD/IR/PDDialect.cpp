//===- PDDialect.cpp - The pd dialect ---------------------------*- C++ -*-===//
//
// Registers the pd ops and attributes, and defines the generated interface
// and attribute code.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDDialect.h"
#include "dialects/PD/IR/PDOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pd;

#include "dialects/PD/IR/PDOpsDialect.cpp.inc"
#include "dialects/PD/IR/PDInterfaces.cpp.inc"

#include "dialects/PD/IR/PDEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/PD/IR/PDAttrs.cpp.inc"

void PDDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/PD/IR/PDOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/PD/IR/PDAttrs.cpp.inc"
      >();
}

/// Folded values become pd.constant ops.
Operation *PDDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense || dense.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, dense);
}

//===----------------------------------------------------------------------===//
// The pass-to-pass contract: discardable pd.* attributes
//===----------------------------------------------------------------------===//

/// Checks the kind of discardable attribute `attr` (any `pd.*` name):
/// it must be declared in PDOps.td and hold its declared attribute kind.
static LogicalResult
verifyContractAttr(function_ref<InFlightDiagnostic()> emitError,
                   NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  Attribute value = attr.getValue();
  auto is = [&](bool ok, StringRef kind) -> LogicalResult {
    if (ok)
      return success();
    return emitError() << "'" << name << "' must be " << kind << ", got "
                       << value;
  };
  using D = PDDialect;
  if (name == D::ModelAttrHelper::getNameStr() ||
      name == D::InputNameAttrHelper::getNameStr())
    return is(isa<StringAttr>(value), "a string");
  if (name == D::OpsetAttrHelper::getNameStr() ||
      name == D::OpIdAttrHelper::getNameStr() ||
      name == D::GradOfAttrHelper::getNameStr() ||
      name == D::StageAttrHelper::getNameStr() ||
      name == D::GradOffsetAttrHelper::getNameStr() ||
      name == D::ProfileIdAttrHelper::getNameStr())
    return is(isa<IntegerAttr>(value) &&
                  cast<IntegerAttr>(value).getValue().isNonNegative(),
              "a non-negative integer");
  if (name == D::NumStagesAttrHelper::getNameStr())
    return is(isa<IntegerAttr>(value) &&
                  cast<IntegerAttr>(value).getValue().isStrictlyPositive(),
              "a positive integer");
  if (name == D::PhaseAttrHelper::getNameStr())
    return is(isa<PhaseAttr>(value), "a #pd.phase");
  if (name == D::ScheduleAttrHelper::getNameStr())
    return is(isa<ScheduleAttr>(value), "a #pd.schedule");
  if (name == D::OptimizerAttrHelper::getNameStr())
    return is(isa<OptimizerAttr>(value), "a #pd.optimizer");
  if (name == D::OwnersAttrHelper::getNameStr())
    return is(isa<DenseI64ArrayAttr>(value), "an array of stages");
  if (name == D::AccumulateAttrHelper::getNameStr() ||
      name == D::RecomputeAttrHelper::getNameStr() ||
      name == D::ViewAttrHelper::getNameStr() ||
      name == D::InPlacePartsAttrHelper::getNameStr())
    return is(isa<UnitAttr>(value), "a unit attribute");
  if (name == D::ConcatPartAttrHelper::getNameStr()) {
    auto part = dyn_cast<DenseI64ArrayAttr>(value);
    return is(part && part.size() == 3 && part[0] >= 0 && part[1] >= 0 &&
                  part[1] < part[2],
              "[axis, index, parts] with index < parts");
  }
  if (name == D::ParamsAttrHelper::getNameStr() ||
      name == D::StateAttrHelper::getNameStr() ||
      name == D::RegionsAttrHelper::getNameStr())
    return is(isa<DictionaryAttr>(value), "a dictionary");
  if (name == D::SecondsAttrHelper::getNameStr())
    return is(isa<FloatAttr>(value) &&
                  !cast<FloatAttr>(value).getValue().isNegative(),
              "a non-negative float");
  if (name == D::BufferAttrHelper::getNameStr())
    return is(isa<BufferAttr>(value), "a #pd.buffer");
  if (name == D::BuffersAttrHelper::getNameStr()) {
    auto all = dyn_cast<ArrayAttr>(value);
    return is(all && llvm::all_of(all,
                                  [](Attribute a) {
                                    return isa<BufferAttr, UnitAttr>(a);
                                  }),
              "an array of #pd.buffer (unit for a result without one)");
  }
  return emitError() << "unknown pd attribute '" << name
                     << "' (the pass contract is declared in PDOps.td)";
}

LogicalResult PDDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attr) {
  return verifyContractAttr([&]() { return op->emitError(); }, attr);
}

LogicalResult PDDialect::verifyRegionArgAttribute(Operation *op,
                                                  unsigned regionIndex,
                                                  unsigned argIndex,
                                                  NamedAttribute attr) {
  return verifyContractAttr([&]() { return op->emitError(); }, attr);
}

/// A buffer lives at a non-negative byte offset of its region (the region
/// is a #pd.region, checked by its parser).
LogicalResult BufferAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArenaRegion region, int64_t offset) {
  if (offset < 0)
    return emitError() << "buffer offset " << offset << " is negative";
  return success();
}
